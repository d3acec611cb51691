/*
 * plot.c - `piano-db plot frames`: an SVG chart of frame times.
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

/* A round step near range/target: 1, 2 or 5 times a power of ten. */
static double nice_step(double range, int target)
{
    if (range <= 0)
        return 1;
    double raw = range / target, mag = pow(10, floor(log10(raw))), r = raw / mag;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

/* Axis label for a time: 0, 250us, 1.5ms, 2s (no trailing zeros). */
static void axis_ns(char *buf, size_t n, double ns)
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

int cmd_plot(pdb *p, const pdb_opts *o)
{
    if (o->npos < 1 || strcmp(o->pos[0], "frames"))
        pdb_usage_die("plot: what to plot? (plot frames [RUN|TAG])");
    int64_t id;
    pdb_pick_runs(p, o, 1, 1, "plot frames [RUN|TAG]", &id);
    run_info r;
    pdb_run_load(p, id, &r);
    long thread = o->thread_set ? o->thread : -1;

    /* Pass 1: how many frames are kept, the longest; the spike threshold
     * from the frame histogram, or (runs stored before schema 5) from this pass. */
    piano_hist *h = xcalloc(1, sizeof *h);
    int has_hist = pdb_frame_hist(p, r.id, thread, h);
    size_t n = 0;
    int64_t maxv = 0;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT total_ns FROM frames WHERE run = ?1 AND (?2 < 0 OR thread = ?2)");
    sqlite3_bind_int64(st, 1, r.id);
    sqlite3_bind_int64(st, 2, thread);
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0);
        n++;
        if (t > maxv)
            maxv = t;
    }
    sqlite3_finalize(st);
    double median = has_hist ? (double)piano_hist_quantile(h, 0.5) * r.ns_per_tick
                             : pdb_frames_median(p, r.id, thread, (int64_t)n);
    double spike_ns = has_hist ? piano_frame_spike_ns(h, r.ns_per_tick) : 2 * median;
    int64_t all = pdb_frame_count(p, r.id, thread);
    size_t nspikes = 0;
    st = pdb_prepare(p, "SELECT count(*) FROM frames WHERE run = ?1 AND (?2 < 0 OR thread = ?2) AND total_ns > ?3");
    sqlite3_bind_int64(st, 1, r.id);
    sqlite3_bind_int64(st, 2, thread);
    sqlite3_bind_double(st, 3, spike_ns);
    if (pdb_step(p, st) == SQLITE_ROW)
        nspikes = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    free(h);

    FILE *f = out_open(o, 0);
    fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n", PW, PH, PW, PH);
    fputs("<style type=\"text/css\">\n"
          "text{font-family:Verdana,'DejaVu Sans',sans-serif;font-size:12px;fill:#222}\n"
          "#title{font-size:17px;text-anchor:middle}\n"
          "#sub{text-anchor:middle;fill:#555}\n"
          ".yl{text-anchor:end}.xl{text-anchor:middle}\n"
          ".grid{stroke:#ddd;stroke-width:1}.axis{stroke:#444;stroke-width:1}\n"
          ".b{fill:#4a7bb7}.s{fill:#d62728}.b:hover,.s:hover{fill:#f0a000}\n"
          ".med{stroke:#2a9d2a;stroke-width:1.2;stroke-dasharray:6 4}\n"
          "</style>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", PW, PH);
    char buf[512], a[32], b[32];
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">Frame times: run %lld (", PW / 2, (long long)r.id);
    fmt_cut(buf, sizeof buf, r.command, 80);
    xml_str(f, buf);
    fputs(")</text>\n", f);
    fmt_ns(a, sizeof a, median);
    fmt_ns(b, sizeof b, (double)maxv);
    size_t nb = n > PLOT_MAX_BARS ? PLOT_MAX_BARS : n;
    char kept[96] = "";
    if ((int64_t)n < all)
        snprintf(kept, sizeof kept, " (%zu kept: the first, spikes and a sample)", n);
    snprintf(buf, sizeof buf, "%lld frames%s%s, median %s, max %s, %zu spike%s (> 2x median, red)%s", (long long)all,
             thread >= 0 ? " of one thread" : "", kept, a, b, nspikes, nspikes == 1 ? "" : "s",
             n > nb ? "; each bar: the longest frame of its bucket" : "");
    fprintf(f, "<text id=\"sub\" x=\"%d\" y=\"44\">", PW / 2);
    xml_str(f, buf);
    fputs("</text>\n", f);

    double pw = PW - ML - MR, ph = PH - MT - MB, x0 = ML, y0 = PH - MB;
    /* Y axis: nice ticks up to a nice maximum above the longest frame. */
    double step = nice_step((double)(maxv > 0 ? maxv : 1), 5);
    double ymax = ceil((double)(maxv > 0 ? maxv : 1) / step) * step;
    for (double v = 0; v <= ymax + step / 2; v += step) {
        double y = y0 - v / ymax * ph;
        axis_ns(a, sizeof a, v);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"yl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                x0, y, x0 + pw, y, x0 - 6, y + 4, a);
    }
    fprintf(f, "<text transform=\"translate(16,%.1f) rotate(-90)\" class=\"xl\">frame time</text>\n",
            MT + ph / 2);
    /* X axis: frame numbers (1-based position among the frames shown). */
    if (n) {
        double xstep = nice_step((double)n, 8);
        if (xstep < 1)
            xstep = 1;
        for (double v = 0; v <= (double)n; v += xstep) {
            double x = x0 + v / (double)n * pw;
            fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                       "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">%.0f</text>\n",
                    x, y0, x, y0 + 5, x, y0 + 18, v);
        }
    }
    fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%d\">frame</text>\n", x0 + pw / 2, PH - 10);

    fputs("<g id=\"bars\">\n", f);
    /* Pass 2: bar i is frames [i*n/nb, (i+1)*n/nb) in order, drawn when its last one is read. */
    st = pdb_prepare(p, "SELECT seq, total_ns FROM frames WHERE run = ?1 AND (?2 < 0 OR thread = ?2) ORDER BY seq");
    sqlite3_bind_int64(st, 1, r.id);
    sqlite3_bind_int64(st, 2, thread);
    size_t at = 0;
    for (size_t i = 0; i < nb; i++) {
        size_t lo = i * n / nb, hi = (i + 1) * n / nb, sp = 0;
        int64_t seq_lo = 0, seq_hi = 0, seq_best = 0, best = -1;
        for (; at < hi && pdb_step(p, st) == SQLITE_ROW; at++) {
            int64_t seq = sqlite3_column_int64(st, 0), t = sqlite3_column_int64(st, 1);
            if (at == lo)
                seq_lo = seq;
            seq_hi = seq;
            if (t > best) {
                best = t;
                seq_best = seq;
            }
            sp += (double)t > spike_ns;
        }
        if (best < 0)
            break;   /* the table changed under us */
        double v = (double)best;
        double h = v / ymax * ph, x = x0 + (double)lo / (double)n * pw;
        double w = (double)(hi - lo) / (double)n * pw;
        double gap = w > 3 ? 1 : 0;
        fmt_ns(a, sizeof a, v);
        fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>",
                sp ? "s" : "b", x, y0 - h, w - gap > 0.3 ? w - gap : 0.3, h < 0.5 && v > 0 ? 0.5 : h);
        if (hi - lo == 1)
            snprintf(buf, sizeof buf, "frame %lld: %s%s", (long long)seq_lo, a, sp ? " (spike)" : "");
        else
            snprintf(buf, sizeof buf, "frames %lld-%lld: max %s (frame %lld), %zu spike%s",
                     (long long)seq_lo, (long long)seq_hi, a, (long long)seq_best, sp,
                     sp == 1 ? "" : "s");
        xml_str(f, buf);
        fputs("</title></rect>\n", f);
    }
    sqlite3_finalize(st);
    fputs("</g>\n", f);
    if (n) {
        double y = y0 - median / ymax * ph;
        fmt_ns(a, sizeof a, median);
        fprintf(f, "<line class=\"med\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" style=\"text-anchor:end;fill:#2a9d2a\">median %s</text>\n",
                x0, y, x0 + pw, y, x0 + pw, y - 4, a);
    } else {
        fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%.1f\">No frames in this run</text>\n",
                x0 + pw / 2, MT + ph / 2);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
               "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            x0, y0, x0 + pw, y0, x0, (double)MT, x0, y0);
    fputs("</svg>\n", f);
    out_close(f, o);
    pdb_run_free(&r);
    return 0;
}
