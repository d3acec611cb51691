/* spans.c - `piano-db report --spans`: per span name, its spans' wall, busy
 * and idle times with their p50/p99, and what ran while they were entered
 * (CPU time, allocations: from the calling contexts under the span's frame). */
#include "piano_db.h"
#include "span_spool.h"
#include <stdlib.h>
#include <string.h>

static const emit_col span_cols[] = {
    {.head = "Span", .key = "span", .type = COL_TEXT, .flags = COL_LEFT, .minw = 12},
    {.head = "Count", .key = "count", .type = COL_INT, .minw = 5},
    {.head = "Wall", .key = "wall_ns", .type = COL_NS, .minw = 11},
    {.head = "Busy", .key = "busy_ns", .type = COL_NS, .minw = 11},
    {.head = "Idle", .key = "idle_ns", .type = COL_NS, .minw = 11},
    {.head = "p50", .key = "p50_ns", .type = COL_NS, .minw = 11},
    {.head = "p99", .key = "p99_ns", .type = COL_NS, .minw = 11},
    {.head = "p50 busy", .key = "p50_busy_ns", .type = COL_NS, .minw = 11},
    {.head = "p99 busy", .key = "p99_busy_ns", .type = COL_NS, .minw = 11},
    {.head = "CPU", .key = "cpu_ns", .type = COL_NS, .minw = 11},
    {.head = "Allocs", .key = "allocs", .type = COL_INT, .minw = 9},
    {.head = "Bytes", .key = "alloc_bytes", .type = COL_BYTES, .minw = 11},
    {.head = "Unfinished", .key = "unfinished", .type = COL_INT, .minw = 10},
};
enum { NSPAN = sizeof span_cols / sizeof *span_cols };

static int64_t span_ns(uint64_t ticks, double npt)
{
    double ns = (double)ticks * npt + 0.5;
    return ns >= 9.2e18 ? INT64_MAX : (int64_t)ns;
}

/* The quantile q of a histogram blob, in ns. */
static int64_t blob_quantile(piano_hist *h, const void *blob, int len, double q, double npt)
{
    memset(h, 0, sizeof *h);
    if (!blob || len <= 0 || piano_hist_add_blob(h, blob, (size_t)len) != 0 || !h->total)
        return 0;
    return span_ns(piano_hist_quantile(h, q), npt);
}

/* Rows by wall time: the spans of run r that counted one at least. */
static const char *const span_sql =
    /* Each span's context subtrees (a context under a span's frame, once per span name). */
    "WITH RECURSIVE sub(thread, id, fn) AS ("
    "  SELECT thread, id, fn FROM contexts WHERE run = ?1 AND fn IN (SELECT fn FROM spans WHERE run = ?1)"
    "  UNION SELECT c.thread, c.id, sub.fn FROM contexts c JOIN sub ON c.run = ?1 AND c.thread = sub.thread"
    "  AND c.parent = sub.id),"
    " inside(fn, allocs, alloc_bytes) AS (SELECT s.fn, sum(c.allocs), sum(c.alloc_bytes) FROM sub s"
    "  JOIN contexts c ON c.run = ?1 AND c.thread = s.thread AND c.id = s.id GROUP BY s.fn),"
    " cpu(fn, cpu_ns) AS (SELECT fn, sum(cpu_total_ns) FROM stats WHERE run = ?1 AND fn IN"
    "  (SELECT fn FROM spans WHERE run = ?1) GROUP BY fn)"
    " SELECT sp.name, sp.count, sp.wall_ns, sp.busy_ns, sp.hist_wall, sp.hist_busy, cpu.cpu_ns,"
    "  coalesce(i.allocs, 0), coalesce(i.alloc_bytes, 0), sp.unfinished"
    " FROM spans sp LEFT JOIN inside i ON i.fn = sp.fn LEFT JOIN cpu ON cpu.fn = sp.fn"
    " WHERE sp.run = ?1 AND sp.count > 0 ORDER BY sp.wall_ns DESC, sp.name";

void report_spans(pdb *p, const pdb_opts *o, const run_info *r)
{
    emit_mode mode = emit_mode_of(o);
    pdb_window w = { .set = o->from || o->to, .from_set = o->from != NULL, .to_set = o->to != NULL };
    sqlite3_stmt *st;
    if (w.set) {
        w.from_s = o->from ? strtod(o->from, NULL) : 0;
        w.to_s = o->to ? strtod(o->to, NULL) : 0;
        pdb_window_resolve(p, r, &w);
        st = pdb_window_spans(p, r, &w);
        if (mode == EMIT_TABLE) {
            char what[160];
            pdb_window_describe(&w, what, sizeof what);
            printf("run %lld, window %s\n", (long long)r->id, what);
        }
    } else {
        st = pdb_prepare(p, span_sql);
        sqlite3_bind_int64(st, 1, r->id);
    }
    piano_hist *h = xmalloc(sizeof *h);
    emitter e;
    emit_begin(&e, stdout, mode, span_cols, NSPAN, 0);
    size_t n = 0, shown = 0;
    long top = o->all ? -1 : o->top > 0 ? o->top : mode == EMIT_TABLE ? 30 : -1;
    int64_t unfinished = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        n++;
        if (top >= 0 && (long)shown >= top)
            continue;
        shown++;
        emit_val v[NSPAN];
        memset(v, 0, sizeof v);
        if (w.set) {   /* name, fn, then the figures' growth (pdb_window_spans): no p50/p99, CPU, allocations */
            int64_t wall = sqlite3_column_int64(st, 2 + PIANO_SPAN_F_wall),
                    busy = sqlite3_column_int64(st, 2 + PIANO_SPAN_F_busy);
            v[0].s = pdb_col_text(st, 0);
            v[1].i = sqlite3_column_int64(st, 2 + PIANO_SPAN_F_count);
            v[2].i = wall;
            v[3].i = busy;
            v[4].i = wall > busy ? wall - busy : 0;
            for (int k = 5; k <= 11; k++)
                v[k].null = 1;
            v[12].i = sqlite3_column_int64(st, 2 + PIANO_SPAN_F_unfinished);
            unfinished += v[12].i;
            emit_row(&e, v, NULL);
            continue;
        }
        int64_t wall = sqlite3_column_int64(st, 2), busy = sqlite3_column_int64(st, 3);
        v[0].s = pdb_col_text(st, 0);
        v[1].i = sqlite3_column_int64(st, 1);
        v[2].i = wall;
        v[3].i = busy;
        v[4].i = wall > busy ? wall - busy : 0;
        for (int k = 0; k < 4; k++)
            v[5 + k].i = blob_quantile(h, sqlite3_column_blob(st, 4 + k / 2), sqlite3_column_bytes(st, 4 + k / 2),
                                       k % 2 ? 0.99 : 0.50, r->ns_per_tick);
        v[9].null = sqlite3_column_type(st, 6) == SQLITE_NULL;   /* not measured: PIANO_CPU=1 */
        v[9].i = sqlite3_column_int64(st, 6);
        v[10].i = sqlite3_column_int64(st, 7);
        v[11].i = sqlite3_column_int64(st, 8);
        v[12].i = sqlite3_column_int64(st, 9);
        unfinished += v[12].i;
        emit_row(&e, v, NULL);
    }
    sqlite3_finalize(st);
    free(h);
    emit_end(&e, mode != EMIT_TABLE ? NULL
                 : w.set        ? "no span closed in this window\n"
                                : "no spans in this run (include/piano/span.h: doc/spans.md)\n");
    if (mode == EMIT_TABLE) {
        if (shown < n)
            printf("(%zu more span%s hidden: --top N or --all shows them)\n", n - shown, n - shown == 1 ? "" : "s");
        if (n && w.set)
            printf("\nwindow: the spans closed in it (a span counts whole in the window of its close)%s; p50/p99, "
                   "CPU and allocations are not kept per snapshot (-)\n",
                   unfinished ? "; unfinished: still open at the end, timed to it" : "");
        else if (n)
            printf("\nrun %lld: wall = open to close, busy = entered, idle = open and not entered; p50/p99 of each "
                   "span's wall and busy time%s\n",
                   (long long)r->id, unfinished ? "; unfinished: still open at the end, timed to it" : "");
    }
}

/* ---- diff --spans ---- */

static const emit_col diff_span_cols[] = {
    {.head = "Span", .key = "span", .type = COL_TEXT, .flags = COL_LEFT, .minw = 12},
    {.head = "Count A", .key = "count_a", .type = COL_INT, .minw = 7},
    {.head = "Count B", .key = "count_b", .type = COL_INT, .minw = 7},
    {.head = "Wall A", .key = "wall_per_span_ns_a", .type = COL_NS, .minw = 11},
    {.head = "Wall B", .key = "wall_per_span_ns_b", .type = COL_NS, .minw = 11},
    {.head = "Busy A", .key = "busy_per_span_ns_a", .type = COL_NS, .minw = 11},
    {.head = "Busy B", .key = "busy_per_span_ns_b", .type = COL_NS, .minw = 11},
    {.head = "p50 A", .key = "p50_ns_a", .type = COL_NS, .minw = 11},
    {.head = "p50 B", .key = "p50_ns_b", .type = COL_NS, .minw = 11},
    {.head = "p99 A", .key = "p99_ns_a", .type = COL_NS, .minw = 11},
    {.head = "p99 B", .key = "p99_ns_b", .type = COL_NS, .minw = 11},
    {.key = "wall_ns_a", .type = COL_INT},
    {.key = "wall_ns_b", .type = COL_INT},
    {.key = "busy_ns_a", .type = COL_INT},
    {.key = "busy_ns_b", .type = COL_INT},
    {.key = "idle_ns_a", .type = COL_INT},
    {.key = "idle_ns_b", .type = COL_INT},
};
enum { NDSPAN = sizeof diff_span_cols / sizeof *diff_span_cols };

/* Per span name of runs A and B (either may lack it: null there): count, wall
 * and busy per span, p50/p99 of wall; sorted by the change of wall per span. */
void diff_spans(pdb *p, const pdb_opts *o, const run_info *ra, const run_info *rb)
{
    sqlite3_stmt *st = pdb_prepare(
        p, "WITH n(name) AS (SELECT name FROM spans WHERE run = ?1 AND count > 0 UNION SELECT name FROM spans WHERE "
           "run = ?2 AND count > 0) SELECT n.name, a.count, a.wall_ns, a.busy_ns, a.hist_wall, b.count, b.wall_ns, "
           "b.busy_ns, b.hist_wall FROM n LEFT JOIN spans a ON a.run = ?1 AND a.name = n.name LEFT JOIN spans b ON "
           "b.run = ?2 AND b.name = n.name ORDER BY abs(coalesce(b.wall_ns * 1.0 / b.count, 0) - coalesce(a.wall_ns "
           "* 1.0 / a.count, 0)) DESC, n.name");
    sqlite3_bind_int64(st, 1, ra->id);
    sqlite3_bind_int64(st, 2, rb->id);
    piano_hist *h = xmalloc(sizeof *h);
    emit_mode mode = emit_mode_of(o);
    emitter e;
    emit_begin(&e, stdout, mode, diff_span_cols, NDSPAN, 0);
    size_t n = 0, shown = 0;
    long top = o->all ? -1 : o->top_set ? o->top : -1;
    while (pdb_step(p, st) == SQLITE_ROW) {
        n++;
        if (top >= 0 && (long)shown >= top)
            continue;
        shown++;
        emit_val v[NDSPAN];
        memset(v, 0, sizeof v);
        v[0].s = pdb_col_text(st, 0);
        for (int side = 0; side < 2; side++) {
            int c = 1 + 4 * side;
            const run_info *r = side ? rb : ra;
            int none = sqlite3_column_type(st, c) == SQLITE_NULL;
            int64_t count = sqlite3_column_int64(st, c), wall = sqlite3_column_int64(st, c + 1),
                    busy = sqlite3_column_int64(st, c + 2);
            int64_t vals[] = {count,
                              count ? wall / count : 0,
                              count ? busy / count : 0,
                              blob_quantile(h, sqlite3_column_blob(st, c + 3), sqlite3_column_bytes(st, c + 3), 0.50,
                                            r->ns_per_tick),
                              blob_quantile(h, sqlite3_column_blob(st, c + 3), sqlite3_column_bytes(st, c + 3), 0.99,
                                            r->ns_per_tick),
                              wall,
                              busy,
                              wall - busy};
            for (int k = 0; k < 8; k++) {
                int col = 1 + 2 * k + side;
                v[col].i = vals[k];
                v[col].null = none;
            }
        }
        emit_row(&e, v, NULL);
    }
    sqlite3_finalize(st);
    free(h);
    emit_end(&e, mode == EMIT_TABLE ? "no spans in either run (include/piano/span.h: doc/spans.md)\n" : NULL);
    if (mode == EMIT_TABLE) {
        if (shown < n)
            printf("(%zu more span%s hidden: --all shows them)\n", n - shown, n - shown == 1 ? "" : "s");
        printf("\nA: run %lld, B: run %lld; Wall and Busy per span; p50/p99 of each span's wall time; '-': no "
               "such span in that run\n",
               (long long)ra->id, (long long)rb->id);
    }
}
