/*
 * select.c - PIANO_FNS pattern matcher (see select.h for the language).
 *
 * Compiled into PianoPass.so and into test/unit/test_select (cmocka):
 *   ctest -R test_select
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_SUB, K_EXACT, K_FILE, K_ALL };

struct pattern {
    enum kind kind;
    int exclude;
    char *text; /* the name / substring / file suffix (NULL for K_ALL) */
};

struct piano_select {
    struct pattern *pats;
    size_t n;
    size_t n_includes;
};

#define EXPECTED "expected NAME, =NAME, file:SUFFIX, * or !PATTERN, comma-separated"

/* Copy [s, s+len) into buf for an error message, escaping control bytes. */
static void quote_item(char *buf, size_t buflen, const char *s, size_t len)
{
    size_t o = 0;
    if (buflen == 0)
        return;
    for (size_t i = 0; i < len && o + 5 < buflen; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(buf + o, buflen - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = '\0';
}

/* Error sink: where the message goes, and the whole PIANO_FNS value (quoted
 * in messages when it has several items). */
struct errbuf {
    char *buf;
    size_t len;
    const char *spec;
};

static int fail(const struct errbuf *eb, const char *item, size_t len,
                const char *why)
{
    const char *cur_spec = eb->spec;
    char *err = eb->buf;
    size_t errlen = eb->len;
    char q[256], whole[320] = "";
    quote_item(q, sizeof q, item, len);
    if (cur_spec && strlen(cur_spec) != len) {
        char w[256];
        quote_item(w, sizeof w, cur_spec, strlen(cur_spec));
        snprintf(whole, sizeof whole, " in '%s'", w);
    }
    if (err && errlen)
        snprintf(err, errlen, "PIANO_FNS: malformed pattern '%s'%s (%s)", q,
                 whole, why);
    return -1;
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

/* Parse one item [s, s+len) into *p. */
static int parse_item(const char *s, size_t len, struct pattern *p,
                      const struct errbuf *eb)
{
    const char *item = s;
    size_t item_len = len;

    if (len == 0)
        return fail(eb, item, item_len, "empty item; " EXPECTED);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (is_space(c))
            return fail(eb, item, item_len,
                        "whitespace is not allowed; " EXPECTED);
        if (c < 0x20 || c == 0x7f)
            return fail(eb, item, item_len,
                        "control character; " EXPECTED);
    }

    p->exclude = 0;
    if (s[0] == '!') {
        p->exclude = 1;
        s++;
        len--;
        if (len == 0)
            return fail(eb, item, item_len,
                        "expected a pattern after '!'");
        if (s[0] == '!')
            return fail(eb, item, item_len,
                        "'!' may appear only once");
    }

    if (len == 1 && s[0] == '*') {
        p->kind = K_ALL;
        p->text = NULL;
        return 0;
    }
    if (s[0] == '=') {
        s++;
        len--;
        if (len == 0)
            return fail(eb, item, item_len,
                        "expected a name after '='");
        p->kind = K_EXACT;
    } else if (len >= 5 && memcmp(s, "file:", 5) == 0) {
        s += 5;
        len -= 5;
        if (len == 0)
            return fail(eb, item, item_len,
                        "expected a file name after 'file:'");
        p->kind = K_FILE;
    } else {
        p->kind = K_SUB;
    }
    p->text = malloc(len + 1);
    if (!p->text) {
        if (eb->buf && eb->len)
            snprintf(eb->buf, eb->len, "PIANO_FNS: out of memory");
        return -1;
    }
    memcpy(p->text, s, len);
    p->text[len] = '\0';
    return 0;
}

int piano_select_parse(const char *spec, struct piano_select **out, char *err,
                       size_t errlen)
{
    struct piano_select *sel;
    size_t cap = 1;

    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    sel = calloc(1, sizeof *sel);
    if (!sel)
        return -1;
    if (!spec || !*spec) {
        *out = sel;
        return 0;
    }
    for (const char *c = spec; *c; c++)
        if (*c == ',')
            cap++;
    sel->pats = calloc(cap, sizeof *sel->pats);
    if (!sel->pats) {
        free(sel);
        return -1;
    }
    const char *s = spec;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        struct pattern *p = &sel->pats[sel->n];
        struct errbuf eb = {err, errlen, spec};
        if (parse_item(s, len, p, &eb) != 0) {
            piano_select_free(sel);
            return -1;
        }
        sel->n++;
        if (!p->exclude)
            sel->n_includes++;
        if (!e)
            break;
        s = e + 1;
    }
    *out = sel;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

static int pattern_matches(const struct pattern *p, const char *name,
                           const char *file)
{
    switch (p->kind) {
    case K_ALL:
        return 1;
    case K_EXACT:
        return strcmp(name, p->text) == 0;
    case K_FILE:
        return ends_with(file, p->text);
    case K_SUB:
        return strstr(name, p->text) != NULL;
    }
    return 0;
}

enum piano_sel_result piano_select_match(const struct piano_select *sel,
                                         const char *name, const char *file)
{
    int included = 0;
    if (!name)
        name = "";
    if (!file)
        file = "";
    for (size_t i = 0; i < sel->n; i++) {
        const struct pattern *p = &sel->pats[i];
        if (!pattern_matches(p, name, file))
            continue;
        if (p->exclude)
            return PIANO_SEL_NO;
        included = 1;
    }
    if (sel->n_includes == 0)
        return PIANO_SEL_DEFAULT;
    return included ? PIANO_SEL_YES : PIANO_SEL_NO;
}

int piano_select_is_default(const struct piano_select *sel)
{
    return sel->n_includes == 0;
}

void piano_select_free(struct piano_select *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        free(sel->pats[i].text);
    free(sel->pats);
    free(sel);
}
