/*
 * timeline.c - `piano-db plot timeline [RUN|TAG]`: a run's self time over
 * time, from its snapshots (PIANO_INTERVAL): a bar per interval between two
 * snapshots (the start and the end of the run count as snapshots), its height
 * the self time spent in it, stacked by function: the TIMELINE_TOP functions
 * with the most self time in the run, then "other". Past TIMELINE_MAX_BARS
 * intervals, consecutive ones share a bar (their sums). Self times as
 * measured (not overhead-corrected), threads summed: on several threads an
 * interval may hold more self time than its length.
 */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TIMELINE_TOP 8
#define TIMELINE_MAX_BARS 1000
#define TW 1200
#define TH 480
#define TL 78
#define TR 200   /* the legend */
#define TT 58
#define TB 52

static const char *const colours[TIMELINE_TOP + 1] = {
    "#4a7bb7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac",
};

typedef struct {
    fkeys k;
    int top[TIMELINE_TOP], ntop;   /* keys shown by name, most self time first */
    int *slot;                     /* per key: its series (ntop: other) */
    int64_t *times;                /* bar edges: nbars + 1 */
    double *v;                     /* nbars x (ntop + 1): self ns */
    size_t nbars;
} timeline;

/* Each key's self time in the run (its stored figures), the top ones chosen. */
static void choose_top(pdb *p, int64_t run, timeline *tl)
{
    int64_t *total = xcalloc((size_t)tl->k.nkeys + 1, sizeof *total);
    sqlite3_stmt *st = pdb_prepare(p, "SELECT fn, sum(self_ns) FROM stats WHERE run = ? GROUP BY fn");
    sqlite3_bind_int64(st, 1, run);
    while (pdb_step(p, st) == SQLITE_ROW) {
        int key = fkeys_find(&tl->k, sqlite3_column_int64(st, 0));
        total[key] = sat_add(total[key], sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    tl->slot = xmalloc(((size_t)tl->k.nkeys + 1) * sizeof *tl->slot);
    for (int key = 0; key < tl->k.nkeys; key++)
        tl->slot[key] = -1;
    for (tl->ntop = 0; tl->ntop < TIMELINE_TOP; tl->ntop++) {
        int best = -1;
        for (int key = 0; key < tl->k.nkeys; key++)
            if (tl->slot[key] < 0 && total[key] > 0 && (best < 0 || total[key] > total[best]))
                best = key;
        if (best < 0)
            break;
        tl->slot[best] = tl->ntop;
        tl->top[tl->ntop] = best;
    }
    for (int key = 0; key < tl->k.nkeys; key++)
        if (tl->slot[key] < 0)
            tl->slot[key] = tl->ntop;
    free(total);
}

/* The bars' edges: every snapshot time, the start and the end; n intervals
 * into nbars bars. */
static size_t load_edges(pdb *p, const run_info *r, int64_t **edges)
{
    size_t n = 0, cap = 64;
    int64_t *e = xmalloc(cap * sizeof *e);
    e[n++] = 0;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT t_ns FROM snapshot_times WHERE run = ? AND t_ns > 0 ORDER BY t_ns");
    sqlite3_bind_int64(st, 1, r->id);
    while (pdb_step(p, st) == SQLITE_ROW) {
        if (n + 1 >= cap)
            e = xrealloc(e, (cap *= 2) * sizeof *e);
        e[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (r->duration_ns > e[n - 1])
        e[n++] = r->duration_ns;
    *edges = e;
    return n;   /* n - 1 intervals */
}

/* Self time per interval and series: each function's snapshot rows give its
 * growth since its previous row, all of it in the interval ending there; the
 * end of the run's is its stored figure's growth since its last row. */
static void load_values(pdb *p, const run_info *r, timeline *tl, const int64_t *edges, size_t nint)
{
    size_t ns = (size_t)tl->ntop + 1;
    tl->nbars = nint < TIMELINE_MAX_BARS ? nint : TIMELINE_MAX_BARS;
    tl->v = xcalloc(tl->nbars * ns, sizeof *tl->v);
    tl->times = xmalloc((tl->nbars + 1) * sizeof *tl->times);
    for (size_t b = 0; b <= tl->nbars; b++)
        tl->times[b] = edges[b * nint / tl->nbars];
    int64_t *last = xcalloc(tl->k.nids + 1, sizeof *last);   /* per id: its self at its latest row */
    sqlite3_stmt *st = pdb_prepare(p,
        "SELECT fn, t_ns, self_ns FROM snapshots WHERE run = ?1 "
        "UNION ALL SELECT fn, ?2, sum(self_ns) FROM stats WHERE run = ?1 GROUP BY fn ORDER BY 2, 1");
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int64(st, 2, edges[nint]);
    size_t interval = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), t = sqlite3_column_int64(st, 1), self = sqlite3_column_int64(st, 2);
        while (interval + 1 < nint && edges[interval + 1] < t)
            interval++;
        size_t lo = 0, hi = tl->k.nids;   /* id's place among the run's ids */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (tl->k.ids[mid] < id)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t at = lo < tl->k.nids && tl->k.ids[lo] == id ? lo : tl->k.nids;
        int64_t grew = self - last[at];
        last[at] = self;
        if (grew > 0)
            tl->v[(interval * tl->nbars / nint) * ns + (size_t)tl->slot[fkeys_find(&tl->k, id)]] += (double)grew;
    }
    sqlite3_finalize(st);
    free(last);
}

static void draw(FILE *f, const run_info *r, const timeline *tl)
{
    size_t ns = (size_t)tl->ntop + 1;
    double pw = TW - TL - TR, ph = TH - TT - TB, x0 = TL, y0 = TH - TB, maxv = 0;
    int other = 0;   /* any self time outside the top functions */
    for (size_t b = 0; b < tl->nbars; b++) {
        double sum = 0;
        for (size_t s = 0; s < ns; s++)
            sum += tl->v[b * ns + s];
        other |= tl->v[b * ns + ns - 1] > 0;
        if (sum > maxv)
            maxv = sum;
    }
    double step = plot_nice_step(maxv > 0 ? maxv : 1, 5), ymax = ceil((maxv > 0 ? maxv : 1) / step) * step;
    double tend = (double)tl->times[tl->nbars] > 0 ? (double)tl->times[tl->nbars] : 1;
    /* The chart's rules, on fewer lines than SVG_CHART_CSS (as written since plot timeline came). */
    svg_begin(f, TW, TH,
              "text{" SVG_FONT ";fill:#222}\n"
              "#title{font-size:17px;text-anchor:middle}#sub{text-anchor:middle;fill:#555}\n"
              ".yl{text-anchor:end}.xl{text-anchor:middle}.grid{stroke:#ddd;stroke-width:1}"
              ".axis{stroke:#444;stroke-width:1}rect.v:hover{opacity:0.7}\n",
              "#fff");
    char buf[512], a[32], b2[32];
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">Self time over time: run %lld (", (TW - TR) / 2, (long long)r->id);
    fmt_cut(buf, sizeof buf, r->command, 70);
    xml_str(f, buf);
    fprintf(f, ")</text>\n<text id=\"sub\" x=\"%d\" y=\"44\">", (TW - TR) / 2);
    snprintf(buf, sizeof buf, "self time per interval between snapshots, threads summed; %zu bar%s over %.3g s",
             tl->nbars, tl->nbars == 1 ? "" : "s", tend / 1e9);
    xml_str(f, buf);
    fputs("</text>\n", f);
    for (double v = 0; v <= ymax + step / 2; v += step) {
        double y = y0 - v / ymax * ph;
        axis_ns(a, sizeof a, v);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"yl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0, y, x0 + pw, y, x0 - 6, y + 4, a);
    }
    double xstep = plot_nice_step(tend / 1e9, 8);
    for (double t = 0; t <= tend / 1e9 + xstep / 1e6; t += xstep) {
        double x = x0 + t * 1e9 / tend * pw;
        fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%gs</text>\n", x, y0, x, y0 + 5, x, y0 + 18, t);
    }
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%d\">time since the run's start</text>\n"
               "<text transform=\"translate(16,%.1f) rotate(-90)\" class=\"xl\">self time in the interval</text>\n",
            x0 + pw / 2, TH - 10, TT + ph / 2);
    fputs("<g id=\"bars\">\n", f);
    for (size_t b = 0; b < tl->nbars; b++) {
        double xa = x0 + (double)tl->times[b] / tend * pw, xb = x0 + (double)tl->times[b + 1] / tend * pw, y = y0;
        double w = xb - xa > 2 ? xb - xa - 1 : xb - xa > 0.3 ? xb - xa : 0.3;
        for (size_t s = 0; s < ns; s++) {
            double v = tl->v[b * ns + s], h = v / ymax * ph;
            if (v <= 0)
                continue;
            y -= h;
            fmt_ns(a, sizeof a, v);
            fprintf(f, "<rect class=\"v\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>",
                    xa, y, w, h, colours[s]);
            snprintf(b2, sizeof b2, "%.3f-%.3f s", (double)tl->times[b] / 1e9, (double)tl->times[b + 1] / 1e9);
            xml_str(f, s < (size_t)tl->ntop ? tl->k.labels[tl->top[s]] : "other");
            fprintf(f, ": %s in %s</title></rect>\n", a, b2);
        }
    }
    fputs("</g>\n<g id=\"legend\">\n", f);
    for (size_t s = 0; s < ns; s++) {
        if (s == (size_t)tl->ntop && !other)
            break;
        double y = TT + 20.0 * (double)s;
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%.1f\">",
                TW - TR + 12, y, colours[s], TW - TR + 30, y + 10);
        fmt_cut(buf, sizeof buf, s < (size_t)tl->ntop ? tl->k.labels[tl->top[s]] : "other", 22);
        xml_str(f, buf);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
    if (maxv <= 0)
        fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">No self time in this run</text>\n", x0 + pw / 2,
                TT + ph / 2);
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
               "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n</svg>\n",
            x0, y0, x0 + pw, y0, x0, (double)TT, x0, y0);
}

int plot_timeline(pdb *p, const pdb_opts *o)
{
    if (o->thread_set)
        pdb_usage_die("plot timeline: snapshots sum the threads: no --thread");
    int64_t id;
    pdb_pick_runs(p, o, 1, 1, "plot timeline [RUN|TAG]", &id);
    run_info r;
    pdb_run_load(p, id, &r);
    if (pdb_snapshot_count(p, id) == 0)
        pdb_die("run %lld has no snapshots: plot timeline needs a run made with PIANO_INTERVAL=SECS", (long long)id);
    timeline tl;
    memset(&tl, 0, sizeof tl);
    fkeys_load(p, id, &tl.k);
    choose_top(p, id, &tl);
    int64_t *edges;
    size_t n = load_edges(p, &r, &edges);
    load_values(p, &r, &tl, edges, n > 1 ? n - 1 : 1);
    FILE *f = out_open(o, 0);
    draw(f, &r, &tl);
    out_close(f, o);
    free(edges);
    free(tl.v);
    free(tl.times);
    free(tl.slot);
    fkeys_free(&tl.k);
    pdb_run_free(&r);
    return 0;
}
