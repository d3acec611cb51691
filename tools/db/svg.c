/* svg.c - output files and XML escaping shared by flamegraph, plot and export;
 * the SVG document's head and the charts' axes, for flamegraph (flame.c) and
 * plot's three charts (plot.c, plot_heap.c, timeline.c), which use these and
 * nothing of each other. */
#include "piano_db.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

FILE *out_open(const pdb_opts *o, int binary)
{
    if (!o->output || !strcmp(o->output, "-")) {
        if (binary && isatty(STDOUT_FILENO))
            pdb_usage_die("%s: the output is binary: name a file with -o FILE", o->cmd);
        return stdout;
    }
    FILE *f = fopen(o->output, binary ? "wb" : "w");
    if (!f)
        pdb_die("cannot write %s: %s", o->output, strerror(errno));
    return f;
}

void out_close(FILE *f, const pdb_opts *o)
{
    if (f == stdout)
        return;
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        pdb_die("cannot write %s: %s", o->output, strerror(errno ? errno : EIO));
}

/* Length of the valid UTF-8 sequence at s if XML 1.0 allows its code point
 * (tab, newline, carriage return, U+0020 on, but not DEL, U+FFFE, U+FFFF), or 0. */
static int xml_seq(const unsigned char *s)
{
    unsigned cp;
    int len = utf8_seq(s, &cp);
    if (!len || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7f || cp == 0xFFFE || cp == 0xFFFF)
        return 0;
    return len;
}

void xml_str(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        switch (*u) {
        case '&': fputs("&amp;", f); u++; continue;
        case '<': fputs("&lt;", f); u++; continue;
        case '>': fputs("&gt;", f); u++; continue;
        case '"': fputs("&quot;", f); u++; continue;
        case '\'': fputs("&#39;", f); u++; continue;
        case '\n': case '\r': case '\t': fputc(' ', f); u++; continue;
        }
        int len = xml_seq(u);
        if (!len) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD */
            u++;
        } else {
            fwrite(u, 1, (size_t)len, f);
            u += len;
        }
    }
}

void svg_begin(FILE *f, int width, int height, const char *css, const char *background)
{
    fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n",
            width, height, width, height);
    fputs("<style type=\"text/css\">\n", f);
    fputs(css, f);
    fputs("</style>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", width, height, background);
}

/* A round step near range/target: 1, 2 or 5 times a power of ten. */
double plot_nice_step(double range, int target)
{
    if (range <= 0)
        return 1;
    double raw = range / target, mag = pow(10, floor(log10(raw))), r = raw / mag;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

/* Axis label for a time: 0, 250us, 1.5ms, 2s (no trailing zeros). */
void axis_ns(char *buf, size_t n, double ns)
{
    static const struct { double div; const char *unit; } u[] = {
        {1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    if (ns <= 0) {
        snprintf(buf, n, "0");
        return;
    }
    for (int i = 0; i < 4; i++)
        if (ns >= u[i].div || i == 3) {
            snprintf(buf, n, "%.4g%s", ns / u[i].div, u[i].unit);
            return;
        }
}
