/* format.c - human units, text tables, JSON and CSV strings. */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void fmt_cut(char *buf, size_t n, const char *s, size_t max)
{
    if (utf8_width(s) <= max || max < 4) {
        snprintf(buf, n, "%s", s);
        return;
    }
    size_t w = 0, i = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (w == max - 3)
                break;
            w++;
        }
        i++;
    }
    snprintf(buf, n, "%.*s...", (int)i, s);
}

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static int utf8_seq(const unsigned char *s)
{
    int len;
    unsigned cp;
    if (s[0] < 0x80)
        return 1;
    else if ((s[0] & 0xE0) == 0xC0)
        len = 2, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        len = 3, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        len = 4, cp = s[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
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
            int len = utf8_seq(u);
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

void print_pad(FILE *f, const char *s, size_t width, int right)
{
    size_t w = utf8_width(s);
    if (right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
    fputs(s, f);
    if (!right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
}

void table_init(table *t, int ncols, const char **hdr, const int *minw)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->hdr = hdr;
    t->minw = minw;
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
    char *out = xmalloc(strlen(s) * 6 + 1), *o = out;
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
void table_print(table *t, FILE *f, int use_color)
{
    size_t *w = xcalloc((size_t)t->ncols, sizeof *w);
    for (int c = 0; c < t->ncols; c++) {
        /* Column 0 carries two trailing spaces, so column 1 needs no gap of its own
         * unless it is left-aligned (those print their gap first). */
        size_t sep = (c == 0 || (c == 1 && !(t->leftmask & 2u))) ? 0 : 2;
        size_t m = utf8_width(t->hdr[c]) + sep;
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = utf8_width(t->cells[r * (size_t)t->ncols + (size_t)c]) + sep;
            if (cw > m)
                m = cw;
        }
        if (c == 0)
            m += 2;
        if (t->minw && (size_t)t->minw[c] > m)
            m = (size_t)t->minw[c];
        w[c] = m;
    }
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
