/*
 * aggregate.c - a run's per-function figures: stats rows of every thread (or
 * one) summed per function, histograms merged bucket by bucket, quantiles read
 * from the merged histograms.
 *
 * Function ids are per run, and two ids may carry the same name (a static
 * `helper` in two files): rows are keyed by (name, file, line), and ids with
 * identical keys are merged. diff keys by (name, file) so that edits moving a
 * function's line still match it.
 *
 * Self-time correction (AGG_CORRECTED): runs.overhead_ns is the measured time
 * one instrumented call adds to its CALLER beyond its own measured time (see
 * measure_overhead in rt/finish.c), and stats.child_calls counts the
 * instrumented calls a function made directly. So:
 *   corrected self    = max(0, self - child_calls * overhead)
 *   corrected p50/p99 = max(value - overhead * child_calls / calls,
 *                           value * corrected self / self), at least 0
 * (each call is shifted by the average overhead of its children, but by no
 * more than the share of the function's self time that is overhead: call_fix
 * in piano_db.h says why). Inclusive figures are shown as measured.
 */
#include "piano_db.h"
#include "hist.h"
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int64_t corrected_ns(int64_t raw, double overhead)
{
    double v = (double)raw - overhead;
    return v > 0 ? (int64_t)llround(v) : 0;
}

static int64_t ticks_to_ns(uint64_t ticks, double nspt)
{
    return (int64_t)llround((double)ticks * nspt);
}

typedef struct {
    piano_hist *self, *total;
    int any;
    /* The buckets the row's blobs touched (lo > hi: none): what is read back
     * and cleared, not the whole histogram (a set of runs merges thousands of rows). */
    unsigned lo[2], hi[2];
} merge_state;

/* The non-zero buckets of h in [lo, hi], as a new array of *n. */
static hbin *hist_bins(const piano_hist *h, unsigned lo, unsigned hi, size_t *n)
{
    size_t k = 0;
    for (unsigned b = lo; b <= hi && b < PIANO_HIST_BUCKETS; b++)
        k += h->count[b] != 0;
    hbin *v = xmalloc((k ? k : 1) * sizeof *v);
    *n = 0;
    for (unsigned b = lo; b <= hi && b < PIANO_HIST_BUCKETS; b++)
        if (h->count[b])
            v[(*n)++] = (hbin){(uint16_t)b, h->count[b]};
    return v;
}

/* Clears what the row touched of h, and its bounds. */
static void hist_clear(piano_hist *h, unsigned *lo, unsigned *hi)
{
    if (*lo <= *hi)
        memset(&h->count[*lo], 0, (size_t)(*hi - *lo + 1) * sizeof h->count[0]);
    h->total = 0;
    *lo = PIANO_HIST_BUCKETS;
    *hi = 0;
}

static void finish_row(fnrow *row, merge_state *m, const run_info *r, int flags)
{
    double ovh = (flags & AGG_CORRECTED) && row->calls > 0
                     ? r->overhead_ns * (double)row->child_calls / (double)row->calls : 0;
    row->fix = (call_fix){ 0, 1 };
    row->p50_ns = ticks_to_ns(piano_hist_quantile(m->self, 0.50), r->ns_per_tick);
    row->p99_ns = ticks_to_ns(piano_hist_quantile(m->self, 0.99), r->ns_per_tick);
    row->p50_total_ns = ticks_to_ns(piano_hist_quantile(m->total, 0.50), r->ns_per_tick);
    row->p99_total_ns = ticks_to_ns(piano_hist_quantile(m->total, 0.99), r->ns_per_tick);
    if (ovh > 0) {
        int64_t raw_self = row->self_ns;
        row->self_ns = corrected_ns(raw_self, (double)row->child_calls * r->overhead_ns);
        row->fix = (call_fix){ ovh, raw_self > 0 ? (double)row->self_ns / (double)raw_self : 0 };
        /* The hooks' time is CPU time too. */
        row->cpu_ns = corrected_ns(row->cpu_ns, (double)row->child_calls * r->overhead_ns);
        if (m->self->total) {
            row->p50_ns = (int64_t)llround(call_fix_ns((double)row->p50_ns, row->fix));
            row->p99_ns = (int64_t)llround(call_fix_ns((double)row->p99_ns, row->fix));
        }
    }
    if (flags & AGG_KEEP_HIST) {
        row->hist = hist_bins(m->self, m->lo[0], m->hi[0], &row->nhist);
        row->hist_total = hist_bins(m->total, m->lo[1], m->hi[1], &row->nhist_total);
    }
    hist_clear(m->self, &m->lo[0], &m->hi[0]);
    hist_clear(m->total, &m->lo[1], &m->hi[1]);
}

static int same_key(const fnrow *row, const char *name, const char *file, int64_t line, int by_line)
{
    return strcmp(row->name, name) == 0 && strcmp(row->file, file) == 0 &&
           (!by_line || row->line == line);
}

int fnrow_known(const fnrow *r, int m)
{
    if (r->window && !pdb_metrics[m].snap)
        return 0;   /* not kept per snapshot: unknown, never a wrong figure */
    switch (pdb_metrics[m].when) {
    case PIANO_WHEN_CPU: return r->cpu_known;
    case PIANO_WHEN_HEAP: return r->inuse_known;
    default: return 1;
    }
}

/* The columns pdb_load_rows reads, in its order: name, file, line, the
 * function's own name (AGG_GROUP), hist_self, hist_total, child_calls, then
 * the metrics stored in stats (LOAD_COL0 on, spool/metrics.h's order). */
enum { LOAD_GROUP_NAME = 3, LOAD_HIST = 4, LOAD_CHILD_CALLS = 6, LOAD_COL0 = 7 };

/* The stats columns of the metrics stored there, "s.calls, s.self_ns, ...",
 * a column the database lacks as NULL (measured when asked) or 0. */
static void stats_metric_columns(const pdb *p, char *sql, size_t n)
{
    size_t len = 0;
    sql[0] = 0;
    for (int m = 0; m < PIANO_M_N; m++) {
        if (pdb_metrics[m].where == PIANO_WHERE_HIST)
            continue;
        const char *missing = pdb_metrics[m].when == PIANO_WHEN_ALWAYS ? "0" : "NULL";
        len += (size_t)snprintf(sql + len, len < n ? n - len : 0, ", %s%s", p->has_metric[m] ? "s." : "",
                                p->has_metric[m] ? pdb_metrics[m].id : missing);
    }
}

void pdb_load_functions(pdb *p, const run_info *r, long thread, int flags, fnset *out)
{
    memset(out, 0, sizeof *out);
    char sql[2000], cols[1000];
    int group = (flags & AGG_GROUP) != 0;
    stats_metric_columns(p, cols, sizeof cols);
    /* +s.fn: the stats view's fn has INTEGER affinity (stat_rows') and the
     * functions view's id none (its two arms differ), so without the + SQLite's
     * automatic index on functions keys on run only, and each stats row is
     * compared with every function of the run: 190 x 190 for a jq run, 27M of
     * report's 46M instructions (also window.c, runset.c, doc/piano-db.md). */
    snprintf(sql, sizeof sql,
             "SELECT %s, f.file, f.line, f.name, s.hist_self, s.hist_total, %s%s "
             "FROM stats s JOIN functions f ON f.run = s.run AND f.id = +s.fn "
             "WHERE s.run = ?1 AND (?2 < 0 OR s.thread = ?2) "
             "ORDER BY 1, f.file, %s",
             group ? "piano_group(f.name)" : "f.name", p->has_child_calls ? "s.child_calls" : "0", cols,
             group ? "f.name, f.line" : "f.line");
    if (group)
        flags &= ~AGG_BY_LINE; /* instantiations of one template: one row per file */
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int64(st, 2, thread);
    pdb_load_rows(p, r, st, flags, out);
}

/* Adds a stats row's metrics (columns LOAD_COL0..) to row: summed; CPU time
 * stays unknown when any of its threads' rows has none, heap in use is known
 * when a row has it. */
static void add_metrics(fnrow *row, sqlite3_stmt *st)
{
    int col = LOAD_COL0, cpu_row = -1, heap_row = 0;
    for (int m = 0; m < PIANO_M_N; m++) {
        if (pdb_metrics[m].where == PIANO_WHERE_HIST)
            continue;
        int null = sqlite3_column_type(st, col) == SQLITE_NULL;
        if (pdb_metrics[m].when == PIANO_WHEN_CPU && cpu_row < 0) {
            cpu_row = !null;
            row->cpu_known = row->cpu_known && cpu_row;
        }
        if (pdb_metrics[m].when == PIANO_WHEN_HEAP)
            heap_row |= !null;
        col++;
    }
    if (heap_row)
        row->inuse_known = 1;
    col = LOAD_COL0;
    for (int m = 0; m < PIANO_M_N; m++) {
        if (pdb_metrics[m].where == PIANO_WHERE_HIST)
            continue;
        int64_t *v = fnrow_metric(row, m);
        switch (pdb_metrics[m].when) {
        case PIANO_WHEN_CPU: *v = row->cpu_known ? sat_add(*v, sqlite3_column_int64(st, col)) : 0; break;
        case PIANO_WHEN_HEAP:
            if (heap_row)
                *v = sat_add(*v, sqlite3_column_int64(st, col));
            break;
        default: *v = sat_add(*v, sqlite3_column_int64(st, col)); break;
        }
        col++;
    }
}

void pdb_load_rows(pdb *p, const run_info *r, sqlite3_stmt *st, int flags, fnset *out)
{
    memset(out, 0, sizeof *out);
    int by_line = (flags & AGG_BY_LINE) != 0;
    merge_state m = {xcalloc(1, sizeof(piano_hist)), xcalloc(1, sizeof(piano_hist)), 0,
                     {PIANO_HIST_BUCKETS, PIANO_HIST_BUCKETS}, {0, 0}};
    fnrow *cur = NULL;
    char *member = NULL; /* AGG_GROUP: the last function name summed into cur */
    while (pdb_step(p, st) == SQLITE_ROW) {
        const char *name = pdb_col_text(st, 0), *file = pdb_col_text(st, 1);
        int64_t line = sqlite3_column_int64(st, 2);
        if (!cur || !same_key(cur, name, file, line, by_line)) {
            free(member);
            member = NULL;
            if (cur)
                finish_row(cur, &m, r, flags);
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 64;
                out->v = xrealloc(out->v, out->cap * sizeof *out->v);
            }
            cur = &out->v[out->n++];
            memset(cur, 0, sizeof *cur);
            cur->cpu_known = 1;
            cur->name = xstrdup(name);
            cur->file = xstrdup(file);
            cur->line = line;
        }
        if (flags & AGG_GROUP) {
            const char *fn = pdb_col_text(st, LOAD_GROUP_NAME);
            if (!member || strcmp(member, fn)) {
                cur->instances++;
                free(member);
                member = xstrdup(fn);
            }
        }
        cur->child_calls = sat_add(cur->child_calls, sqlite3_column_int64(st, LOAD_CHILD_CALLS));
        add_metrics(cur, st);
        for (int h = 0; h < 2; h++) {
            const void *blob = sqlite3_column_blob(st, LOAD_HIST + h);
            size_t len = (size_t)sqlite3_column_bytes(st, LOAD_HIST + h);
            if (blob && piano_hist_add_blob_range(h ? m.total : m.self, blob, len, &m.lo[h], &m.hi[h]) != 0)
                pdb_die("run %lld: malformed histogram for %s in %s", (long long)r->id, name,
                        p->path);
        }
    }
    if (cur)
        finish_row(cur, &m, r, flags);
    free(member);
    sqlite3_finalize(st);
    free(m.self);
    free(m.total);
    fnset_label(out, by_line);
}

/* Each row's label: a name seen twice gets its place in it, the file as the
 * shortest path suffix that tells the rows apart (the line too when by_line). */
void fnset_label(fnset *out, int by_line)
{
    const char **names = xmalloc((out->n + 1) * sizeof *names), **files = xmalloc((out->n + 1) * sizeof *files);
    int64_t *lines = xmalloc((out->n + 1) * sizeof *lines);
    for (size_t i = 0; i < out->n; i++) {
        names[i] = out->v[i].name;
        files[i] = out->v[i].file;
        lines[i] = out->v[i].line;
    }
    char **labels = fn_labels(names, files, by_line ? lines : NULL, out->n, 1);
    for (size_t i = 0; i < out->n; i++)
        out->v[i].label = labels[i];
    free(labels);
    free(names);
    free(files);
    free(lines);
}

void fnset_row_free(fnrow *r)
{
    free(r->name);
    free(r->file);
    free(r->label);
    free(r->hist);
    free(r->hist_total);
}

void fnset_free(fnset *s)
{
    for (size_t i = 0; i < s->n; i++)
        fnset_row_free(&s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* The sort keys of report --sort: descending by the figure, then by name,
 * file, line; in PIANO_SORT_ORDER, each a metric's (spool/metrics.h). */
static const char *const sort_names[] = {PIANO_SORT_ORDER};
enum { NSORT_KEYS = sizeof sort_names / sizeof *sort_names };
static struct {
    const char *name;
    size_t offset; /* of the int64_t figure in fnrow */
} sort_keys[NSORT_KEYS];

static void sort_keys_init(void)
{
    if (sort_keys[0].name)
        return;
    for (int i = 0; i < NSORT_KEYS; i++)
        for (int m = 0; m < PIANO_M_N; m++)
            if (pdb_metrics[m].sort && !strcmp(pdb_metrics[m].sort, sort_names[i]))
                sort_keys[i].name = sort_names[i], sort_keys[i].offset = pdb_metric_offset[m];
}

int fnset_sort_key(const char *name)
{
    sort_keys_init();
    for (int i = 0; i < NSORT_KEYS; i++)
        if (strcmp(name, sort_keys[i].name) == 0)
            return i;
    return -1;
}

const char *fnset_sort_keys(void)
{
    static char list[128];
    sort_keys_init();
    if (!list[0])
        for (int i = 0; i < NSORT_KEYS; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "|" : "", sort_keys[i].name);
    return list;
}

/* A row with its sort figure: qsort orders these, not the rows, so the
 * comparison needs no state beside them. */
typedef struct {
    int64_t key;
    const fnrow *row;
} sort_entry;

static int cmp_entries(const void *x, const void *y)
{
    const sort_entry *ea = x, *eb = y;
    const fnrow *a = ea->row, *b = eb->row;
    if (ea->key != eb->key)
        return ea->key > eb->key ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    c = strcmp(a->file, b->file);
    if (c)
        return c;
    return a->line < b->line ? -1 : a->line > b->line;
}

int fnset_sort(fnset *s, const char *key)
{
    int k = fnset_sort_key(key);
    if (k < 0)
        return -1;
    if (s->n < 2)
        return 0;
    sort_entry *e = xmalloc(s->n * sizeof *e);
    for (size_t i = 0; i < s->n; i++)
        e[i] = (sort_entry){*(const int64_t *)((const char *)&s->v[i] + sort_keys[k].offset), &s->v[i]};
    qsort(e, s->n, sizeof *e, cmp_entries);
    fnrow *sorted = xmalloc(s->n * sizeof *sorted);
    for (size_t i = 0; i < s->n; i++)
        sorted[i] = *e[i].row;
    free(s->v);
    free(e);
    s->v = sorted;
    s->cap = s->n;
    return 0;
}
