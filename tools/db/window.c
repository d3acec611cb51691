/*
 * window.c - a window of a run (report --from/--to, diff RUN@T1..T2): its
 * per-function figures as the difference of two snapshots (PIANO_INTERVAL).
 * A snapshot holds each function's cumulative calls, self time, child calls
 * and allocations (schema: snapshots); the run's start counts as a snapshot
 * of zeros, and its end (the stored figures, threads summed) as the last.
 */
#include "piano_db.h"
#include "span_spool.h"
#include <stdlib.h>
#include <string.h>

static int parse_secs(const char *s, const char *end, double *v)
{
    char buf[64];
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e;
    *v = strtod(buf, &e);
    return *e || !(*v >= 0) || *v > 1e9 ? -1 : 0;
}

int pdb_window_parse(const char *s, pdb_window *w)
{
    memset(w, 0, sizeof *w);
    const char *dots = strstr(s, "..");
    if (!dots)
        return -1;
    w->set = 1;
    w->from_set = dots > s;
    w->to_set = dots[2] != 0;
    if (w->from_set && parse_secs(s, dots, &w->from_s))
        return -1;
    if (w->to_set && parse_secs(dots + 2, dots + 2 + strlen(dots + 2), &w->to_s))
        return -1;
    return 0;
}

/* The latest snapshot of run at or before t_ns; 0 (the start) when none. */
static int64_t snapshot_at(pdb *p, int64_t run, int64_t t_ns)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT coalesce(max(t_ns), 0) FROM snapshot_times WHERE run = ? AND t_ns <= ?");
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, t_ns);
    int64_t t = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return t;
}

void pdb_window_resolve(pdb *p, const run_info *r, pdb_window *w)
{
    if (pdb_snapshot_count(p, r->id) == 0)
        pdb_die("run %lld has no snapshots: a window needs a run made with PIANO_INTERVAL=SECS", (long long)r->id);
    if (w->from_set && w->to_set && w->from_s > w->to_s)
        pdb_usage_die("the window %g..%g s ends before it starts", w->from_s, w->to_s);
    int64_t from = w->from_set ? (int64_t)(w->from_s * 1e9 + 0.5) : 0;
    w->a_ns = from > 0 ? snapshot_at(p, r->id, from) : 0;
    w->b_end = !w->to_set || w->to_s * 1e9 >= (double)r->duration_ns;
    w->b_ns = w->b_end ? r->duration_ns : snapshot_at(p, r->id, (int64_t)(w->to_s * 1e9 + 0.5));
}

void pdb_window_describe(const pdb_window *w, char *buf, size_t n)
{
    snprintf(buf, n, "%.3f s (%s) .. %.3f s (%s)", (double)w->a_ns / 1e9, w->a_ns ? "snapshot" : "start of the run",
             (double)w->b_ns / 1e9, w->b_end ? "end of the run" : w->b_ns ? "snapshot" : "start of the run");
}

/* The figures of run ?1 at snapshot ?2 (t), per function id: the rows of
 * the latest snapshot at or before it that lists the function; or at the
 * end (the stats rows summed): fn, child_calls and the metrics kept per
 * snapshot (spool/metrics.h). */
static void at_snapshot(char *sql, size_t n, const char *t)
{
    size_t len = (size_t)snprintf(sql, n, "SELECT fn, child_calls");
    for (int m = 0; m < PIANO_M_N; m++)
        if (pdb_metrics[m].snap)
            len += (size_t)snprintf(sql + len, n - len, ", %s", pdb_metrics[m].id);
    snprintf(sql + len, n - len,
             " FROM snapshots x WHERE run = ?1 AND t_ns = "
             "(SELECT max(t_ns) FROM snapshots y WHERE y.run = ?1 AND y.fn = x.fn AND y.t_ns <= %s)", t);
}

static void at_end(const pdb *p, char *sql, size_t n)
{
    size_t len = (size_t)snprintf(sql, n, "SELECT fn, sum(%s) AS child_calls",
                                  p->has_child_calls ? "child_calls" : "0");
    for (int m = 0; m < PIANO_M_N; m++) {
        const char *id = pdb_metrics[m].id;
        if (!pdb_metrics[m].snap)
            continue;
        if (pdb_metrics[m].when == PIANO_WHEN_ALWAYS)
            len += (size_t)snprintf(sql + len, n - len, ", sum(%s) AS %s", id, id);
        else   /* known when every thread's row has it */
            len += (size_t)snprintf(sql + len, n - len, ", CASE WHEN count(%s) = count(*) THEN sum(%s) END AS %s",
                                    id, id, id);
    }
    snprintf(sql + len, n - len, " FROM stats WHERE run = ?1 GROUP BY fn");
}

/* Prepares "WITH a AS (the figures at the window's start), b AS (at its
 * end) <select>", bound: select reads a and b. */
/* A window query's statement: ?1 the run, ?2 the window's start, ?3 its end
 * (unbound when the window runs to the run's end). */
static sqlite3_stmt *window_prepare(pdb *p, const run_info *r, const pdb_window *w, const char *sql)
{
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int64(st, 2, w->a_ns);
    if (!w->b_end)
        sqlite3_bind_int64(st, 3, w->b_ns);
    return st;
}

static sqlite3_stmt *window_query(pdb *p, const run_info *r, const pdb_window *w, const char *select)
{
    char sql[4096], a_sql[1024], b_sql[1024];
    at_snapshot(a_sql, sizeof a_sql, "?2");
    if (w->b_end)
        at_end(p, b_sql, sizeof b_sql);
    else
        at_snapshot(b_sql, sizeof b_sql, "?3");
    snprintf(sql, sizeof sql, "WITH a AS (%s), b AS (%s) %s", a_sql, b_sql, select);
    return window_prepare(p, r, w, sql);
}

void pdb_load_window(pdb *p, const run_info *r, const pdb_window *w, int flags, fnset *out)
{
    /* pdb_load_rows' columns: a metric kept per snapshot is its growth over
     * the window (heap in use: its level at the window's end), the others are
     * not known (0, or NULL when measured only when asked). Growth is never
     * below 0 (max(x, 0) keeps NULL): a run's end is stored with its final
     * clock calibration, its snapshots with the live one, ~0.1% apart, so a
     * last window in which a function barely ran could come out negative. */
    char sql[2000];
    size_t len = (size_t)snprintf(sql, sizeof sql, "SELECT f.name, f.file, f.line, f.name, NULL, NULL, "
                                                   "b.child_calls - coalesce(a.child_calls, 0)");
    for (int m = 0; m < PIANO_M_N; m++) {
        const char *id = pdb_metrics[m].id;
        if (pdb_metrics[m].where == PIANO_WHERE_HIST)
            continue;
        if (!pdb_metrics[m].snap)
            len += (size_t)snprintf(sql + len, sizeof sql - len, ", %s",
                                    pdb_metrics[m].when == PIANO_WHEN_ALWAYS ? "0" : "NULL");
        else if (pdb_metrics[m].when == PIANO_WHEN_HEAP)
            len += (size_t)snprintf(sql + len, sizeof sql - len, ", b.%s", id);
        else
            len += (size_t)snprintf(sql + len, sizeof sql - len, ", max(b.%s - coalesce(a.%s, 0), 0)", id, id);
    }
    snprintf(sql + len, sizeof sql - len,
             " FROM b LEFT JOIN a ON a.fn = b.fn JOIN functions f ON f.run = ?1 AND f.id = +b.fn "
             "WHERE b.calls > coalesce(a.calls, 0) OR b.allocs > coalesce(a.allocs, 0) "
             "ORDER BY f.name, f.file, f.line");
    sqlite3_stmt *st = window_query(p, r, w, sql);
    pdb_load_rows(p, r, st, flags & ~AGG_KEEP_HIST, out);
    for (size_t i = 0; i < out->n; i++)
        out->v[i].window = 1;
}

/* The figures of the window's functions as a flat tree (each function a root
 * of its own), for pprof_build: a window has no calling contexts. Self times
 * as measured (not overhead-corrected), as push sends a run's. Self CPU time
 * too when every function's is known at the window's end (PIANO_CPU).
 * Never below 0, as in pdb_load_window: Pyroscope gets no negative value. */
void pdb_window_tree(pdb *p, const run_info *r, const pdb_window *w, ctree *t)
{
    memset(t, 0, sizeof *t);
    fkeys_load(p, r->id, &t->keys);
    t->n = (size_t)t->keys.nkeys + 1;
    t->cap = t->n;
    t->v = xcalloc(t->cap, sizeof *t->v);
    for (size_t i = 0; i < t->n; i++) {
        t->v[i].key = (int)i - 1;
        t->v[i].parent = i ? 0 : -1;
        t->v[i].depth = i ? 1 : 0;
        t->v[i].first_child = t->v[i].last_child = t->v[i].next_sibling = -1;
    }
    sqlite3_stmt *st = window_query(p, r, w,
        "SELECT b.fn, max(b.calls - coalesce(a.calls, 0), 0), max(b.self_ns - coalesce(a.self_ns, 0), 0), "
        "max(b.allocs - coalesce(a.allocs, 0), 0), max(b.alloc_bytes - coalesce(a.alloc_bytes, 0), 0), "
        "max(b.cpu_ns - coalesce(a.cpu_ns, 0), 0) "
        "FROM b LEFT JOIN a ON a.fn = b.fn");
    size_t rows = 0;
    t->cpu_known = 1;
    while (pdb_step(p, st) == SQLITE_ROW) {
        cnode *c = &t->v[fkeys_find(&t->keys, sqlite3_column_int64(st, 0)) + 1];
        c->calls = sat_add(c->calls, sqlite3_column_int64(st, 1));
        c->self_ns = sat_add(c->self_ns, sqlite3_column_int64(st, 2));
        c->total_ns = c->self_ns;
        c->allocs = sat_add(c->allocs, sqlite3_column_int64(st, 3));
        c->alloc_bytes = sat_add(c->alloc_bytes, sqlite3_column_int64(st, 4));
        c->cpu_ns = sat_add(c->cpu_ns, sqlite3_column_int64(st, 5));
        rows++;
        t->cpu_known &= sqlite3_column_type(st, 5) != SQLITE_NULL;
    }
    t->cpu_known &= rows > 0;
    sqlite3_finalize(st);
}

/* ---- spans (doc/spans.md): the span_snapshots rows, as the functions' ---- */

/* The span figures of run ?1 at snapshot time t (the latest row at or before
 * it per name), or at the end (the spans table). */
static size_t span_figures_at(char *sql, size_t n, const char *t)
{
    size_t len = (size_t)snprintf(sql, n, "SELECT name");
    for (int f = 0; f < PIANO_SPAN_F_N; f++)
        len += (size_t)snprintf(sql + len, n - len, ", %s", piano_span_figure_column(f));
    if (t)
        len += (size_t)snprintf(sql + len, n - len,
                                " FROM span_snapshots x WHERE run = ?1 AND t_ns = (SELECT max(t_ns) FROM span_snapshots "
                                "y WHERE y.run = ?1 AND y.name = x.name AND y.t_ns <= %s)", t);
    else
        len += (size_t)snprintf(sql + len, n - len, " FROM spans WHERE run = ?1");
    return len;
}

sqlite3_stmt *pdb_window_spans(pdb *p, const run_info *r, const pdb_window *w)
{
    char sql[4096], a_sql[1024], b_sql[1024];
    span_figures_at(a_sql, sizeof a_sql, "?2");
    span_figures_at(b_sql, sizeof b_sql, w->b_end ? NULL : "?3");
    size_t len = (size_t)snprintf(sql, sizeof sql, "WITH a AS (%s), b AS (%s) SELECT b.name, sp.fn", a_sql, b_sql);
    for (int f = 0; f < PIANO_SPAN_F_N; f++) {
        const char *c = piano_span_figure_column(f);
        len += (size_t)snprintf(sql + len, sizeof sql - len, ", max(b.%s - coalesce(a.%s, 0), 0)", c, c);
    }
    snprintf(sql + len, sizeof sql - len,
             " FROM b LEFT JOIN a ON a.name = b.name LEFT JOIN spans sp ON sp.run = ?1 AND sp.name = b.name"
             " WHERE b.count > coalesce(a.count, 0) ORDER BY %d DESC, b.name", 3 + PIANO_SPAN_F_wall);
    return window_prepare(p, r, w, sql);
}
