/*
 * frames.c - `piano-db report --frames`: one row per frame, with the self
 * time of the leading functions (the up to 6 functions with the most self
 * time summed over the frames shown) and spikes (total > 2x the median).
 *
 * Two passes over the frames shown: the first sums self time per function
 * (the leading functions, the table's geometry); the second streams the rows,
 * so a run with millions of frames never sits in memory.
 */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

#define LEAD_MAX 6
#define LEAD_MINW 18 /* a leading function's column: a name of 16 and its gap */

/* The bounded view of report --frames: the first frames, then every spike after them. */
#define FIRST_SHOWN 100
#define SPIKES_SHOWN 1000

/* What report --frames shows of a run (or thread), and the counts its footer states. */
typedef struct {
    long thread;
    frame_window win;
    int64_t nkept, nspikes, ntot;
} frames_plan;

/* The frames shown (the window) and the spike threshold: 2x the median of
 * every frame of the run (or thread), kept or not, from its histogram; for
 * runs stored before schema 5 (every frame in the table), from the table. */
static void plan_frames(pdb *p, const pdb_opts *o, const run_info *r, frames_plan *pl)
{
    long thread = pl->thread = o->thread_set ? o->thread : -1;
    frame_split split;
    frames_split(p, r, thread, 1, &split);
    int use_col = split.has_hist && thread < 0;   /* frames.spike is the run's: its index finds them */
    pl->nkept = split.stored;
    if (pl->nkept < 0 && thread < 0 && r->frames_kept >= 0)
        pl->nkept = r->frames_kept;
    if (pl->nkept < 0)
        pl->nkept = frames_count_rows(p, r->id, thread, NULL, 0);
    pl->nspikes = frames_count_rows(p, r->id, thread, use_col ? "spike" : "total_ns > ?3", split.spike_ns);
    pl->ntot = pdb_frame_count(p, r->id, thread);
    pl->win.first = o->spikes ? 0 : o->all ? -1 : o->top_set ? o->top : FIRST_SHOWN;
    pl->win.spikes = o->all ? (o->spikes ? -1 : 0) : o->spikes && o->top_set ? o->top : SPIKES_SHOWN;
    pl->win.use_col = use_col;
    pl->win.spike_ns = split.spike_ns;
}

/* The leading functions of the frames shown and the table's geometry. */
typedef struct {
    int nlead;            /* CSV's columns */
    int nshown;           /* the table's: of them, as many as fit its width */
    int key[LEAD_MAX];    /* their function keys, most self time first */
    int *col_of_key;      /* function key -> its column, -1: none */
    char **head;          /* their table headers, shortened to fit */
    int wframe, wlead[LEAD_MAX];
    int many_threads;
    int64_t shown_spikes;
} frames_lead;

typedef struct {
    int64_t sum;
    const char *label;
    int key;
} lead_entry;

static int cmp_lead(const void *x, const void *y)
{
    const lead_entry *a = x, *b = y;
    if (a->sum != b->sum)
        return a->sum > b->sum ? -1 : 1;
    int c = strcmp(a->label, b->label);
    return c ? c : (a->key > b->key) - (a->key < b->key);
}

/* Pass 1: per-function sums over the frames shown; the leading functions
 * and the widths, fixed before streaming. */
static void find_leads(pdb *p, const fkeys *k, const run_info *r, const frames_plan *pl, int cpu, frames_lead *ld)
{
    memset(ld, 0, sizeof *ld);
    int64_t *sums = xcalloc((size_t)k->nkeys, sizeof *sums), maxseq = 0;
    long first_thread = -1;
    frame_iter it;
    frame_iter_open(&it, p, k, r->id, pl->thread, &pl->win);
    while (frame_iter_next(&it)) {
        ld->shown_spikes += (double)it.total_ns > pl->win.spike_ns;
        if (it.seq > maxseq)
            maxseq = it.seq;
        if (first_thread < 0)
            first_thread = (long)it.thread;
        else if ((long)it.thread != first_thread)
            ld->many_threads = 1;
        for (size_t i = 0; i < it.nfns; i++)
            sums[it.fns[i].key] = sat_add(sums[it.fns[i].key], it.fns[i].self_ns);
    }
    frame_iter_close(&it);
    /* the last key is "(unknown)": never a leading function */
    lead_entry *order = xmalloc((size_t)k->nkeys * sizeof *order);
    int n = 0;
    for (int i = 0; i < k->nkeys - 1; i++)
        if (sums[i] > 0)
            order[n++] = (lead_entry){sums[i], k->labels[i], i};
    qsort(order, (size_t)n, sizeof *order, cmp_lead);
    ld->nlead = n < LEAD_MAX ? n : LEAD_MAX;
    ld->col_of_key = xmalloc((size_t)k->nkeys * sizeof *ld->col_of_key);
    for (int i = 0; i < k->nkeys; i++)
        ld->col_of_key[i] = -1;
    char *full[LEAD_MAX]; /* escaped (esc_ctrl) before they are fitted: headers as tables show them */
    for (int i = 0; i < ld->nlead; i++) {
        ld->key[i] = order[i].key;
        ld->col_of_key[order[i].key] = i;
        full[i] = esc_ctrl(order[i].label);
    }
    free(order);
    free(sums);
    char seqbuf[32];
    int seqw = snprintf(seqbuf, sizeof seqbuf, "%lld", (long long)maxseq);
    ld->wframe = seqw > 5 ? seqw + 2 : 7;
    /* As many leading functions as fit the width beside the fixed columns
     * (Frame, Thread, Total, CPU, Allocs, Bytes, the spike mark), each given
     * at least LEAD_MINW; at least one. Their headers are shortened where
     * nothing is lost, never two alike (names_fit). */
    size_t fixed = (size_t)ld->wframe + (ld->many_threads ? 8 : 0) + 11 + (cpu ? 11 : 0) + 9 + 11 + 4;
    size_t tw = term_width(), room = tw > fixed ? tw - fixed : 0;
    for (ld->nshown = ld->nlead;; ld->nshown--) {
        size_t each = ld->nshown ? room / (size_t)ld->nshown : 0, width = fixed;
        ld->head = names_fit((const char *const *)full, (size_t)ld->nshown, each > LEAD_MINW ? each - 2 : LEAD_MINW - 2);
        for (int i = 0; i < ld->nshown; i++) {
            size_t w = utf8_width(ld->head[i]) + 2;
            ld->wlead[i] = w > 11 ? (int)w : 11;
            width += (size_t)ld->wlead[i];
        }
        if (width <= tw || ld->nshown <= 1)
            break;
        names_free(ld->head, (size_t)ld->nshown);
    }
    for (int i = 0; i < ld->nlead; i++)
        free(full[i]);
}

/* The columns of a frame's row: tables show the leading functions between
 * Total and Allocs, CSV after spike; JSON every function in `functions`. */
enum { FRAME_COLS_MAX = 11 + 2 * LEAD_MAX };
static int frame_columns(emit_col *cols, const frames_lead *ld, const fkeys *k, int cpu)
{
    int n = 0;
    cols[n++] = (emit_col){.head = "Frame", .key = "frame", .type = COL_INT, .minw = ld->wframe};
    cols[n++] = (emit_col){.head = ld->many_threads ? "Thread" : NULL, .key = "thread", .type = COL_INT, .minw = 8};
    cols[n++] = (emit_col){.key = "start_ns", .type = COL_INT};
    cols[n++] = (emit_col){.head = "Total", .key = "total_ns", .type = COL_NS, .minw = 11};
    cols[n++] = (emit_col){.head = cpu ? "CPU" : NULL, .key = "cpu_ns", .type = COL_NS, .minw = 11};
    for (int i = 0; i < ld->nlead; i++)
        cols[n++] = (emit_col){.head = i < ld->nshown ? ld->head[i] : NULL, .type = COL_NS, .minw = ld->wlead[i]};
    cols[n++] = (emit_col){.head = "Allocs", .key = "allocs", .type = COL_INT, .minw = 9};
    cols[n++] = (emit_col){.head = "Bytes", .key = "alloc_bytes", .type = COL_BYTES, .minw = 11};
    cols[n++] = (emit_col){.key = "functions", .type = COL_MAP, .flags = COL_NOCSV};
    cols[n++] = (emit_col){.key = "spike", .type = COL_FLAG};
    for (int i = 0; i < ld->nlead; i++)
        cols[n++] = (emit_col){.key = k->labels[ld->key[i]], .type = COL_INT, .flags = COL_NOJSON};
    cols[n++] = (emit_col){.head = "", .type = COL_TEXT}; /* the spike mark */
    return n;
}

/* The current frame of it as the values of frame_columns; names and self:
 * room for its functions. */
static void frame_values(const frame_iter *it, const frames_lead *ld, const fkeys *k, double spike_ns,
                         emit_val *v, const char **names, int64_t *self)
{
    emit_val lead[LEAD_MAX];
    for (int i = 0; i < ld->nlead; i++)
        lead[i] = (emit_val){.null = 1};
    for (size_t i = 0; i < it->nfns; i++) {
        names[i] = k->labels[it->fns[i].key];
        self[i] = it->fns[i].self_ns;
        int c = ld->col_of_key[it->fns[i].key];
        if (c >= 0)
            lead[c] = (emit_val){.i = it->fns[i].self_ns};
    }
    int spike = (double)it->total_ns > spike_ns, n = 0;
    v[n++] = (emit_val){.i = it->seq};
    v[n++] = (emit_val){.i = it->thread};
    v[n++] = (emit_val){.i = it->start_ns};
    v[n++] = (emit_val){.i = it->total_ns};
    v[n++] = (emit_val){.i = it->cpu_ns, .null = !it->cpu_known};
    for (int i = 0; i < ld->nlead; i++)
        v[n++] = lead[i];
    v[n++] = (emit_val){.i = it->allocs};
    v[n++] = (emit_val){.i = it->alloc_bytes};
    v[n++] = (emit_val){.names = names, .ints = self, .n = it->nfns};
    v[n++] = (emit_val){.i = spike};
    for (int i = 0; i < ld->nlead; i++)
        v[n++] = (emit_val){.i = lead[i].null ? 0 : lead[i].i};
    v[n++] = (emit_val){.s = spike ? "  <<" : ""};
}

/* Pass 2: the rows, as they come. Returns how many. */
static size_t stream_frames(pdb *p, const pdb_opts *o, const fkeys *k, const run_info *r, const frames_plan *pl,
                            const frames_lead *ld)
{
    emit_col cols[FRAME_COLS_MAX];
    int ncols = frame_columns(cols, ld, k, o->cpu);
    emitter e;
    emit_begin(&e, stdout, emit_mode_of(o), cols, ncols, EMIT_STREAM | (p->color ? EMIT_COLOR : 0));
    const char **names = NULL;
    int64_t *self = NULL;
    size_t cap = 0;
    frame_iter it;
    frame_iter_open(&it, p, k, r->id, pl->thread, &pl->win);
    while (frame_iter_next(&it)) {
        if (it.nfns > cap) {
            cap = it.nfns;
            names = xrealloc(names, cap * sizeof *names);
            self = xrealloc(self, cap * sizeof *self);
        }
        emit_val v[FRAME_COLS_MAX];
        frame_values(&it, ld, k, pl->win.spike_ns, v, names, self);
        emit_row(&e, v, (double)it.total_ns > pl->win.spike_ns ? C_RED : NULL);
    }
    frame_iter_close(&it);
    free(names);
    free(self);
    return emit_end(&e, NULL);
}

/* What the view left out: on the table's last lines, on stderr for JSON and
 * CSV; then the table's footer. */
static void frames_footer(const pdb_opts *o, const run_info *r, const frames_plan *pl, const frames_lead *ld,
                          size_t printed)
{
    FILE *f = stdout;
    int64_t eligible = o->spikes ? pl->nspikes : pl->nkept, hidden = eligible - (int64_t)printed;
    int64_t hidden_spikes = pl->nspikes - ld->shown_spikes;
    char left[256] = "";
    if (hidden > 0 && hidden_spikes > 0 && !o->spikes)
        snprintf(left, sizeof left, "(%lld more frame%s hidden, %lld of them spike%s: --all shows them)",
                 (long long)hidden, hidden == 1 ? "" : "s", (long long)hidden_spikes, hidden_spikes == 1 ? "" : "s");
    else if (hidden > 0)
        snprintf(left, sizeof left, "(%lld more %s%s hidden: --all shows them)", (long long)hidden,
                 o->spikes ? "spike" : "frame", hidden == 1 ? "" : "s");
    if (o->json || o->csv) {
        if (*left)
            fprintf(stderr, "piano-db: report --frames: %s\n", left);
        return;
    }
    if (*left)
        fprintf(f, "%s\n", left);
    fputc('\n', f);
    /* Always "frames" and "spikes": the footer's words are fixed for scripts. */
    fprintf(f, "%lld frames | %lld spikes (>2x median)", (long long)pl->ntot, (long long)pl->nspikes);
    if (pl->nkept < pl->ntot - (pl->thread < 0 ? r->frames_dropped : 0))
        fprintf(f, " | %lld kept: %s", (long long)pl->nkept,
                pl->nkept == 0 ? "none (PIANO_FRAMES=off)"
                : r->spikes_unkept > 0 ? "the first, spikes up to the limit + a sample"
                                       : "the first, the longest + a sample");
    fputc('\n', f);
}

int cmd_frames(pdb *p, const pdb_opts *o, const run_info *r)
{
    if (o->sort)
        pdb_usage_die("report: --sort does not apply to --frames (frames are listed in order)");
    fkeys k;
    fkeys_load(p, r->id, &k);
    frames_plan pl;
    plan_frames(p, o, r, &pl);
    frames_lead ld;
    find_leads(p, &k, r, &pl, o->cpu, &ld);
    size_t printed = stream_frames(p, o, &k, r, &pl, &ld);
    frames_footer(o, r, &pl, &ld, printed);
    names_free(ld.head, (size_t)ld.nshown);
    free(ld.col_of_key);
    fkeys_free(&k);
    return 0;
}
