/* format.c - human units, text tables, JSON and CSV strings. */
#include "piano_db.h"
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* ns, us, ms or s with two decimals: 850.00ns, 2.98ms, 1.25s. */
void fmt_ns(char *buf, size_t n, double ns)
{
    double a = fabs(ns);
    if (a < 1e3)
        snprintf(buf, n, "%.2fns", ns);
    else if (a < 1e6)
        snprintf(buf, n, "%.2fus", ns / 1e3);
    else if (a < 1e9)
        snprintf(buf, n, "%.2fms", ns / 1e6);
    else
        snprintf(buf, n, "%.2fs", ns / 1e9);
}

/* Signed: +1.20ms, -142.77ms, +0.00ns. */
void fmt_delta_ns(char *buf, size_t n, double ns)
{
    char t[64];
    fmt_ns(t, sizeof t, fabs(ns));
    snprintf(buf, n, "%s%s", ns < 0 ? "-" : "+", t);
}

/* B below 1KB, then KB, MB, GB with one decimal (1KB = 1024B). */
void fmt_bytes(char *buf, size_t n, int64_t bytes)
{
    double a = fabs((double)bytes);
    if (a < 1024)
        snprintf(buf, n, "%lldB", (long long)bytes);
    else if (a < 1024.0 * 1024)
        snprintf(buf, n, "%.1fKB", bytes / 1024.0);
    else if (a < 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.1fMB", bytes / (1024.0 * 1024));
    else
        snprintf(buf, n, "%.1fGB", bytes / (1024.0 * 1024 * 1024));
}

void fmt_time_local(char *buf, size_t n, int64_t epoch_ns)
{
    time_t t = (time_t)(epoch_ns / 1000000000);
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, n, "?");
}

/* Display width, counted as UTF-8 code points. */
size_t utf8_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

/* The display width of s's first n bytes. */
static size_t utf8_width_n(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            w++;
    return w;
}

void fmt_cut(char *buf, size_t n, const char *s, size_t max)
{
    if (utf8_width(s) <= max || max < 4)
        snprintf(buf, n, "%s", s);
    else
        snprintf(buf, n, "%.*s...", (int)utf8_offset(s, max - 3), s);
}

int utf8_seq(const unsigned char *s, unsigned *cp)
{
    int len;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    } else if ((s[0] & 0xE0) == 0xC0)
        len = 2, *cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        len = 3, *cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        len = 4, *cp = s[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        *cp = *cp << 6 | (s[i] & 0x3F);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (*cp < min[len] || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
        return 0;
    return len;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD so the output stays valid. */
void json_str(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    while (*u) {
        if (*u == '"' || *u == '\\') {
            fputc('\\', f);
            fputc(*u++, f);
        } else if (*u < 0x20) {
            switch (*u) {
            case '\n': fputs("\\n", f); break;
            case '\t': fputs("\\t", f); break;
            case '\r': fputs("\\r", f); break;
            default: fprintf(f, "\\u%04x", *u);
            }
            u++;
        } else if (*u == 0x7f || (u[0] == 0xC2 && u[1] >= 0x80 && u[1] <= 0x9F)) {
            /* DEL and C1 controls: valid JSON as they are, but escaped they cannot act on a terminal */
            fprintf(f, "\\u%04x", *u == 0x7f ? 0x7f : u[1]);
            u += *u == 0x7f ? 1 : 2;
        } else {
            unsigned cp;
            int len = utf8_seq(u, &cp);
            if (len == 0) {
                fputs("\\ufffd", f);
                u++;
            } else {
                fwrite(u, 1, (size_t)len, f);
                u += len;
            }
        }
    }
    fputc('"', f);
}

/* RFC 4180: quoted when it holds a comma, quote or line break. */
void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Every cell and header of every table, streamed or not, is printed here: with
 * its control characters escaped (esc_ctrl), the one rule that keeps a name
 * from acting on the terminal (a thread named "\x1b[2J" would clear it). */
void print_pad(FILE *f, const char *s, size_t width, int right)
{
    char *e = has_ctrl(s) ? esc_ctrl(s) : NULL;
    if (e)
        s = e;
    size_t w = utf8_width(s);
    if (right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
    fputs(s, f);
    if (!right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
    free(e);
}

size_t shown_width(const char *s)
{
    if (!has_ctrl(s))
        return utf8_width(s);
    char *e = esc_ctrl(s);
    size_t w = utf8_width(e);
    free(e);
    return w;
}

void table_init(table *t, int ncols, const char **hdr, const int *minw)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->hdr = hdr;
    t->minw = minw;
    t->fit_col = -1;
}

/* ---- fitting names to the width ---- */

size_t term_width(void)
{
    const char *c = getenv("COLUMNS");
    if (c && *c) {
        char *end;
        long v = strtol(c, &end, 10);
        if (!*end && v >= 20 && v <= 10000)
            return (size_t)v;
    }
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return TABLE_WIDTH_NOT_TTY;
}

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

size_t utf8_offset(const char *s, size_t w)
{
    size_t i = 0, seen = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (seen == w)
                break;
            seen++;
        }
        i++;
    }
    return i;
}

/* Does the '<' or '>' at s[i] belong to an operator's name (operator<, operator<<, operator->...)? */
static int operator_char(const char *s, size_t i)
{
    size_t j = i;
    while (j > 0 && (s[j - 1] == '<' || s[j - 1] == '>' || s[j - 1] == '-' || s[j - 1] == '='))
        j--;
    return j >= 8 && !strncmp(s + j - 8, "operator", 8);
}

/* The index just past the '>' that closes the '<' at s[i], or 0 when none does. */
static size_t close_angle(const char *s, size_t i)
{
    int depth = 0, paren = 0;
    for (size_t k = i; s[k]; k++) {
        char ch = s[k];
        if (ch == '(')
            paren++;
        else if (ch == ')' && paren > 0)
            paren--;
        else if (ch == '<' && !operator_char(s, k))
            depth++;
        else if (ch == '>' && !operator_char(s, k) && !(k > 0 && s[k - 1] == '-' && paren)) {
            if (--depth == 0)
                return k + 1;
        }
    }
    return 0;
}

/* s with the arguments of each outermost template argument list elided: a<b<c>, d>::f -> a<…>::f. */
static char *elide_templates(const char *s)
{
    size_t n = strlen(s);
    char *out = xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n;) {
        size_t end;
        if (s[i] == '<' && !operator_char(s, i) && (end = close_angle(s, i)) != 0 && end - i > 5) {
            o += sprintf(o, "<" ELLIPSIS ">");
            i = end;
        } else {
            *o++ = s[i++];
        }
    }
    *o = 0;
    return out;
}

/* s with its parameter list elided: the last outermost (...) right after a
 * name (no blank before it) and not followed by "::": f(int, char) const -> f(…) const. */
static char *elide_params(const char *s)
{
    size_t n = strlen(s), open = 0, close = 0;
    int angle = 0, paren = 0;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '<' && !operator_char(s, i))
            angle++;
        else if (ch == '>' && !operator_char(s, i) && angle > 0)
            angle--;
        else if (ch == '(' && !angle) {
            if (paren++ == 0)
                start = i;
        } else if (ch == ')' && !angle && paren > 0 && --paren == 0) {
            if (start > 0 && s[start - 1] != ' ' && strncmp(s + i + 1, "::", 2) && i - start > 2)
                open = start, close = i;
        }
    }
    if (!close)
        return xstrdup(s);
    char *out = xmalloc(n + 4);
    sprintf(out, "%.*s(" ELLIPSIS "%s", (int)open, s, s + close);
    return out;
}

/* Where a label's " (file:line)" or " (file)" begins (the last " (" whose
 * rest holds no other '(' and ends the string with ')'), else the end. */
static size_t label_suffix(const char *s)
{
    size_t n = strlen(s);
    const char *last = NULL;
    for (const char *c = strstr(s, " ("); c; c = strstr(c + 1, " ("))
        last = c;
    if (!last || n < 2 || s[n - 1] != ')' || strchr(last + 2, '('))
        return n;
    return (size_t)(last - s);
}

/* The first n display characters of s, cut to w in their middle: a
 * short head and the longer tail. */
static char *cut_middle_plain(const char *s, size_t n, size_t w)
{
    if (w >= n) {
        size_t nb = utf8_offset(s, n);
        char *out = xmalloc(nb + 1);
        memcpy(out, s, nb);
        out[nb] = 0;
        return out;
    }
    size_t head = (w - 1) / 4, tail = w - 1 - head;
    size_t hb = utf8_offset(s, head), tb = utf8_offset(s, n - tail), nb = utf8_offset(s, n);
    char *out = xmalloc(nb + 4);
    sprintf(out, "%.*s" ELLIPSIS "%.*s", (int)hb, s, (int)(nb - tb), s + tb);
    return out;
}

/* s cut to w display characters, the middle left out: a short head (the
 * namespace, a prefix) and the longer tail (the function's own name) stay,
 * and a label's " (file:line)" is kept whole. */
static char *cut_middle(const char *s, size_t w)
{
    size_t sw = utf8_width(s);
    if (sw <= w)
        return xstrdup(s);
    size_t sfx = label_suffix(s), sfxw = utf8_width(s + sfx);
    size_t nw = sw - sfxw;
    if (sfx < strlen(s) && w >= 8) {
        /* A label wider than w: the name keeps half of w or what the file
         * leaves it, the file the middle of its path: " (src/…le.c:12)". */
        size_t nk = sfxw < w && w - sfxw > w / 2 ? w - sfxw : w / 2;
        if (nk > nw)
            nk = nw;
        size_t sk = w - nk;   /* " (" "…" tail ")": the tail gets sk - 4 */
        char *name = cut_middle_plain(s, nw, nk);
        char *out = xmalloc(strlen(name) + strlen(s + sfx) + 8);
        if (sfxw <= sk) {
            sprintf(out, "%s%s", name, s + sfx);
        } else {
            /* the path's middle goes: its head tells the rows apart (paths_short
             * keeps the shortest tail that does), its end has the line */
            const char *p = s + sfx + 2;
            size_t pw = sfxw - 3, keep = sk > 4 ? sk - 4 : 0;   /* the path:line's width, what stays of it */
            size_t head = keep / 2, hb = utf8_offset(p, head), tb = utf8_offset(p, pw - (keep - head));
            sprintf(out, "%s (%.*s" ELLIPSIS "%s", name, (int)hb, p, p + tb);
        }
        free(name);
        return out;
    }
    /* a name keeps at least 24 characters */
    size_t room = w > sfxw + 24 ? w - sfxw : 24;
    if (nw <= room)
        return xstrdup(s);
    size_t head = (room - 1) / 4, tail = room - 1 - head;
    size_t hb = utf8_offset(s, head), tb = utf8_offset(s, nw - tail);
    char *out = xmalloc(strlen(s) + 4);
    sprintf(out, "%.*s" ELLIPSIS "%s", (int)hb, s, s + tb);
    return out;
}

/* Where the last top-level "(...)" of s[0, n) opens (the parameter list of
 * a demangled name), or n when it has none. */
static size_t params_open(const char *s, size_t n)
{
    size_t open = n;
    int angle = 0, paren = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '<' && !operator_char(s, i))
            angle++;
        else if (ch == '>' && !operator_char(s, i) && angle > 0)
            angle--;
        else if (ch == '(' && !angle && paren++ == 0)
            open = i;
        else if (ch == ')' && !angle && paren > 0)
            paren--;
    }
    return paren ? n : open;
}

/* Whether s[i] opens (closes) a bracket of a demangled name: <> (not an
 * operator's), (), [], {}. */
static int opens_bracket(const char *s, size_t i)
{
    char ch = s[i];
    return (ch == '<' && !operator_char(s, i)) || ch == '(' || ch == '[' || ch == '{';
}

static int closes_bracket(const char *s, size_t i)
{
    char ch = s[i];
    return (ch == '>' && !operator_char(s, i)) || ch == ')' || ch == ']' || ch == '}';
}

/* Where the "operator" keyword whose name holds the blank at s[i] begins
 * (operator new, operator char const*, operator< <int>), outside brackets;
 * (size_t)-1 when no such keyword is before it. */
static size_t operator_token(const char *s, size_t i)
{
    int depth = 0;
    for (size_t k = i; k-- > 0;) {
        if (closes_bracket(s, k))
            depth++;
        else if (opens_bracket(s, k) && depth > 0)
            depth--;
        else if (!depth && !strncmp(s + k, "operator", 8) && (k == 0 || s[k - 1] == ':' || s[k - 1] == ' ') &&
                 !(isalnum((unsigned char)s[k + 8]) || s[k + 8] == '_'))
            return k;
    }
    return (size_t)-1;
}

/* Where a demangled C++ name's qualified name begins, after the return type a
 * template function's name carries (`char const* ns::f<char>(char const*)`:
 * at `ns::`), as c++filt shows other functions; 0 when there is none. The
 * return type ends at the last blank outside brackets before the parameter
 * list, unless that blank belongs to an operator's name (`operator new`,
 * `operator char const*`). */
static size_t name_start(const char *s)
{
    size_t n = label_suffix(s), open = params_open(s, n);
    if (open == n || open == 0)
        return 0;
    int depth = 0;
    for (size_t i = open; i-- > 0;) {
        if (closes_bracket(s, i))
            depth++;
        else if (opens_bracket(s, i) && depth > 0)
            depth--;
        else if (s[i] == ' ' && !depth) {
            /* a blank of an operator's name: on to its "operator" */
            size_t op = operator_token(s, i);
            if (op != (size_t)-1) {
                if (op == 0)
                    return 0;
                i = op;
                continue;
            }
            return i + 1;
        }
    }
    return 0;
}

/* Where the function's own name begins in a demangled name: past the last
 * "::" outside brackets before its parameters (ns::T<…>::f(int): at f), or 0. */
static size_t last_name_start(const char *s)
{
    size_t n = label_suffix(s), open = params_open(s, n), last = 0;
    int depth = 0;
    for (size_t i = name_start(s); i < open; i++) {
        if (opens_bracket(s, i))
            depth++;
        else if (closes_bracket(s, i) && depth > 0)
            depth--;
        else if (s[i] == ':' && s[i + 1] == ':' && !depth)
            last = i + 2, i++;
    }
    return last;
}

/* s cut to w display characters keeping the function's own name and what
 * follows it whole (qualifiers cut in their middle: ns::…::f(int)); NULL when
 * that name alone does not fit. */
static char *cut_keeping_name(const char *s, size_t w)
{
    if (utf8_width(s) <= w)
        return xstrdup(s);
    size_t b = last_name_start(s), tw = utf8_width(s + b);
    if (tw + 1 > w)
        return NULL;
    if (tw + 1 + 4 > w) { /* no room for a telling part of its qualifier */
        char *out = xmalloc(strlen(s + b) + 4);
        sprintf(out, ELLIPSIS "%s", s + b);
        return out;
    }
    /* the qualifier's head, then "…::" when there is room for it */
    int sep = b >= 2 && tw + 3 + 6 <= w;
    size_t head = w - tw - (sep ? 3 : 1), hb = utf8_offset(s, head);
    char *out = xmalloc(strlen(s) + 6);
    sprintf(out, "%.*s" ELLIPSIS "%s%s", (int)hb, s, sep ? "::" : "", s + b);
    return out;
}

/* s in w display characters: the cut that keeps the function's own name,
 * else the middle cut. */
static char *cut_name(const char *s, size_t w)
{
    char *c = cut_keeping_name(s, w);
    return c ? c : cut_middle(s, w);
}

char *name_without_return(const char *s)
{
    return xstrdup(s + name_start(s));
}

char *name_group(const char *s)
{
    const char *n = s + name_start(s);
    size_t len = strlen(n), open = params_open(n, len);
    char *out = xmalloc(len + 8), *o = out;
    for (size_t i = 0; i < len;) {
        size_t end;
        if (i == open) { /* the parameters: "(…)", or "()" when there are none */
            int depth = 0;
            size_t k = i;
            for (; k < len; k++)
                if (n[k] == '(')
                    depth++;
                else if (n[k] == ')' && --depth == 0)
                    break;
            o += sprintf(o, k > i + 1 ? "(" ELLIPSIS ")" : "()");
            i = k < len ? k + 1 : len;
        } else if (n[i] == '<' && !operator_char(n, i) && (end = close_angle(n, i)) != 0 && i < open) {
            o += sprintf(o, "<" ELLIPSIS ">");
            i = end;
        } else {
            *o++ = n[i++];
        }
    }
    *o = 0;
    return out;
}

char *name_for_pattern(const char *s)
{
    static const char *const elided[] = {"<" ELLIPSIS ">", "(" ELLIPSIS ")", "()"};
    char *g = name_group(s), *o = g;
    for (const char *i = g; *i;) {
        size_t k = 0, n = 0;
        while (k < 3 && strncmp(i, elided[k], n = strlen(elided[k])) != 0)
            k++;
        if (k == 0)
            i += n;
        else if (k < 3)
            break;   /* the parameters, and what follows them (` const`) */
        else
            *o++ = *i++;
    }
    *o = 0;
    return g;
}

enum { NFORMS = 4 };
typedef struct {
    char *forms[NFORMS]; /* least to most shortened: without its return type,
                          * templates elided, parameters elided, both */
    int nforms;
    const char *given;
    char *shown;
} fitname;

static int cmp_shown(const void *a, const void *b)
{
    const fitname *x = *(fitname *const *)a, *y = *(fitname *const *)b;
    int c = strcmp(x->shown, y->shown);
    return c ? c : (x < y ? -1 : x > y);
}

static void add_form(fitname *f, char *form)
{
    for (int k = 0; k < f->nforms; k++)
        if (!strcmp(f->forms[k], form)) {
            free(form);
            return;
        }
    f->forms[f->nforms++] = form;
}

/* Whether a row of another name than self's shows s (rows of one name, as a
 * function in several snapshots, may read the same). */
static int shown_elsewhere(fitname *v, size_t n, const fitname *self, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].given, self->given) && !strcmp(v[i].shown, s))
            return 1;
    return 0;
}

/* s in w display characters showing where it differs from other (the first
 * character that is not the same): its head, that place, its tail; NULL when
 * w is too small, they do not differ, or not in the function's own name. */
static char *cut_at_difference(const char *s, const char *other, size_t w)
{
    size_t d = 0;
    while (s[d] && s[d] == other[d])
        d++;
    size_t sw = utf8_width(s), dw = utf8_width_n(s, d);
    if (!s[d] && !other[d])
        return NULL;
    /* only a difference in the function's own name: one in its template
     * arguments or parameters (format<int, …> with one int more) reads
     * better numbered */
    size_t b = last_name_start(s), open = params_open(s, strlen(s));
    if (d < b || d >= open || memchr(s + b, '<', d - b))
        return NULL;
    if (sw <= w)
        return xstrdup(s);
    if (w < 24)
        return NULL;
    size_t head = w / 4, tail = w / 4, mid = w - head - tail - 2; /* two ellipses */
    size_t from = dw > mid / 2 ? dw - mid / 2 : 0;
    if (from <= head) /* the difference is in reach of the head: one cut */
        return cut_middle(s, w);
    if (from + mid >= sw - tail) /* ... or of the tail */
        return cut_middle(s, w);
    size_t hb = utf8_offset(s, head), fb = utf8_offset(s, from), mb = utf8_offset(s, from + mid),
           tb = utf8_offset(s, sw - tail);
    char *out = xmalloc(hb + (mb - fb) + strlen(s + tb) + 8);
    sprintf(out, "%.*s" ELLIPSIS "%.*s" ELLIPSIS "%s", (int)hb, s, (int)(mb - fb), s + fb, s + tb);
    return out;
}

/* A shown name for f that no other row shows and that fits max: the least
 * shortened of its forms, whole, then cut keeping the function's own name,
 * then cut to show where it differs from `other` (a row it read the same
 * as); NULL when none is. */
static char *fit_unique(fitname *v, size_t n, const fitname *f, size_t max, const char *other)
{
    if (other) {
        char *c = cut_at_difference(f->forms[0], other, max);
        if (c && utf8_width(c) <= max && !shown_elsewhere(v, n, f, c))
            return c;
        free(c);
    }
    for (int cut = 0; cut < 2; cut++)
        for (int k = 0; k < f->nforms; k++) {
            if (!cut && utf8_width(f->forms[k]) > max)
                continue;
            char *c = cut ? cut_keeping_name(f->forms[k], max) : xstrdup(f->forms[k]);
            if (c && utf8_width(c) <= max && !shown_elsewhere(v, n, f, c))
                return c;
            free(c);
        }
    return NULL;
}

static char **names_fit_once(const char *const *names, size_t n, size_t max)
{
    char **out = xcalloc(n ? n : 1, sizeof *out);
    fitname *v = xcalloc(n ? n : 1, sizeof *v);
    fitname **order = xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        fitname *f = &v[i];
        f->given = names[i];
        f->forms[f->nforms++] = name_without_return(names[i]);
        if (utf8_width(f->forms[0]) > max) {
            char *t = elide_templates(f->forms[0]), *tp = elide_params(t), *p = elide_params(f->forms[0]);
            add_form(f, t);
            add_form(f, p);
            add_form(f, tp);
        }
        /* the least shortened form that fits, else the most shortened one, cut */
        int k = 0;
        while (k < f->nforms && utf8_width(f->forms[k]) > max)
            k++;
        f->shown = k < f->nforms ? xstrdup(f->forms[k]) : cut_name(f->forms[f->nforms - 1], max);
        order[i] = f;
    }
    /* Rows of different names that read the same take another form that fits
     * and no other row shows; those that find none keep their name but the
     * first, which get a number (JSON and CSV keep the full names). The table
     * never grows past max for it. */
    for (int round = 0; round < 4 && n > 1; round++) {
        int alike = 0;
        qsort(order, n, sizeof *order, cmp_shown);
        for (size_t i = 0; i < n;) {
            size_t j = i + 1, names = 1;
            while (j < n && !strcmp(order[j]->shown, order[i]->shown)) {
                names += strcmp(order[j]->given, order[j - 1]->given) != 0;
                j++;
            }
            if (names > 1) {
                alike = 1;
                char *same = xstrdup(order[i]->shown);
                for (size_t q = i; q < j; q++) {
                    /* another name of the group, to show where this one differs */
                    const fitname *o = order[q == i ? i + 1 : i];
                    for (size_t r = i; r < j && !strcmp(o->given, order[q]->given); r++)
                        o = order[r];
                    char *c = fit_unique(v, n, order[q], max, NULL);
                    if (!c && strcmp(o->given, order[q]->given))
                        c = fit_unique(v, n, order[q], max, o->forms[0]);
                    if (c) {
                        free(order[q]->shown);
                        order[q]->shown = c;
                    }
                }
                size_t num = 0;
                const char *first = NULL;
                for (size_t q = i; q < j; q++) {
                    fitname *f = order[q];
                    if (strcmp(f->shown, same))
                        continue;
                    if (!first || !strcmp(f->given, first)) {
                        first = first ? first : f->given;
                        continue;
                    }
                    char tag[24];
                    int nl = snprintf(tag, sizeof tag, " #%zu", ++num + 1);
                    char *base = cut_name(f->forms[f->nforms - 1], max > (size_t)nl + 8 ? max - (size_t)nl : 8);
                    free(f->shown);
                    f->shown = xmalloc(strlen(base) + (size_t)nl + 1);
                    sprintf(f->shown, "%s%s", base, tag);
                    free(base);
                }
                free(same);
            }
            i = j;
        }
        if (!alike)
            break;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = v[i].shown;
        for (int k = 0; k < v[i].nforms; k++)
            free(v[i].forms[k]);
    }
    free(order);
    free(v);
    return out;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++)
        h = (h ^ *u) * 1099511628211ull;
    return h;
}

/* The distinct names among names (the rows of one function in many
 * snapshots are one name, not names to tell apart): *nu of them, and of each
 * name its index among them in map. */
static const char **names_distinct(const char *const *names, size_t n, size_t *map, size_t *nu)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = xmalloc(cap * sizeof *slot); /* index in u + 1; 0: empty */
    uint64_t *hash = xmalloc((n ? n : 1) * sizeof *hash);
    const char **u = xmalloc((n ? n : 1) * sizeof *u);
    memset(slot, 0, cap * sizeof *slot);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = name_hash(names[i]);
        size_t s = (size_t)h & (cap - 1);
        while (slot[s] && (hash[slot[s] - 1] != h || strcmp(u[slot[s] - 1], names[i])))
            s = (s + 1) & (cap - 1);
        if (!slot[s]) {
            u[k] = names[i];
            hash[k] = h;
            slot[s] = ++k;
        }
        map[i] = slot[s] - 1;
    }
    free(slot);
    free(hash);
    *nu = k;
    return u;
}

char **names_fit(const char *const *names, size_t n, size_t max)
{
    size_t *map = xmalloc((n ? n : 1) * sizeof *map), nu;
    const char **u = names_distinct(names, n, map, &nu);
    char **fit = names_fit_once(u, nu, max);
    char **out = xmalloc((n ? n : 1) * sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = xstrdup(fit[map[i]]);
    names_free(fit, nu);
    free(u);
    free(map);
    return out;
}

void names_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* path with "//" and "/./" collapsed, in a new string. */
static char *path_clean(const char *path)
{
    char *out = xstrdup(path), *o = out;
    for (const char *c = path; *c; c++) {
        if (*c == '/' && o > out && o[-1] == '/')
            continue;
        if (*c == '.' && c[1] == '/' && o > out && o[-1] == '/') {
            c++;
            continue;
        }
        *o++ = *c;
    }
    *o = 0;
    return out;
}

/* The last k components of p (all of it when it has no more). */
static const char *path_tail(const char *p, int k)
{
    const char *c = p + strlen(p);
    while (c > p) {
        c--;
        if (*c == '/' && c[1] && --k == 0)
            return c + 1;
    }
    return p;
}

char **paths_short(const char *const *paths, size_t n)
{
    char **clean = xcalloc(n ? n : 1, sizeof *clean), **out = xcalloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; i < n; i++)
        clean[i] = path_clean(paths[i]);
    for (size_t i = 0; i < n; i++) {
        const char *best = clean[i];
        for (int k = 1;; k++) {
            const char *t = path_tail(clean[i], k);
            int clash = 0;
            for (size_t j = 0; j < n && !clash; j++)
                clash = strcmp(clean[j], clean[i]) && !strcmp(path_tail(clean[j], k), t);
            if (!clash || t == clean[i]) {
                best = t;
                break;
            }
        }
        out[i] = xstrdup(best);
    }
    names_free(clean, n);
    return out;
}

/* argv[0] by its base name, then the arguments, cut at the end to max characters
 * (the program's name itself is never cut). */
char *fmt_command(const char *cmd, size_t max)
{
    const char *sp = strchr(cmd, ' ');
    size_t n0 = sp ? (size_t)(sp - cmd) : strlen(cmd);
    const char *base = cmd;
    for (const char *c = cmd; c < cmd + n0; c++)
        if (*c == '/' && c + 1 < cmd + n0)
            base = c + 1;
    size_t bl = (size_t)(cmd + n0 - base);
    const char *args = sp ? sp : "";
    char *out = xmalloc(bl + strlen(args) + 8);
    sprintf(out, "%.*s", (int)bl, base);
    size_t used = utf8_width(out), aw = utf8_width(args);
    if (used + aw <= max || !*args) {
        strcat(out, args);
    } else if (max > used + 4) {
        size_t keep = utf8_offset(args, max - used - 3);
        strncat(out, args, keep);
        strcat(out, "...");
    } else {
        strcat(out, " ...");
    }
    return out;
}

/* Length of the control character at s (C0, DEL, or C1 as UTF-8), or 0. */
static int ctrl_len(const unsigned char *s)
{
    if (s[0] < 0x20 || s[0] == 0x7f)
        return 1;
    if (s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
        return 2;
    return 0;
}

int has_ctrl(const char *s)
{
    for (const unsigned char *u = (const unsigned char *)s; *u; u++)
        if (ctrl_len(u))
            return 1;
    return 0;
}

char *esc_ctrl(const char *s)
{
    size_t len = 0; /* the size escaped: each control character takes at most 6 bytes */
    for (const unsigned char *u = (const unsigned char *)s; *u;) {
        int n = ctrl_len(u);
        len += n ? 6 : 1;
        u += n ? (size_t)n : 1;
    }
    char *out = xmalloc(len + 1), *o = out;
    for (const unsigned char *u = (const unsigned char *)s; *u;) {
        int n = ctrl_len(u);
        if (!n) {
            *o++ = (char)*u++;
        } else if (n == 2) {
            o += sprintf(o, "\\u%04x", u[1]);
            u += 2;
        } else {
            switch (*u) {
            case '\n': o += sprintf(o, "\\n"); break;
            case '\t': o += sprintf(o, "\\t"); break;
            case '\r': o += sprintf(o, "\\r"); break;
            default: o += sprintf(o, "\\x%02x", *u);
            }
            u++;
        }
    }
    *o = 0;
    return out;
}

void table_add(table *t, const char **cells, const char *color)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->cells = xrealloc(t->cells, t->cap * (size_t)t->ncols * sizeof *t->cells);
        t->rowcolor = xrealloc(t->rowcolor, t->cap * sizeof *t->rowcolor);
    }
    for (int c = 0; c < t->ncols; c++)
        t->cells[t->nrows * (size_t)t->ncols + (size_t)c] = esc_ctrl(cells[c] ? cells[c] : ""); /* one line a row */
    t->rowcolor[t->nrows++] = color;
}

static void put_cell(const table *t, FILE *f, int c, const char *s, size_t w)
{
    int last = c == t->ncols - 1;
    if (c == 0) {
        print_pad(f, s, last ? 0 : w, 0);
    } else if (t->leftmask & (1u << c)) {
        fputs("  ", f);
        print_pad(f, s, last ? 0 : w - 2, 0); /* no trailing blanks at the end of a line */
    } else {
        print_pad(f, s, w, 1);
    }
}

/* Column 0 is padded to its widest cell plus two spaces; the others are
 * right-aligned to max(minimum, widest cell + 2). */
static size_t col_width(const table *t, int c)
{
    size_t sep = (c == 0 || (c == 1 && !(t->leftmask & 2u))) ? 0 : 2;
    size_t m = shown_width(t->hdr[c]) + sep;
    for (size_t r = 0; r < t->nrows; r++) {
        size_t cw = utf8_width(t->cells[r * (size_t)t->ncols + (size_t)c]) + sep;
        if (cw > m)
            m = cw;
    }
    if (c == 0)
        m += 2;
    if (t->minw && (size_t)t->minw[c] > m)
        m = (size_t)t->minw[c];
    return m;
}

/* Shortens the cells of t->fit_col to what the width leaves them. */
static void table_fit(table *t)
{
    int fc = t->fit_col;
    if (fc < 0 || fc >= t->ncols || !t->nrows)
        return;
    size_t others = 0, width = term_width(), gap = 2, floor = 16;
    for (int pass = 0; pass < 2; pass++) {
        others = 0;
        for (int c = 0; c < t->ncols; c++)
            if (c != fc)
                others += col_width(t, c);
        /* Too narrow for the figures' usual widths and a readable name: the
         * figures take only what their cells need. */
        if (!t->minw || others + gap + 30 <= width)
            break;
        t->minw = NULL;
    }
    size_t room = width > others + gap ? width - others - gap : 0;
    if (room < floor)
        room = floor;
    char **cells = xmalloc(t->nrows * sizeof *cells);
    for (size_t r = 0; r < t->nrows; r++)
        cells[r] = t->cells[r * (size_t)t->ncols + (size_t)fc];
    if (t->fit_mode == FIT_COMMAND) {
        for (size_t r = 0; r < t->nrows; r++) {
            char *c = fmt_command(cells[r], room);
            free(cells[r]);
            t->cells[r * (size_t)t->ncols + (size_t)fc] = c;
        }
    } else {
        char **shown = names_fit((const char *const *)cells, t->nrows, room);
        for (size_t r = 0; r < t->nrows; r++) {
            free(cells[r]);
            t->cells[r * (size_t)t->ncols + (size_t)fc] = shown[r];
        }
        free(shown);
    }
    free(cells);
    t->fit_col = -1; /* once */
}

void table_print(table *t, FILE *f, int use_color)
{
    table_fit(t);
    size_t *w = xcalloc((size_t)t->ncols, sizeof *w);
    for (int c = 0; c < t->ncols; c++)
        w[c] = col_width(t, c);
    size_t total = 0;
    for (int c = 0; c < t->ncols; c++) {
        put_cell(t, f, c, t->hdr[c], w[c]);
        total += w[c];
    }
    fputc('\n', f);
    for (size_t i = 0; i < total; i++)
        fputc('-', f);
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        const char *col = use_color ? t->rowcolor[r] : NULL;
        if (col)
            fputs(col, f);
        for (int c = 0; c < t->ncols; c++) {
            put_cell(t, f, c, t->cells[r * (size_t)t->ncols + (size_t)c], w[c]);
        }
        if (col)
            fputs(C_OFF, f);
        fputc('\n', f);
    }
    free(w);
}

void table_free(table *t)
{
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->rowcolor);
    memset(t, 0, sizeof *t);
}
