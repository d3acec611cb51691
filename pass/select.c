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

enum kind { K_SUB, K_GLOB, K_EXACT, K_FILE, K_ALL };

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

#define EXPECTED "expected NAME, =NAME, file:SUFFIX, file:FOLDER/, * or !PATTERN, comma-separated"

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
    const char *var;   /* the variable named in messages: PIANO_FNS, PIANO_FRAME */
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
        snprintf(err, errlen, "%s: malformed pattern '%s'%s (%s)", eb->var, q,
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
        /* ngx_http_*: a '*' in a name pattern stands for any characters,
         * but in an operator's name (operator*, operator->*, operator*=) */
        p->kind = K_SUB;
        for (size_t i = 0; i < len; i++)
            if (s[i] == '*') {
                if ((i >= 8 && !memcmp(s + i - 8, "operator", 8)) || (i >= 10 && !memcmp(s + i - 10, "operator->", 10))) {
                    p->kind = K_SUB;
                    break;
                }
                p->kind = K_GLOB;
            }
    }
    /* A name has colons in pairs (C++ scopes); one alone is another
     * separator typed for the comma (PATH's), which would select nothing
     * without a word. (An Objective-C method's name, "-[C a:b:]", has single
     * ones: a pattern with '[' is left alone.) */
    if (p->kind != K_FILE && !memchr(s, '[', len))
        for (size_t i = 0, run; i < len; i += run ? run : 1) {
            for (run = 0; i + run < len && s[i + run] == ':'; run++)
                ;
            if (run && run != 2)
                return fail(eb, item, item_len,
                            "a single ':' is in no function's name, whose scopes are '::'; " EXPECTED);
        }
    p->text = malloc(len + 1);
    if (!p->text) {
        if (eb->buf && eb->len)
            snprintf(eb->buf, eb->len, "%s: out of memory", eb->var);
        return -1;
    }
    memcpy(p->text, s, len);
    p->text[len] = '\0';
    return 0;
}

int piano_select_parse(const char *spec, struct piano_select **out, char *err,
                       size_t errlen)
{
    return piano_select_parse_var("PIANO_FNS", spec, out, err, errlen);
}

int piano_select_parse_var(const char *var, const char *spec,
                           struct piano_select **out, char *err, size_t errlen)
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
        struct errbuf eb = {err, errlen, spec, var};
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

/* The operator tokens that hold '<' or '>' ("operator<<", "operator->"...),
 * longest first: after "operator" they are part of the name, not template
 * brackets. */
static size_t operator_token(const char *s)
{
    static const char *const ops[] = {"<=>", "<<=", ">>=", "->*", "<<", ">>",
                                      "<=", ">=", "->", "<", ">", NULL};
    for (const char *const *o = ops; *o; o++)
        if (strncmp(s, *o, strlen(*o)) == 0)
            return strlen(*o);
    return 0;
}

static int is_ident(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
}

size_t piano_select_strip_targs(const char *name, char *out, size_t outlen)
{
    size_t o = 0, depth = 0, parens = 0;
    for (size_t i = 0; name[i];) {
        /* "operator<", "operator->"...: copied as they are. */
        if (depth == 0 && i >= 8 && memcmp(name + i - 8, "operator", 8) == 0 &&
            (i == 8 || !is_ident((unsigned char)name[i - 9]))) {
            size_t k = operator_token(name + i);
            for (size_t j = 0; j < k; j++)
                if (o + 1 < outlen)
                    out[o++] = name[i + j];
            if (k) {
                i += k;
                continue;
            }
        }
        char c = name[i++];
        if (depth > 0) {
            /* Inside template arguments: a '>' in parentheses (an
             * expression such as (1>2)) does not close them. */
            if (c == '(')
                parens++;
            else if (c == ')' && parens)
                parens--;
            else if (c == '<' && !parens)
                depth++;
            else if (c == '>' && !parens)
                depth--;
            continue;
        }
        if (c == '<') {
            depth = 1;
            parens = 0;
            continue;
        }
        if (o + 1 < outlen)
            out[o++] = c;
    }
    /* "Foo<int> " before a parameter list never occurs here (names come
     * without parameters), but a conversion "operator Foo<int>" would leave
     * a trailing space. */
    while (o > 0 && out[o - 1] == ' ')
        o--;
    if (outlen)
        out[o < outlen ? o : outlen - 1] = '\0';
    return o;
}

/* "std::", "__gnu_cxx::": a pattern that names system code on purpose. */
static int names_system(const char *text)
{
    return strncmp(text, "std::", 5) == 0 || strncmp(text, "::std::", 7) == 0 ||
           strncmp(text, "__gnu_cxx::", 11) == 0;
}

/* Whether a folder pattern ("src/net/", "/abs/dir/") holds file: its
 * components, at the start of file or right after a '/'. */
static int in_folder(const char *file, const char *dir)
{
    size_t ld = strlen(dir);
    if (dir[0] == '.' && dir[1] == '/') { /* "./src/": the same as "src/" */
        dir += 2;
        ld -= 2;
    }
    if (ld == 0)
        return 0;
    if (strncmp(file, dir, ld) == 0)
        return 1;
    if (dir[0] == '/')
        return 0; /* absolute: a prefix only */
    for (const char *p = strchr(file, '/'); p; p = strchr(p + 1, '/'))
        if (strncmp(p + 1, dir, ld) == 0)
            return 1;
    return 0;
}

/* Whether s matches pat whole, each '*' of pat standing for any characters
 * (none too). Greedy with one backtrack point: linear in practice. */
static int star_match(const char *pat, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            resume = s;
        } else if (*pat == *s) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == 0;
}

/* The names a function is seen under: with and without template arguments. */
struct fn_names {
    const char *full;     /* as demangled, without parameters */
    const char *stripped; /* template arguments removed */
    const char *file;
    int system;
};

/* How one pattern matches a function: 0 (not), MATCH_BROAD (a substring or
 * '*') or MATCH_NAMED (=name, the whole name or its last '::' parts, a file
 * pattern). */
enum { MATCH_NONE = 0, MATCH_BROAD = 1, MATCH_NAMED = 2 };

static int pattern_matches(const struct pattern *p, const struct fn_names *fn)
{
    const char *name = p->text && strchr(p->text, '<') ? fn->full : fn->stripped;
    switch (p->kind) {
    case K_ALL:
        return MATCH_BROAD;
    case K_EXACT:
        return strcmp(name, p->text) == 0 ? MATCH_NAMED : MATCH_NONE;
    case K_FILE: {
        size_t lt = strlen(p->text);
        if (p->text[lt - 1] == '/')
            return in_folder(fn->file, p->text) ? MATCH_NAMED : MATCH_NONE;
        return ends_with(fn->file, p->text) ? MATCH_NAMED : MATCH_NONE;
    }
    case K_GLOB: {
        if (fn->system && !p->exclude && !names_system(p->text))
            return MATCH_NONE;
        /* the whole name, or its last '::' parts (Parser::* in app::Parser::parse) */
        if (star_match(p->text, name))
            return MATCH_BROAD;
        for (const char *c = strstr(name, "::"); c; c = strstr(c + 2, "::"))
            if (star_match(p->text, c + 2))
                return MATCH_BROAD;
        return MATCH_NONE;
    }
    case K_SUB: {
        /* System code is never caught by accident; excluding it is fine. */
        if (fn->system && !p->exclude && !names_system(p->text))
            return MATCH_NONE;
        if (!strstr(name, p->text))
            return MATCH_NONE;
        size_t ln = strlen(name), lt = strlen(p->text);
        if (ln == lt ||
            (ln > lt + 2 && ends_with(name, p->text) &&
             memcmp(name + ln - lt - 2, "::", 2) == 0))
            return MATCH_NAMED;
        return MATCH_BROAD;
    }
    }
    return MATCH_NONE;
}

enum piano_sel_result piano_select_match_fn(const struct piano_select *sel,
                                            const char *name, const char *file,
                                            int system)
{
    int best = MATCH_NONE;
    char stack[512], *heap = NULL, *stripped = stack;
    struct fn_names fn;
    if (!name)
        name = "";
    if (!file)
        file = "";
    size_t len = strlen(name);
    if (len >= sizeof stack) {
        heap = malloc(len + 1);
        if (heap)
            stripped = heap;
    }
    piano_select_strip_targs(name, stripped, heap ? len + 1 : sizeof stack);
    fn.full = name;
    fn.stripped = stripped;
    fn.file = file;
    fn.system = system;
    for (size_t i = 0; i < sel->n; i++) {
        const struct pattern *p = &sel->pats[i];
        int how = pattern_matches(p, &fn);
        if (!how)
            continue;
        if (p->exclude) {
            free(heap);
            return PIANO_SEL_NO;
        }
        if (how > best)
            best = how;
    }
    free(heap);
    if (sel->n_includes == 0)
        return system ? PIANO_SEL_NO : PIANO_SEL_DEFAULT;
    return best == MATCH_NAMED   ? PIANO_SEL_YES
           : best == MATCH_BROAD ? PIANO_SEL_BROAD
                                 : PIANO_SEL_NO;
}

enum piano_sel_result piano_select_match(const struct piano_select *sel,
                                         const char *name, const char *file)
{
    return piano_select_match_fn(sel, name, file, 0);
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
