/*
 * plot.c - `piano-db plot`: the dispatch to its charts (heap: plot_heap.c,
 * timeline: timeline.c), and `plot frames`, an SVG chart of frame times. The
 * charts share svg.c (the document's head, the axes), not each other.
 *
 * One bar per frame in order, or, past PLOT_MAX_BARS frames, one bar per
 * bucket of consecutive frames drawn at the bucket's longest frame, so a
 * spike is never averaged away and a million frames make 2000 marks. Spikes
 * (total > 2x the median, as report --frames) are red; the median is a dashed
 * line. Each bar's <title> names its frame(s) and time. Streamed: two passes
 * over the frames table (the longest frame, then the bars), nothing per frame
 * held, so a run of 100 M frames plots in constant memory. The median is that
 * of every frame of the run, kept or not (its frame histogram).
 */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_MAX_BARS 2000
#define PW 1200
#define PH 440
#define ML 78
#define MR 20
#define MT 58
#define MB 52

/* What the chart shows of a run (or thread) and the geometry of its plot area. */
typedef struct {
    const run_info *r;
    long thread;
    size_t n, nb;          /* frames kept, bars */
    int64_t maxv, all;     /* the longest kept frame; every frame, kept or not */
    double median, spike_ns;
    size_t nspikes;
    double pw, ph, x0, y0, ymax;
} plot;

/* Pass 1: how many frames are kept, the longest; the median and the spike
 * threshold (from the frame histogram, or from the table before schema 5). */
static void plot_measure(pdb *p, plot *pl)
{
    const run_info *r = pl->r;
    frame_split split;
    frames_split(p, r, pl->thread, 1, &split);
    pl->median = split.median_ns;
    pl->spike_ns = split.spike_ns;
    pl->all = pdb_frame_count(p, r->id, pl->thread);
    frame_scan sc;
    frame_scan_open(&sc, p, r->id, pl->thread, 0, INT64_MIN);
    for (const piano_frame_row *f; (f = frame_scan_next(&sc));) {
        pl->n++;
        if (f->total_ns > pl->maxv)
            pl->maxv = f->total_ns;
        pl->nspikes += (double)f->total_ns > pl->spike_ns;
    }
    frame_scan_close(&sc);
    pl->nb = pl->n > PLOT_MAX_BARS ? PLOT_MAX_BARS : pl->n;
    pl->pw = PW - ML - MR;
    pl->ph = PH - MT - MB;
    pl->x0 = ML;
    pl->y0 = PH - MB;
}

/* The document's head, the style, the title and the subtitle. */
static void plot_head(FILE *f, const plot *pl)
{
    svg_begin(f, PW, PH,
              SVG_CHART_CSS ".b{fill:#4a7bb7}.s{fill:#d62728}.b:hover,.s:hover{fill:#f0a000}\n"
                            ".med{stroke:#2a9d2a;stroke-width:1.2;stroke-dasharray:6 4}\n",
              "#fff");
    char buf[512], a[32], b[32];
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">Frame times: run %lld (", PW / 2, (long long)pl->r->id);
    fmt_cut(buf, sizeof buf, pl->r->command, 80);
    xml_str(f, buf);
    fputs(")</text>\n", f);
    fmt_ns(a, sizeof a, pl->median);
    fmt_ns(b, sizeof b, (double)pl->maxv);
    char kept[96] = "";
    if ((int64_t)pl->n < pl->all)
        snprintf(kept, sizeof kept, " (%zu kept: the first, spikes and a sample)", pl->n);
    snprintf(buf, sizeof buf, "%lld frames%s%s, median %s, max %s, %zu spike%s (> 2x median, red)%s",
             (long long)pl->all, pl->thread >= 0 ? " of one thread" : "", kept, a, b, pl->nspikes,
             pl->nspikes == 1 ? "" : "s", pl->n > pl->nb ? "; each bar: the longest frame of its bucket" : "");
    fprintf(f, "<text id=\"sub\" x=\"%d\" y=\"44\">", PW / 2);
    xml_str(f, buf);
    fputs("</text>\n", f);
}

/* Y axis: nice ticks up to a nice maximum above the longest frame (sets
 * ymax); X axis: frame numbers (1-based position among the frames shown). */
static void plot_axes(FILE *f, plot *pl)
{
    char a[32];
    double step = plot_nice_step((double)(pl->maxv > 0 ? pl->maxv : 1), 5);
    pl->ymax = ceil((double)(pl->maxv > 0 ? pl->maxv : 1) / step) * step;
    for (double v = 0; v <= pl->ymax + step / 2; v += step) {
        double y = pl->y0 - v / pl->ymax * pl->ph;
        axis_ns(a, sizeof a, v);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"yl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                pl->x0, y, pl->x0 + pl->pw, y, pl->x0 - 6, y + 4, a);
    }
    fprintf(f, "<text transform=\"translate(16,%.1f) rotate(-90)\" class=\"xl\">frame time</text>\n",
            MT + pl->ph / 2);
    if (pl->n) {
        double xstep = plot_nice_step((double)pl->n, 8);
        if (xstep < 1)
            xstep = 1;
        for (double v = 0; v <= (double)pl->n; v += xstep) {
            double x = pl->x0 + v / (double)pl->n * pl->pw;
            fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                       "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%.0f</text>\n",
                    x, pl->y0, x, pl->y0 + 5, x, pl->y0 + 18, v);
        }
    }
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%d\">frame</text>\n", pl->x0 + pl->pw / 2, PH - 10);
}

/* One bar: frames lo..hi (hi exclusive) of the kept ones, the longest best
 * (frame seq_best), sp of them spikes. */
static void plot_bar(FILE *f, const plot *pl, size_t lo, size_t hi, int64_t seq_lo, int64_t seq_hi,
                     int64_t seq_best, int64_t best, size_t sp)
{
    char a[32], buf[256];
    double v = (double)best;
    double h = v / pl->ymax * pl->ph, x = pl->x0 + (double)lo / (double)pl->n * pl->pw;
    double w = (double)(hi - lo) / (double)pl->n * pl->pw;
    double gap = w > 3 ? 1 : 0;
    fmt_ns(a, sizeof a, v);
    fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>",
            sp ? "s" : "b", x, pl->y0 - h, w - gap > 0.3 ? w - gap : 0.3, h < 0.5 && v > 0 ? 0.5 : h);
    if (hi - lo == 1)
        snprintf(buf, sizeof buf, "frame %lld: %s%s", (long long)seq_lo, a, sp ? " (spike)" : "");
    else
        snprintf(buf, sizeof buf, "frames %lld-%lld: max %s (frame %lld), %zu spike%s", (long long)seq_lo,
                 (long long)seq_hi, a, (long long)seq_best, sp, sp == 1 ? "" : "s");
    xml_str(f, buf);
    fputs("</title></rect>\n", f);
}

/* Pass 2: bar i is frames [i*n/nb, (i+1)*n/nb) in order, drawn when its last one is read. */
static void plot_bars(pdb *p, FILE *f, const plot *pl)
{
    fputs("<g id=\"bars\">\n", f);
    frame_scan sc;
    frame_scan_open(&sc, p, pl->r->id, pl->thread, 0, INT64_MIN);
    const piano_frame_row *fr;
    size_t at = 0;
    for (size_t i = 0; i < pl->nb; i++) {
        size_t lo = i * pl->n / pl->nb, hi = (i + 1) * pl->n / pl->nb, sp = 0;
        int64_t seq_lo = 0, seq_hi = 0, seq_best = 0, best = -1;
        for (; at < hi && (fr = frame_scan_next(&sc)); at++) {
            int64_t seq = fr->seq, t = fr->total_ns;
            if (at == lo)
                seq_lo = seq;
            seq_hi = seq;
            if (t > best) {
                best = t;
                seq_best = seq;
            }
            sp += (double)t > pl->spike_ns;
        }
        if (best < 0)
            break;   /* the table changed under us */
        plot_bar(f, pl, lo, hi, seq_lo, seq_hi, seq_best, best, sp);
    }
    frame_scan_close(&sc);
    fputs("</g>\n", f);
}

int cmd_plot(pdb *p, const pdb_opts *o)
{
    if (o->npos >= 1 && !strcmp(o->pos[0], "timeline"))
        return plot_timeline(p, o);
    int heap = o->npos >= 1 && !strcmp(o->pos[0], "heap");
    if (o->npos < 1 || (strcmp(o->pos[0], "frames") && !heap))
        pdb_usage_die("plot: what to plot? (plot frames|heap|timeline [RUN|TAG])");
    int64_t id;
    pdb_pick_runs(p, o, 1, 1, heap ? "plot heap [RUN|TAG]" : "plot frames [RUN|TAG]", &id);
    run_info r;
    pdb_run_load(p, id, &r);
    if (heap) {
        int rc = cmd_plot_heap(p, o, &r);
        pdb_run_free(&r);
        return rc;
    }
    plot pl = {.r = &r, .thread = o->thread_set ? o->thread : -1};
    plot_measure(p, &pl);

    FILE *f = out_open(o, 0);
    plot_head(f, &pl);
    plot_axes(f, &pl);
    plot_bars(p, f, &pl);
    char a[32];
    if (pl.n) {
        double y = pl.y0 - pl.median / pl.ymax * pl.ph;
        fmt_ns(a, sizeof a, pl.median);
        fprintf(f, "<line class=\"med\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" style=\"text-anchor:end;fill:#2a9d2a\">median %s</text>\n",
                pl.x0, y, pl.x0 + pl.pw, y, pl.x0 + pl.pw, y - 4, a);
    } else {
        fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">No frames in this run</text>\n",
                pl.x0 + pl.pw / 2, MT + pl.ph / 2);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
               "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            pl.x0, pl.y0, pl.x0 + pl.pw, pl.y0, pl.x0, (double)MT, pl.x0, pl.y0);
    fputs("</svg>\n", f);
    out_close(f, o);
    pdb_run_free(&r);
    return 0;
}
