/*
 * plot_heap.c - `piano-db plot heap`: an SVG of a run's heap in use.
 *
 * Without snapshots (PIANO_INTERVAL) piano knows three moments of the heap:
 * the start (nothing), its peak and the end. Each is a bar stacked by the
 * functions holding the memory then (the PLOT_HEAP_TOP that hold the most at
 * either moment, the rest as "other"), so it shows who held the peak and
 * who still holds memory at the end (leaks). Each segment's <title> says it.
 *
 * With snapshots (and no --thread: they sum the threads), each snapshot is a
 * bar too, at its time on an axis from the start to the end, stacked the same
 * way; the peak, whose time piano does not keep, is a bar of its own at the
 * right. Past PLOT_HEAP_MAX_BARS snapshots, a bar is the highest of
 * consecutive ones.
 */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_HEAP_TOP 8
#define PLOT_HEAP_MAX_BARS 300
#define HW 900
#define HH 480
#define HL 90
#define HR 230   /* room for the legend */
#define HT 64
#define HB 48

static const char *const colours[PLOT_HEAP_TOP + 1] = {"#4a7bb7", "#e8873a", "#3a9d5d", "#c44e52", "#8c6bb1",
                                                        "#b5933b", "#4bb0c4", "#d46fa8", "#999999"};

/* A function (a row of the run's set) and what it held at the end, at the
 * peak, and at most at a snapshot. */
typedef struct {
    const char *label;
    int64_t end, peak, most;
    size_t row;   /* its place in the set (and in a heap_series) */
} holder;

static int64_t held(const holder *x)
{
    int64_t h = x->peak > x->end ? x->peak : x->end;
    return x->most > h ? x->most : h;
}

static int by_held(const void *a, const void *b)
{
    const holder *x = a, *y = b;
    int64_t hx = held(x), hy = held(y);
    return hx != hy ? (hx < hy ? 1 : -1) : strcmp(x->label, y->label);
}

/* One moment's bar at x: segments of the top functions (their bytes in
 * v[0..top)), then the rest of total; with label, its total above and the
 * moment below. */
static void heap_bar(FILE *f, const holder *h, size_t top, const int64_t *v, int64_t total, double x, double w,
                     double y0, double scale, const char *moment, int label)
{
    double y = y0;
    int64_t rest = total;
    char a[32], buf[1200];
    for (size_t i = 0; i <= top; i++) {
        int64_t b = i < top ? v[i] : rest;
        if (i < top)
            rest -= b;
        if (b <= 0)
            continue;
        double hgt = (double)b * scale;
        fmt_bytes(a, sizeof a, b);
        snprintf(buf, sizeof buf, "%s: %s at the %s", i < top ? h[i].label : "other functions", a, moment);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"><title>", x, y - hgt, w,
                hgt < 0.5 ? 0.5 : hgt, colours[i < top ? i : PLOT_HEAP_TOP]);
        xml_str(f, buf);
        fputs("</title></rect>\n", f);
        y -= hgt;
    }
    if (!label)
        return;
    fmt_bytes(a, sizeof a, total);
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + w / 2, y - 6, a);
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + w / 2, y0 + 18, moment);
}

/* The run's snapshots: n times, and per time nv values: the bytes in use of
 * each function (holder) then of all of them. */
typedef struct {
    size_t n, nv;
    int64_t *t, *v;
} heap_series;

/* Each snapshot's bytes in use per holder (functions of one label summed;
 * each carried forward from its latest row); sets each holder's `most`. */
static void load_series(pdb *p, int64_t run, holder *h, size_t nh, heap_series *hs)
{
    fkeys k;
    fkeys_load(p, run, &k);
    int *of_key = xmalloc(((size_t)k.nkeys + 1) * sizeof *of_key);   /* key -> holder, nh: none */
    for (int key = 0; key <= k.nkeys; key++) {
        of_key[key] = (int)nh;
        for (size_t i = 0; key < k.nkeys && i < nh; i++)
            if (!strcmp(h[i].label, k.labels[key])) {
                of_key[key] = (int)i;
                break;
            }
    }
    int64_t *cur = xcalloc(k.nids + 1, sizeof *cur);   /* per id */
    int64_t *now = xcalloc(nh + 1, sizeof *now);       /* per holder, then the rest */
    size_t cap = 64;
    hs->n = 0;
    hs->nv = nh + 1;
    hs->t = xmalloc(cap * sizeof *hs->t);
    hs->v = xmalloc(cap * hs->nv * sizeof *hs->v);
    sqlite3_stmt *st = pdb_prepare(p, "SELECT t.t_ns, s.fn, coalesce(s.inuse_bytes, 0) FROM snapshot_times t "
                                      "LEFT JOIN snapshots s ON s.run = t.run AND s.t_ns = t.t_ns WHERE t.run = ? "
                                      "ORDER BY t.t_ns, s.fn");
    sqlite3_bind_int64(st, 1, run);
    int rc = pdb_step(p, st);
    while (rc == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0);
        for (; rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == t; rc = pdb_step(p, st)) {
            if (sqlite3_column_type(st, 1) == SQLITE_NULL)
                continue;   /* nothing changed then */
            int64_t id = sqlite3_column_int64(st, 1), b = sqlite3_column_int64(st, 2);
            size_t lo = 0, hi = k.nids;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (k.ids[mid] < id)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t at = lo < k.nids && k.ids[lo] == id ? lo : k.nids;
            int hold = of_key[fkeys_find(&k, id)];
            now[hold] = sat_add(now[hold], b - cur[at]);
            cur[at] = b;
        }
        if (hs->n == cap) {
            cap *= 2;
            hs->t = xrealloc(hs->t, cap * sizeof *hs->t);
            hs->v = xrealloc(hs->v, cap * hs->nv * sizeof *hs->v);
        }
        int64_t *v = hs->v + hs->n * hs->nv;
        int64_t sum = 0;
        for (size_t i = 0; i < nh; i++) {
            v[i] = now[i];
            sum = sat_add(sum, now[i]);
            if (now[i] > h[i].most)
                h[i].most = now[i];
        }
        v[nh] = sat_add(sum, now[nh]);
        hs->t[hs->n++] = t;
    }
    sqlite3_finalize(st);
    free(now);
    free(cur);
    free(of_key);
    fkeys_free(&k);
}

/* The snapshots' bars on a time axis from x0 (the start) to x1 (the end),
 * then the end's bar; holders sorted since the series was read: `order`
 * gives each shown one's place in the series. */
static void snapshot_bars(FILE *f, const run_info *r, const holder *h, size_t top, const size_t *order,
                          const heap_series *hs, int64_t end, const int64_t *end_v, double x0, double x1, double y0,
                          double scale)
{
    double dur = (double)(r->duration_ns > 0 ? r->duration_ns : 1);
    size_t nbars = hs->n < PLOT_HEAP_MAX_BARS ? hs->n : PLOT_HEAP_MAX_BARS;
    double w = (x1 - x0) / (double)(nbars + 2) * 0.7;
    if (w > 24)
        w = 24;
    if (w < 1)
        w = 1;
    int64_t vals[PLOT_HEAP_TOP];
    char when[48];
    for (size_t b = 0; b < nbars; b++) {
        size_t best = b * hs->n / nbars;   /* the highest of the snapshots this bar stands for */
        for (size_t i = best + 1; i < (b + 1) * hs->n / nbars; i++)
            if (hs->v[i * hs->nv + hs->nv - 1] > hs->v[best * hs->nv + hs->nv - 1])
                best = i;
        const int64_t *v = hs->v + best * hs->nv;
        for (size_t i = 0; i < top; i++)
            vals[i] = v[order[i]];
        double t = (double)hs->t[best];
        snprintf(when, sizeof when, "snapshot at %.3f s", t / 1e9);
        heap_bar(f, h, top, vals, v[hs->nv - 1], x0 + (x1 - x0) * (t < dur ? t : dur) / dur - w / 2, w, y0, scale,
                 when, 0);
    }
    heap_bar(f, h, top, end_v, end, x1 - w / 2, w, y0, scale, "end", 1);
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">start</text>\n", x0, y0 + 18);
    double step = plot_nice_step(dur, 6);
    for (double t = step; t < dur - step / 3; t += step) {
        fmt_ns(when, sizeof when, t);
        fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0 + (x1 - x0) * t / dur, y0 + 18, when);
    }
}

int cmd_plot_heap(pdb *p, const pdb_opts *o, const run_info *r)
{
    if (!r->heap_tracked)
        pdb_die("plot heap: run %lld did not track heap in use (run it with PIANO_HEAP=1)", (long long)r->id);
    fnset s;
    pdb_load_functions(p, r, o->thread_set ? o->thread : -1, AGG_BY_LINE, &s);
    holder *h = xcalloc(s.n + 1, sizeof *h);
    for (size_t i = 0; i < s.n; i++)
        h[i] = (holder){s.v[i].label, s.v[i].inuse_bytes, s.v[i].peak_inuse_bytes, 0, i};
    /* Snapshots sum the threads: none with --thread. */
    heap_series hs = {0};
    int series = !o->thread_set && p->has_inuse && pdb_snapshot_count(p, r->id) > 0;
    if (series)
        load_series(p, r->id, h, s.n, &hs);
    qsort(h, s.n, sizeof *h, by_held);
    size_t top = 0, order[PLOT_HEAP_TOP];
    int64_t end = 0, peak_sum = 0, end_v[PLOT_HEAP_TOP], peak_v[PLOT_HEAP_TOP];
    for (size_t i = 0; i < s.n; i++) {
        end = sat_add(end, h[i].end);
        peak_sum = sat_add(peak_sum, h[i].peak);
        if (top < PLOT_HEAP_TOP && held(&h[i]) > 0) {
            order[top] = h[i].row;
            end_v[top] = h[i].end;
            peak_v[top] = h[i].peak;
            top++;   /* sorted: the ones that held something come first */
        }
    }
    /* The run's peak; the functions' figures at it when a thread is picked. */
    int64_t peak = o->thread_set ? peak_sum : r->heap_peak_bytes;
    double ph = HH - HT - HB, pw = HW - HL - HR, y0 = HH - HB;
    double vmax = (double)(peak > end ? peak : end);
    for (size_t i = 0; i < hs.n; i++)   /* a snapshot above the kept peak: one within 1/64 of it (heap.c) */
        if ((double)hs.v[i * hs.nv + hs.nv - 1] > vmax)
            vmax = (double)hs.v[i * hs.nv + hs.nv - 1];
    double step = plot_nice_step(vmax > 0 ? vmax : 1, 5), ymax = ceil((vmax > 0 ? vmax : 1) / step) * step;
    double scale = ph / ymax;

    FILE *f = out_open(o, 0);
    svg_begin(f, HW, HH, SVG_CHART_CSS "rect:hover{opacity:0.7}\n", "#fff");
    char buf[512], a[32], b[32];
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">Heap in use: run %lld (", HW / 2, (long long)r->id);
    fmt_cut(buf, sizeof buf, r->command, 60);
    xml_str(f, buf);
    fputs(")</text>\n", f);
    fmt_bytes(a, sizeof a, peak);
    fmt_bytes(b, sizeof b, end);
    if (series)
        snprintf(buf, sizeof buf, "peak %s, %s still in use at the end; %zu snapshot%s (PIANO_INTERVAL)%s, the peak "
                 "apart (its time is not kept)", a, b, hs.n, hs.n == 1 ? "" : "s",
                 hs.n > PLOT_HEAP_MAX_BARS ? ", each bar the highest of its neighbours" : "");
    else
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
    if (series) {   /* the time axis over 5/6 of the width, the peak in the last sixth */
        double x1 = HL + pw * 5 / 6 - 24, w = 24;
        snapshot_bars(f, r, h, top, order, &hs, end, end_v, HL + 24, x1, y0, scale);
        heap_bar(f, h, top, peak_v, peak, HL + pw * 11 / 12 - w / 2, w, y0, scale, "peak", 1);
    } else {
        double slot = pw / 3, w = slot * 0.5;
        heap_bar(f, h, 0, NULL, 0, HL + (slot - w) / 2, w, y0, scale, "start", 1);
        heap_bar(f, h, top, peak_v, peak, HL + slot + (slot - w) / 2, w, y0, scale, "peak", 1);
        heap_bar(f, h, top, end_v, end, HL + slot * 2 + (slot - w) / 2, w, y0, scale, "end", 1);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
               "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\"/>\n",
            HL, y0, HL + pw, y0, HL, HT, HL, y0);
    for (size_t i = 0; i <= top; i++) {   /* the legend */
        double y = HT + 18.0 * (double)i;
        char name[64];
        fmt_cut(name, sizeof name, i < top ? h[i].label : "other functions", 26);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.1f\" "
                   "y=\"%.1f\">", HL + pw + 16, y, colours[i < top ? i : PLOT_HEAP_TOP], HL + pw + 34, y + 11);
        xml_str(f, name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    out_close(f, o);
    free(hs.t);
    free(hs.v);
    free(h);
    fnset_free(&s);
    return 0;
}
