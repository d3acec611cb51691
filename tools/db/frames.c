/*
 * frames.c - `piano-db report --frames`: one row per frame, with the self
 * time of the leading functions (the up to 6 functions with the most self
 * time summed over the frames shown) and spikes (total > 2x the median).
 *
 * Two passes over the frames table: the first sums self time per function
 * and collects totals for the median; the second streams the rows, so a run
 * with millions of frames never sits in memory beyond one total per frame.
 */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

#define LEAD_MAX 6

static int64_t *g_sums;
static char **g_labels;
static int cmp_lead(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (g_sums[x] != g_sums[y])
        return g_sums[x] > g_sums[y] ? -1 : 1;
    return strcmp(g_labels[x], g_labels[y]);
}

/* The bounded view of report --frames: the first frames, then every spike after them. */
#define FIRST_SHOWN 100
#define SPIKES_SHOWN 1000

int cmd_frames(pdb *p, const pdb_opts *o, const run_info *r)
{
    if (o->sort)
        pdb_usage_die("report: --sort does not apply to --frames (frames are listed in order)");
    long thread = o->thread_set ? o->thread : -1;
    fkeys k;
    fkeys_load(p, r->id, &k);
    int nreal = k.nkeys - 1; /* the last key is "(unknown)": never a leading function */

    /* The frames shown (frames_view) and the spike threshold: 2x the median
     * of every frame of the run (or thread), kept or not, from its histogram;
     * for runs stored before schema 5 (every frame in the table), from one
     * streamed pass over the table. */
    frame_split split;
    frames_split(p, r, thread, 1, &split);
    int has_hist = split.has_hist;
    double spike_ns = split.spike_ns;
    int64_t nkept = split.stored, nspikes = 0;
    int use_col = has_hist && thread < 0;   /* frames.spike is the run's: its index finds them */
    if (nkept < 0 && thread < 0 && r->frames_kept >= 0)
        nkept = r->frames_kept;
    if (nkept < 0)
        nkept = frames_count_rows(p, r->id, thread, NULL, 0);
    nspikes = frames_count_rows(p, r->id, thread, use_col ? "spike" : "total_ns > ?3", spike_ns);
    int64_t ntot = pdb_frame_count(p, r->id, thread);
    /* The bounded view: the first frames, then the spikes after them. */
    int64_t first = o->spikes ? 0 : o->all ? -1 : o->top_set ? o->top : FIRST_SHOWN;
    int64_t spikes = o->all ? (o->spikes ? -1 : 0) : o->spikes && o->top_set ? o->top : SPIKES_SHOWN;

    frame_window win = {first, spikes, use_col, spike_ns};

    /* Pass 1: per-function sums over the frames shown. */
    int64_t *sums = xcalloc((size_t)k.nkeys, sizeof *sums);
    int64_t maxseq = 0, shown = 0, shown_spikes = 0;
    long first_thread = -1;
    int many_threads = 0;
    frame_iter it;
    frame_iter_open(&it, p, &k, r->id, thread, &win);
    while (frame_iter_next(&it)) {
        long th = (long)it.thread;
        shown++;
        shown_spikes += (double)it.total_ns > spike_ns;
        if (it.seq > maxseq)
            maxseq = it.seq;
        if (first_thread < 0)
            first_thread = th;
        else if (th != first_thread)
            many_threads = 1;
        for (size_t i = 0; i < it.nfns; i++)
            sums[it.fns[i].key] = sat_add(sums[it.fns[i].key], it.fns[i].self_ns);
    }
    frame_iter_close(&it);

    /* Leading functions. */
    int *order = xmalloc((size_t)k.nkeys * sizeof *order);
    int nlead = 0;
    for (int i = 0; i < nreal; i++)
        if (sums[i] > 0)
            order[nlead++] = i;
    g_sums = sums;
    g_labels = k.labels;
    qsort(order, (size_t)nlead, sizeof *order, cmp_lead);
    if (nlead > LEAD_MAX)
        nlead = LEAD_MAX;
    int lead_of_key_cap = k.nkeys;
    int *col_of_key = xmalloc((size_t)lead_of_key_cap * sizeof *col_of_key);
    for (int i = 0; i < lead_of_key_cap; i++)
        col_of_key[i] = -1;
    for (int i = 0; i < nlead; i++)
        col_of_key[order[i]] = i;

    /* Table geometry, fixed before streaming. */
    char seqbuf[32];
    snprintf(seqbuf, sizeof seqbuf, "%lld", (long long)maxseq);
    size_t wframe = strlen(seqbuf) > 5 ? strlen(seqbuf) + 2 : 7;
    char leadhdr[LEAD_MAX][4096];
    size_t wlead[LEAD_MAX];
    const char *leadfull[LEAD_MAX];
    for (int i = 0; i < nlead; i++)
        leadfull[i] = k.labels[order[i]];
    /* shortened where nothing is lost, never two alike (names_fit) */
    size_t fixed = wframe + (many_threads ? 8 : 0) + 11 + 20, tw = term_width();
    size_t each = nlead && tw > fixed ? (tw - fixed) / (size_t)nlead : 0;
    char **leadfit = names_fit(leadfull, (size_t)nlead, each > 26 ? each - 2 : 24);
    for (int i = 0; i < nlead; i++) {
        snprintf(leadhdr[i], sizeof leadhdr[i], "%s", leadfit[i]);
        size_t w = utf8_width(leadhdr[i]) + 2;
        wlead[i] = w > 11 ? w : 11;
    }
    names_free(leadfit, (size_t)nlead);

    FILE *f = stdout;
    size_t printed = 0;
    if (o->json) {
        fputc('[', f);
    } else if (o->csv) {
        fputs("frame,thread,start_ns,total_ns,allocs,alloc_bytes,spike", f);
        for (int i = 0; i < nlead; i++) {
            fputc(',', f);
            csv_str(f, k.labels[order[i]]);
        }
        fputc('\n', f);
    } else {
        size_t total = wframe;
        print_pad(f, "Frame", wframe, 0);
        if (many_threads) {
            print_pad(f, "Thread", 8, 1);
            total += 8;
        }
        print_pad(f, "Total", 11, 1);
        total += 11;
        for (int i = 0; i < nlead; i++) {
            print_pad(f, leadhdr[i], wlead[i], 1);
            total += wlead[i];
        }
        print_pad(f, "Allocs", 9, 1);
        print_pad(f, "Bytes", 11, 1);
        total += 20;
        fputc('\n', f);
        for (size_t i = 0; i < total; i++)
            fputc('-', f);
        fputc('\n', f);
    }

    /* Pass 2: stream the rows. */
    frame_iter_open(&it, p, &k, r->id, thread, &win);
    while (frame_iter_next(&it)) {
        int64_t seq = it.seq, start = it.start_ns, total = it.total_ns, allocs = it.allocs, bytes = it.alloc_bytes;
        long th = (long)it.thread;
        int spike = (double)total > spike_ns;
        printed++;
        size_t n = it.nfns;
        const fnself *buf = it.fns;
        if (o->json) {
            fprintf(f, "%s\n  {\"frame\": %lld, \"thread\": %ld, \"start_ns\": %lld, \"total_ns\": %lld, "
                       "\"allocs\": %lld, \"alloc_bytes\": %lld, \"functions\": {",
                    printed > 1 ? "," : "", (long long)seq, th, (long long)start, (long long)total,
                    (long long)allocs, (long long)bytes);
            for (size_t i = 0; i < n; i++) {
                if (i)
                    fputs(", ", f);
                json_str(f, k.labels[buf[i].key]);
                fprintf(f, ": %lld", (long long)buf[i].self_ns);
            }
            fprintf(f, "}, \"spike\": %s}", spike ? "true" : "false");
            continue;
        }
        int64_t lead[LEAD_MAX];
        int has[LEAD_MAX] = {0};
        for (size_t i = 0; i < n; i++) {
            int c = col_of_key[buf[i].key];
            if (c >= 0) {
                lead[c] = buf[i].self_ns;
                has[c] = 1;
            }
        }
        if (o->csv) {
            fprintf(f, "%lld,%ld,%lld,%lld,%lld,%lld,%d", (long long)seq, th, (long long)start,
                    (long long)total, (long long)allocs, (long long)bytes, spike);
            for (int i = 0; i < nlead; i++)
                fprintf(f, ",%lld", has[i] ? (long long)lead[i] : 0LL);
            fputc('\n', f);
            continue;
        }
        char cell[64];
        const char *col = spike && p->color ? C_RED : NULL;
        if (col)
            fputs(col, f);
        snprintf(cell, sizeof cell, "%lld", (long long)seq);
        print_pad(f, cell, wframe, 0);
        if (many_threads) {
            snprintf(cell, sizeof cell, "%ld", th);
            print_pad(f, cell, 8, 1);
        }
        fmt_ns(cell, sizeof cell, (double)total);
        print_pad(f, cell, 11, 1);
        for (int i = 0; i < nlead; i++) {
            if (has[i])
                fmt_ns(cell, sizeof cell, (double)lead[i]);
            else
                snprintf(cell, sizeof cell, "-");
            print_pad(f, cell, wlead[i], 1);
        }
        snprintf(cell, sizeof cell, "%lld", (long long)allocs);
        print_pad(f, cell, 9, 1);
        fmt_bytes(cell, sizeof cell, bytes);
        print_pad(f, cell, 11, 1);
        if (spike)
            fputs("  <<", f);
        if (col)
            fputs(C_OFF, f);
        fputc('\n', f);
    }
    frame_iter_close(&it);

    /* What the view left out: on the table's last lines, on stderr for JSON and CSV. */
    int64_t eligible = o->spikes ? nspikes : nkept, hidden = eligible - (int64_t)printed;
    int64_t hidden_spikes = nspikes - shown_spikes;
    char left[256] = "";
    if (hidden > 0 && hidden_spikes > 0 && !o->spikes)
        snprintf(left, sizeof left, "(%lld more frame%s hidden, %lld of them spike%s: --all shows them)",
                 (long long)hidden, hidden == 1 ? "" : "s", (long long)hidden_spikes, hidden_spikes == 1 ? "" : "s");
    else if (hidden > 0)
        snprintf(left, sizeof left, "(%lld more %s%s hidden: --all shows them)", (long long)hidden,
                 o->spikes ? "spike" : "frame", hidden == 1 ? "" : "s");
    if (o->json) {
        fputs(printed ? "\n]\n" : "]\n", f);
    } else if (!o->csv) {
        if (*left)
            fprintf(f, "%s\n", left);
        fputc('\n', f);
        /* Always "frames" and "spikes": the footer's words are fixed for scripts. */
        fprintf(f, "%lld frames | %lld spikes (>2x median)", (long long)ntot, (long long)nspikes);
        if (nkept < ntot - (thread < 0 ? r->frames_dropped : 0))
            fprintf(f, " | %lld kept: %s", (long long)nkept,
                    nkept == 0 ? "none (PIANO_FRAMES=off)"
                               : r->spikes_unkept > 0 ? "the first, spikes up to the limit + a sample"
                                                      : "the first, all spikes + a sample");
        fputc('\n', f);
    }
    if ((o->json || o->csv) && *left)
        fprintf(stderr, "piano-db: report --frames: %s\n", left);
    free(col_of_key);
    free(order);
    free(sums);
    fkeys_free(&k);
    return 0;
}
