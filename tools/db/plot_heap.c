/*
 * plot_heap.c - `piano-db plot heap`: an SVG of a run's heap in use.
 *
 * Without snapshots (PIANO_INTERVAL) piano knows three moments of the heap:
 * the start (nothing), its peak and the end. Each is a bar stacked by the
 * functions holding the memory then (the PLOT_HEAP_TOP that hold the most at
 * either moment, the rest as "other"), so it shows who held the peak and
 * who still holds memory at the end (leaks). Each segment's <title> says it.
 */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_HEAP_TOP 8
#define HW 900
#define HH 480
#define HL 90
#define HR 230   /* room for the legend */
#define HT 64
#define HB 48

static const char *const colours[PLOT_HEAP_TOP + 1] = {"#4a7bb7", "#e8873a", "#3a9d5d", "#c44e52", "#8c6bb1",
                                                        "#b5933b", "#4bb0c4", "#d46fa8", "#999999"};

static int by_held(const void *a, const void *b)
{
    const fnrow *x = a, *y = b;
    int64_t hx = x->peak_inuse_bytes > x->inuse_bytes ? x->peak_inuse_bytes : x->inuse_bytes;
    int64_t hy = y->peak_inuse_bytes > y->inuse_bytes ? y->peak_inuse_bytes : y->inuse_bytes;
    return hx != hy ? (hx < hy ? 1 : -1) : strcmp(x->label, y->label);
}

/* One moment's bar at x: segments of the top functions, then the rest. */
static void heap_bar(FILE *f, const fnset *s, size_t top, int at_peak, int64_t total, double x, double w, double y0,
                     double scale, const char *moment)
{
    double y = y0;
    int64_t rest = total;
    char a[32], buf[1200];
    for (size_t i = 0; i <= top; i++) {
        int64_t v = i < top ? (at_peak ? s->v[i].peak_inuse_bytes : s->v[i].inuse_bytes) : rest;
        if (i < top)
            rest -= v;
        if (v <= 0)
            continue;
        double h = (double)v * scale;
        fmt_bytes(a, sizeof a, v);
        snprintf(buf, sizeof buf, "%s: %s at the %s", i < top ? s->v[i].label : "other functions", a, moment);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"><title>", x, y - h, w,
                h < 0.5 ? 0.5 : h, colours[i < top ? i : PLOT_HEAP_TOP]);
        xml_str(f, buf);
        fputs("</title></rect>\n", f);
        y -= h;
    }
    fmt_bytes(a, sizeof a, total);
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + w / 2, y - 6, a);
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + w / 2, y0 + 18, moment);
}

int cmd_plot_heap(pdb *p, const pdb_opts *o, const run_info *r)
{
    if (r->heap_peak_bytes < 0)
        pdb_die("plot heap: run %lld did not track heap in use (run it with PIANO_HEAP=1)", (long long)r->id);
    fnset s;
    pdb_load_functions(p, r, o->thread_set ? o->thread : -1, AGG_BY_LINE, &s);
    qsort(s.v, s.n, sizeof *s.v, by_held);
    size_t top = 0;
    int64_t end = 0, peak_sum = 0;
    for (size_t i = 0; i < s.n; i++) {
        end = sat_add(end, s.v[i].inuse_bytes);
        peak_sum = sat_add(peak_sum, s.v[i].peak_inuse_bytes);
        if (top < PLOT_HEAP_TOP && (s.v[i].inuse_bytes > 0 || s.v[i].peak_inuse_bytes > 0))
            top = i + 1;
    }
    /* The run's peak; the functions' figures at it when a thread is picked. */
    int64_t peak = o->thread_set ? peak_sum : r->heap_peak_bytes;
    double ph = HH - HT - HB, pw = HW - HL - HR, y0 = HH - HB;
    double vmax = (double)(peak > end ? peak : end);
    double step = plot_nice_step(vmax > 0 ? vmax : 1, 5), ymax = ceil((vmax > 0 ? vmax : 1) / step) * step;
    double scale = ph / ymax;

    FILE *f = out_open(o, 0);
    fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n", HW, HH, HW, HH);
    fputs("<style type=\"text/css\">\n"
          "text{font-family:Verdana,'DejaVu Sans',sans-serif;font-size:12px;fill:#222}\n"
          "#title{font-size:17px;text-anchor:middle}\n#sub{text-anchor:middle;fill:#555}\n"
          ".yl{text-anchor:end}.xl{text-anchor:middle}\n"
          ".grid{stroke:#ddd;stroke-width:1}.axis{stroke:#444;stroke-width:1}\n"
          "rect:hover{opacity:0.7}\n"
          "</style>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", HW, HH);
    char buf[512], a[32], b[32];
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">Heap in use: run %lld (", HW / 2, (long long)r->id);
    fmt_cut(buf, sizeof buf, r->command, 60);
    xml_str(f, buf);
    fputs(")</text>\n", f);
    fmt_bytes(a, sizeof a, peak);
    fmt_bytes(b, sizeof b, end);
    snprintf(buf, sizeof buf, "peak %s, %s still in use at the end%s; no snapshots (PIANO_INTERVAL): the start, "
             "the peak and the end", a, b, o->thread_set ? " (one thread's functions)" : "");
    fprintf(f, "<text id=\"sub\" x=\"%d\" y=\"44\">", HW / 2);
    xml_str(f, buf);
    fputs("</text>\n", f);
    for (double v = 0; v <= ymax + step / 2; v += step) {
        double y = y0 - v * scale;
        fmt_bytes(a, sizeof a, (int64_t)v);
        fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"yl\" x=\"%d\" y=\"%.1f\">%s</text>\n", HL, y, HL + pw, y, HL - 6, y + 4, a);
    }
    fprintf(f, "<text transform=\"translate(18,%.1f) rotate(-90)\" class=\"xl\">heap in use</text>\n", HT + ph / 2);
    static const char *const moments[] = {"start", "peak", "end"};
    double slot = pw / 3, w = slot * 0.5;
    for (int m = 0; m < 3; m++)
        if (m == 0)
            heap_bar(f, &s, 0, 0, 0, HL + slot * m + (slot - w) / 2, w, y0, scale, moments[m]);
        else
            heap_bar(f, &s, top, m == 1, m == 1 ? peak : end, HL + slot * m + (slot - w) / 2, w, y0, scale,
                     moments[m]);
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
               "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\"/>\n",
            HL, y0, HL + pw, y0, HL, HT, HL, y0);
    for (size_t i = 0; i <= top; i++) {   /* the legend */
        double y = HT + 18.0 * (double)i;
        char name[64];
        fmt_cut(name, sizeof name, i < top ? s.v[i].label : "other functions", 26);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.1f\" "
                   "y=\"%.1f\">", HL + pw + 16, y, colours[i < top ? i : PLOT_HEAP_TOP], HL + pw + 34, y + 11);
        xml_str(f, name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    out_close(f, o);
    fnset_free(&s);
    return 0;
}
