/*
 * diff.c - `piano-db diff [A B]`: per-function self time of two runs, sorted
 * by the absolute change, with a significance verdict per function (see
 * stats.c for the method). Functions match by (name, file), so a function
 * whose line moved between the runs still pairs up.
 */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const fnrow *a, *b;
    int64_t delta;
    sig_result sig;
    int flagged; /* significant slowdown above --fail-above */
    char *label;   /* the name, with the file's shortest telling suffix when the name is on more than one row */
} drow;

/* Change of the per-call median self time from A to B, in percent. */
static double median_change_pct(const drow *d)
{
    return (d->sig.median_b_ns - d->sig.median_a_ns) * 100.0 / d->sig.median_a_ns;
}

static int cmp_drow(const void *x, const void *y)
{
    const drow *p = x, *q = y;
    int64_t dp = p->delta < 0 ? -p->delta : p->delta, dq = q->delta < 0 ? -q->delta : q->delta;
    if (dp != dq)
        return dp > dq ? -1 : 1;
    const fnrow *fp = p->a ? p->a : p->b, *fq = q->a ? q->a : q->b;
    int c = strcmp(fp->name, fq->name);
    return c ? c : strcmp(fp->file, fq->file);
}

static int cmp_key(const fnrow *a, const fnrow *b)
{
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->file, b->file);
}

static const char *verdict(const drow *d)
{
    if (!d->a)
        return "(added)";
    if (!d->b)
        return "(removed)";
    if (!d->sig.significant)
        return "-";
    return d->sig.z > 0 ? "slower" : "faster";
}

/* Before, After, Delta: total self time. C.Delta: the change in calls, which
 * moves a total but not a call. p50: the change of the median per-call self
 * time, and Per call the significance test's verdict on per-call self time:
 * so a total that grew with the number of calls next to "faster" says so. */
/* The figures diff shows of A and B (NAME_a and NAME_b in JSON and CSV,
 * null where a run did not measure it): the metrics kept per snapshot (a
 * window has them) that report sorts by (spool/metrics.h), in its order. */
static int diff_pair(int m)
{
    return pdb_metrics[m].snap && pdb_metrics[m].sort;
}

enum { NDIFF_MAX = 16 + 2 * PIANO_M_N };

/* The columns (cols) and values of row d (v; d NULL: none), either NULL:
 * Function, the pairs (self time's followed by the table's Before ... Per
 * call, allocations' by Allocs and A.Delta, CPU time's by CPU.Delta: --cpu),
 * the verdict's keys. --heap shows the bytes in use of each run. Returns
 * how many. */
static int diff_row(const drow *d, int cpu, int heap, emit_col *cols, emit_val *v)
{
    static char keys[PIANO_M_N][2][64];
    static const fnrow none;
    const fnrow *a = d && d->a ? d->a : &none, *b = d && d->b ? d->b : &none, *any = d ? (d->a ? d->a : d->b) : &none;
    int both = d && d->a && d->b, valid = d && d->sig.valid, n = 0;
    const char *change = !d ? "" : !d->a ? "added" : !d->b ? "removed"
                         : d->a->window || d->b->window ? "untested"   /* a window keeps no per-call times */
                         : d->sig.significant ? (d->sig.z > 0 ? "slower" : "faster") : "same";
#define COL(...) do { if (cols) cols[n] = (emit_col){__VA_ARGS__}; } while (0)
#define VAL(...) do { if (v) v[n] = (emit_val){__VA_ARGS__}; n++; } while (0)
    COL(.head = "Function", .type = COL_TEXT, .flags = COL_FIT_NAMES, .minw = 20);
    VAL(.s = d ? d->label : "");
    COL(.key = "function", .type = COL_TEXT);
    VAL(.s = any->name);
    COL(.key = "file", .type = COL_TEXT);
    VAL(.s = any->file);
    for (int m = 0; m < PIANO_M_N; m++) {
        if (!diff_pair(m))
            continue;
        int in_use = heap && m == PIANO_M_inuse_bytes;
        for (int s = 0; s < 2; s++) {
            if (cols && !keys[m][s][0])
                snprintf(keys[m][s], sizeof keys[m][s], "%s_%c", pdb_metrics[m].id, "ab"[s]);
            if (in_use)
                COL(.head = s ? "In use B" : "In use A", .key = keys[m][s], .type = COL_BYTES, .minw = 11);
            else
                COL(.key = keys[m][s], .type = COL_INT);
            const fnrow *r = s ? b : a;
            VAL(.i = *fnrow_metric((fnrow *)r, m), .null = !fnrow_known(r, m));
        }
        if (m == PIANO_M_self_ns) {
            COL(.head = "Before", .type = COL_NS, .minw = 11);
            VAL(.i = a->self_ns, .null = !d || !d->a);
            COL(.head = "After", .type = COL_NS, .minw = 11);
            VAL(.i = b->self_ns, .null = !d || !d->b);
            COL(.head = "Delta", .key = "delta_ns", .type = COL_DELTA_NS, .minw = 11);
            VAL(.i = d ? d->delta : 0);
            COL(.key = "delta_pct", .type = COL_REAL, .fmt = "%.2f");
            VAL(.d = a->self_ns > 0 && d ? (double)d->delta * 100.0 / (double)a->self_ns : 0, .null = a->self_ns <= 0);
            COL(.head = "C.Delta", .type = COL_SIGNED, .minw = 9);
            VAL(.i = b->calls - a->calls);
            COL(.head = "p50", .type = COL_REAL, .fmt = "%+.1f%%", .minw = 9);
            VAL(.d = both && valid && d->sig.median_a_ns > 0 ? median_change_pct(d) : 0,
                .null = !(both && valid && d->sig.median_a_ns > 0));
            COL(.head = "Per call", .type = COL_TEXT, .minw = 11);
            VAL(.s = d ? verdict(d) : "");
        } else if (m == PIANO_M_allocs) {
            COL(.head = "Allocs", .type = COL_INT, .minw = 9);
            VAL(.i = b->allocs, .null = !d || !d->b);
            COL(.head = "A.Delta", .type = COL_SIGNED, .minw = 9);
            VAL(.i = b->allocs - a->allocs);
        } else if (m == PIANO_M_cpu_ns) {
            COL(.head = cpu ? "CPU.Delta" : NULL, .type = COL_DELTA_NS, .minw = 11);
            VAL(.i = (d && d->b ? b->cpu_ns : 0) - (d && d->a ? a->cpu_ns : 0),
                .null = !d || (d->a && !a->cpu_known) || (d->b && !b->cpu_known));
        }
    }
    COL(.key = "change", .type = COL_TEXT);
    VAL(.s = change);
    COL(.key = "significant", .type = COL_BOOL);
    VAL(.i = d && d->sig.significant);
    COL(.key = "p_value", .type = COL_REAL, .fmt = "%.3g");
    VAL(.d = d ? d->sig.p_value : 0, .null = !valid);
    COL(.key = "median_a_ns", .type = COL_REAL, .fmt = "%.0f");
    VAL(.d = d ? d->sig.median_a_ns : 0, .null = !valid);
    COL(.key = "median_b_ns", .type = COL_REAL, .fmt = "%.0f");
    VAL(.d = d ? d->sig.median_b_ns : 0, .null = !valid);
#undef COL
#undef VAL
    return n;
}

/* The rows of runs a and b's functions matched by (name, file), labelled,
 * in (name, file) order, with the significance test (and the --fail-above
 * gate) on each pair; *n: how many. */
static drow *diff_rows(const pdb_opts *o, const fnset *sa, const fnset *sb, const run_info *ra,
                       const run_info *rb, size_t *n)
{
    drow *rows = xcalloc(sa->n + sb->n, sizeof *rows);
    size_t i = 0, j = 0;
    *n = 0;
    while (i < sa->n || j < sb->n) {
        int c = i == sa->n ? 1 : j == sb->n ? -1 : cmp_key(&sa->v[i], &sb->v[j]);
        drow *d = &rows[(*n)++];
        d->a = c <= 0 ? &sa->v[i++] : NULL;
        d->b = c >= 0 ? &sb->v[j++] : NULL;
        d->delta = (d->b ? d->b->self_ns : 0) - (d->a ? d->a->self_ns : 0);
        if (d->a && d->b) {
            /* Each side's calls are corrected by their own overhead correction. */
            d->sig = sig_mann_whitney(d->a->hist, d->a->nhist, ra->ns_per_tick, d->a->fix,
                                      d->b->hist, d->b->nhist, rb->ns_per_tick, d->b->fix);
            /* The gate compares per-call medians, as the test does: a total
             * moves with the number of calls and with preemption, a median
             * does not. */
            d->flagged = o->fail_set && d->sig.significant && d->sig.z > 0 && d->sig.median_a_ns > 0 &&
                         median_change_pct(d) > o->fail_above;
        }
    }
    const char **names = xmalloc((*n + 1) * sizeof *names), **files = xmalloc((*n + 1) * sizeof *files);
    for (size_t k = 0; k < *n; k++) {
        names[k] = (rows[k].a ? rows[k].a : rows[k].b)->name;
        files[k] = (rows[k].a ? rows[k].a : rows[k].b)->file;
    }
    char **labels = fn_labels(names, files, NULL, *n, 1);
    for (size_t k = 0; k < *n; k++)
        rows[k].label = labels[k];
    free(labels);
    free(names);
    free(files);
    return rows;
}

/* Says on stderr which functions tripped --fail-above; returns how many. */
static int report_flagged(const pdb_opts *o, const drow *rows, size_t n)
{
    int flagged = 0;
    char names[512] = "";
    size_t used = 0;
    for (size_t k = 0; k < n; k++) {
        if (!rows[k].flagged)
            continue;
        flagged++;
        int w = snprintf(names + used, sizeof names - used, "%s%s (median %+.1f%%)", used ? ", " : "",
                         rows[k].b->name, median_change_pct(&rows[k]));
        if (w > 0 && (size_t)w < sizeof names - used)
            used += (size_t)w;
    }
    if (flagged) {
        fflush(stdout);
        fprintf(stderr, "piano-db: %d function%s significantly slower by more than %g%%: %s\n",
                flagged, flagged == 1 ? "" : "s", o->fail_above, names);
    }
    return flagged;
}

/* RUN@T1..T2: the run is what comes before the last '@' when what follows
 * is a window (pdb_window_parse); then the argument's copy in runs[i] is
 * cut there. */
static void split_windows(const pdb_opts *o, pdb_opts *cut, char **runs, pdb_window w[2])
{
    *cut = *o;
    cut->pos = (const char **)runs;
    for (int i = 0; i < o->npos && i < 2; i++) {
        runs[i] = xstrdup(o->pos[i]);
        char *at = strrchr(runs[i], '@');
        if (!at || !strstr(at, ".."))
            continue;
        if (pdb_window_parse(at + 1, &w[i]) != 0 || at == runs[i])
            pdb_usage_die("diff: '%s' is not RUN@T1..T2 (seconds from the run's start; either may be left out)",
                          o->pos[i]);
        *at = 0;
        if (o->thread_set)
            pdb_usage_die("diff: a window (%s) merges the threads: not with --thread", o->pos[i]);
    }
}

/* One side's figures: the run's, or its window's. */
static void load_side(pdb *p, run_info *r, pdb_window *w, long thread, int flags, fnset *s)
{
    if (!w->set) {
        pdb_load_functions(p, r, thread, flags, s);
        return;
    }
    pdb_window_resolve(p, r, w);
    pdb_load_window(p, r, w, flags, s);
}

static void side_line(FILE *f, const char *what, const run_info *r, const pdb_window *w, const runset *set)
{
    if (set) {
        char desc[512];
        pdb_set_describe(set, desc, sizeof desc);
        fprintf(f, "%s: %s", what, desc);
        return;
    }
    fprintf(f, "%s: run %lld", what, (long long)r->id);
    if (w->set) {
        char desc[160];
        pdb_window_describe(w, desc, sizeof desc);
        fprintf(f, ", window %s", desc);
    }
}

int cmd_diff(pdb *p, const pdb_opts *o)
{
    if (o->json && o->csv)
        pdb_usage_die("diff: --json and --csv exclude each other");
    int64_t ab[2];
    pdb_opts cut;
    char *runs[2] = { NULL, NULL };
    pdb_window w[2] = { { 0 }, { 0 } };
    split_windows(o, &cut, runs, w);
    /* A side may be a set of runs (an id list, a tag of several): its
     * functions summed, its calls pooled for the test (runset.c). */
    runset sets[2];
    int is_set[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        memset(&sets[i], 0, sizeof sets[i]);
        is_set[i] = i < o->npos && !w[i].set && pdb_set_arg(p, runs[i], &sets[i]);
        if (is_set[i] && !sets[i].n)
            pdb_die("%s: its %zu run%s recorded nothing", sets[i].what, sets[i].total, sets[i].total == 1 ? "" : "s");
    }
    if ((is_set[0] || is_set[1]) && o->npos != 2)
        pdb_usage_die("diff: a set of runs is compared with another set or run: diff A B");
    if (is_set[0] || is_set[1]) {
        for (int i = 0; i < 2; i++)
            ab[i] = is_set[i] ? -1 : pdb_resolve_run(p, runs[i]);
    } else {
        pdb_pick_runs(p, &cut, 0, 2, "diff [A B]", ab);
    }
    run_info ra, rb;
    /* A set's histograms are in ns, already corrected: a clock of 1 ns a tick. */
    static const run_info set_info = {.id = -1, .ns_per_tick = 1.0};
    ra = set_info;
    rb = set_info;
    if (!is_set[0])
        pdb_run_load(p, ab[0], &ra);
    if (!is_set[1])
        pdb_run_load(p, ab[1], &rb);
    if (o->spans) {
        if (is_set[0] || is_set[1] || w[0].set || w[1].set || o->thread_set || o->cpu || o->heap || o->fail_set ||
            o->group)
            pdb_usage_die("diff: --spans compares two whole runs (not sets, windows, --thread, --cpu, --heap, "
                          "--fail-above or --group)");
        diff_spans(p, o, &ra, &rb);
        pdb_run_free(&ra);
        pdb_run_free(&rb);
        free(runs[0]);
        free(runs[1]);
        return 0;
    }
    int flags = AGG_KEEP_HIST | (o->uncorrected ? 0 : AGG_CORRECTED) | (o->group ? AGG_GROUP : 0);
    fnset sa, sb;
    long thread = o->thread_set ? o->thread : -1;
    if (is_set[0])
        pdb_set_load(p, &sets[0], thread, flags, &sa);
    else
        load_side(p, &ra, &w[0], thread, flags, &sa);
    if (is_set[1])
        pdb_set_load(p, &sets[1], thread, flags, &sb);
    else
        load_side(p, &rb, &w[1], thread, flags, &sb);
    size_t n;
    drow *rows = diff_rows(o, &sa, &sb, &ra, &rb, &n);
    qsort(rows, n, sizeof *rows, cmp_drow);
    size_t shown = o->top_set && !o->all && (size_t)o->top < n ? (size_t)o->top : n;

    FILE *f = stdout;
    emit_mode mode = emit_mode_of(o);
    emitter e;
    /* --heap: the table also shows the bytes in use at the end of each run. */
    emit_col cols[NDIFF_MAX];
    int ncols = diff_row(NULL, o->cpu, o->heap, cols, NULL);
    emit_begin(&e, f, mode, cols, ncols, p->color ? EMIT_COLOR : 0);
    for (size_t k = 0; k < shown; k++) {
        emit_val v[NDIFF_MAX];
        diff_row(&rows[k], o->cpu, o->heap, NULL, v);
        const drow *d = &rows[k];
        emit_row(&e, v, d->a && d->b && d->sig.significant ? (d->sig.z > 0 ? C_RED : C_GREEN) : NULL);
    }
    emit_end(&e, NULL);
    if (mode == EMIT_TABLE) {
        if (shown < n)
            fprintf(f, "(%zu more function%s hidden: --all shows them)\n", n - shown, n - shown == 1 ? "" : "s");
        fputc('\n', f);
        side_line(f, "before", &ra, &w[0], is_set[0] ? &sets[0] : NULL);
        side_line(f, ", after", &rb, &w[1], is_set[1] ? &sets[1] : NULL);
        fputc('\n', f);
        if (w[0].set || w[1].set)
            fputs("a window keeps no per-call times: its p50 and Per call are '-'\n", f);
        fputs("Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:\n"
              "change of one call's self time (median; significance test, see diff --help)\n", f);
    }
    int flagged = report_flagged(o, rows, n);
    for (size_t k = 0; k < n; k++)
        free(rows[k].label);
    free(rows);
    fnset_free(&sa);
    fnset_free(&sb);
    if (!is_set[0])
        pdb_run_free(&ra);
    if (!is_set[1])
        pdb_run_free(&rb);
    runset_free(&sets[0]);
    runset_free(&sets[1]);
    free(runs[0]);
    free(runs[1]);
    return flagged ? EXIT_REGRESSION : 0;
}
