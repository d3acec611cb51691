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

/* Whether stats has the column unfinished (schema 4: a database of schema 3
 * opened read-only is read as it is). */
int pdb_has_unfinished(pdb *p)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM pragma_table_info('stats') WHERE name = 'unfinished'");
    int has = pdb_step(p, st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return has;
}

int pdb_has_cpu(pdb *p)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM pragma_table_info('stats') WHERE name = 'offcpu_ns'");
    int has = pdb_step(p, st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return has;
}

/* Adds the CPU columns col.. of a stats row to row (its CPU stays unknown when
 * any of its threads' rows has none). */
static void add_cpu(fnrow *row, sqlite3_stmt *st, int col)
{
    row->cpu_known = row->cpu_known && sqlite3_column_type(st, col) != SQLITE_NULL;
    int64_t *v[] = {&row->cpu_ns, &row->cpu_total_ns, &row->cpu_user_ns, &row->cpu_sys_ns, &row->offcpu_ns};
    for (int k = 0; k < 5; k++)
        *v[k] = row->cpu_known ? sat_add(*v[k], sqlite3_column_int64(st, col + k)) : 0;
}

void pdb_load_functions(pdb *p, const run_info *r, long thread, int flags, fnset *out)
{
    memset(out, 0, sizeof *out);
    char sql[1000];
    int group = (flags & AGG_GROUP) != 0;
    snprintf(sql, sizeof sql,
             "SELECT %s, f.file, f.line, s.calls, s.self_ns, s.total_ns, s.allocs, "
             "s.alloc_bytes, s.frees, s.free_bytes, s.hist_self, s.hist_total, %s, %s, %s, %s, f.name "
             "FROM stats s JOIN functions f ON f.run = s.run AND f.id = s.fn "
             "WHERE s.run = ?1 AND (?2 < 0 OR s.thread = ?2) "
             "ORDER BY 1, f.file, %s",
             group ? "piano_group(f.name)" : "f.name",
             p->has_child_calls ? "s.child_calls" : "0", pdb_has_unfinished(p) ? "s.unfinished" : "0",
             pdb_has_cpu(p) ? "s.cpu_ns, s.cpu_total_ns, s.cpu_user_ns, s.cpu_sys_ns, s.offcpu_ns"
                            : "NULL, NULL, NULL, NULL, NULL",
             p->has_inuse ? "s.inuse_objects, s.inuse_bytes, s.peak_inuse_bytes" : "NULL, NULL, NULL",
             group ? "f.name, f.line" : "f.line");
    if (group)
        flags &= ~AGG_BY_LINE; /* instantiations of one template: one row per file */
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int64(st, 2, thread);
    pdb_load_rows(p, r, st, flags, out);
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
            const char *fn = pdb_col_text(st, 22);
            if (!member || strcmp(member, fn)) {
                cur->instances++;
                free(member);
                member = xstrdup(fn);
            }
        }
        cur->calls = sat_add(cur->calls, sqlite3_column_int64(st, 3));
        cur->self_ns = sat_add(cur->self_ns, sqlite3_column_int64(st, 4));
        cur->total_ns = sat_add(cur->total_ns, sqlite3_column_int64(st, 5));
        cur->allocs = sat_add(cur->allocs, sqlite3_column_int64(st, 6));
        cur->alloc_bytes = sat_add(cur->alloc_bytes, sqlite3_column_int64(st, 7));
        cur->frees = sat_add(cur->frees, sqlite3_column_int64(st, 8));
        cur->free_bytes = sat_add(cur->free_bytes, sqlite3_column_int64(st, 9));
        cur->child_calls = sat_add(cur->child_calls, sqlite3_column_int64(st, 12));
        cur->unfinished = sat_add(cur->unfinished, sqlite3_column_int64(st, 13));
        add_cpu(cur, st, 14);
        if (sqlite3_column_type(st, 20) != SQLITE_NULL) {
            cur->inuse_known = 1;
            cur->inuse_objects = sat_add(cur->inuse_objects, sqlite3_column_int64(st, 19));
            cur->inuse_bytes = sat_add(cur->inuse_bytes, sqlite3_column_int64(st, 20));
            cur->peak_inuse_bytes = sat_add(cur->peak_inuse_bytes, sqlite3_column_int64(st, 21));
        }
        for (int h = 0; h < 2; h++) {
            const void *blob = sqlite3_column_blob(st, 10 + h);
            size_t len = (size_t)sqlite3_column_bytes(st, 10 + h);
            if (blob && piano_hist_add_blob(h ? m.total : m.self, blob, len) != 0)
                pdb_die("run %lld: malformed histogram for %s in %s", (long long)r->id, name,
                        p->path);
            for (size_t at = 0; blob && at + 1 < len; at += PIANO_HIST_RECORD) {   /* valid: checked above */
                const unsigned char *rec = (const unsigned char *)blob + at;
                unsigned b = (unsigned)rec[0] | (unsigned)rec[1] << 8;
                if (b < m.lo[h])
                    m.lo[h] = b;
                if (b > m.hi[h])
                    m.hi[h] = b;
            }
        }
    }
    if (cur)
        finish_row(cur, &m, r, flags);
    free(member);
    sqlite3_finalize(st);
    free(m.self);
    free(m.total);
    /* Rows come sorted by name: a name seen twice gets its place in its label,
     * the file as the shortest path suffix that tells the rows apart. */
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

/* The sort keys of report --sort: descending by the figure, then by name, file, line. */
static const struct {
    const char *name;
    size_t offset; /* of the int64_t figure in fnrow */
} sort_keys[] = {
    {"self", offsetof(fnrow, self_ns)}, {"total", offsetof(fnrow, total_ns)}, {"calls", offsetof(fnrow, calls)},
    {"p50", offsetof(fnrow, p50_ns)},   {"p99", offsetof(fnrow, p99_ns)},     {"allocs", offsetof(fnrow, allocs)},
    {"bytes", offsetof(fnrow, alloc_bytes)}, {"cpu", offsetof(fnrow, cpu_ns)}, {"offcpu", offsetof(fnrow, offcpu_ns)},
    {"inuse", offsetof(fnrow, inuse_bytes)}, {"peak", offsetof(fnrow, peak_inuse_bytes)},
};
enum { NSORT_KEYS = sizeof sort_keys / sizeof *sort_keys };

int fnset_sort_key(const char *name)
{
    for (int i = 0; i < NSORT_KEYS; i++)
        if (strcmp(name, sort_keys[i].name) == 0)
            return i;
    return -1;
}

const char *fnset_sort_keys(void)
{
    static char list[128];
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
