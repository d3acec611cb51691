/*
 * snapshots.c - `piano-db snapshots [RUN|TAG]`: a run's snapshots over time
 * (PIANO_INTERVAL). The table lists, per snapshot, the functions whose
 * figures changed in it, with their figures then (cumulative from the
 * start); --json gives every function's cumulative figures at each snapshot.
 * --spans does the same for the span names (span_snapshots, doc/spans.md).
 */
#include "piano_db.h"
#include "span_spool.h"
#include <stdlib.h>
#include <string.h>

/* The figures a snapshot holds per function, as the schema names them: the
 * metrics kept per snapshot (spool/metrics.h); those measured when asked
 * only for a run that measured them (cpu_ns: PIANO_CPU; inuse_objects and
 * inuse_bytes: PIANO_HEAP, live figures, not sums). */
#define SNAP_KEY(id, unit, when, where, snap, ...) PIANO_IF_SNAP_##snap(#id)
#define PIANO_IF_SNAP_0(x)
#define PIANO_IF_SNAP_1(x) x,
static const char *const snap_keys[] = {PIANO_METRICS(SNAP_KEY)};
enum { NSNAP = sizeof snap_keys / sizeof *snap_keys };

int pdb_has_snapshots(pdb *p)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM sqlite_master WHERE name = 'snapshot_times'");
    int has = pdb_step(p, st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return has;
}

int64_t pdb_snapshot_count(pdb *p, int64_t run)
{
    if (!pdb_has_snapshots(p))
        return 0;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM snapshot_times WHERE run = ?");
    sqlite3_bind_int64(st, 1, run);
    int64_t n = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

/* One snapshot in JSON: every function (key) with figures so far. */
static void json_snapshot(FILE *f, const fkeys *k, const int64_t *by_key, int64_t t_ns, int first, const int *shown)
{
    fprintf(f, "%s\n  {\"t_ns\": %lld, \"functions\": {", first ? "" : ",", (long long)t_ns);
    int any = 0;
    for (int key = 0; key < k->nkeys; key++) {
        const int64_t *v = by_key + (size_t)key * NSNAP;
        if (!v[0] && !v[1] && !v[2] && !v[3])
            continue;
        fputs(any ? ", " : "", f);
        json_str(f, k->labels[key]);
        fputs(": {", f);
        for (int c = 0; c < NSNAP; c++)
            if (shown[c])
                fprintf(f, "%s\"%s\": %lld", c ? ", " : "", snap_keys[c], (long long)v[c]);
        fputc('}', f);
        any = 1;
    }
    fputs("}}", f);
}

/* The table's columns: Time, Function, then one per figure, each naming its
 * snap_keys entry (key): their order is the table's (In use before Objects,
 * as in report), the values found by key. */
static const emit_col snap_cols[] = {
    {.head = "Time", .type = COL_TEXT, .minw = 8},
    {.head = "Function", .type = COL_TEXT, .flags = COL_LEFT | COL_FIT_NAMES, .minw = 20},
    {.head = "Calls", .key = "calls", .type = COL_INT, .minw = 5},
    {.head = "Self", .key = "self_ns", .type = COL_NS, .minw = 11},
    {.head = "Allocs", .key = "allocs", .type = COL_INT, .minw = 9},
    {.head = "Bytes", .key = "alloc_bytes", .type = COL_BYTES, .minw = 11},
    {.head = "CPU", .key = "cpu_ns", .type = COL_NS, .minw = 11},
    {.head = "In use", .key = "inuse_bytes", .type = COL_BYTES, .minw = 11},
    {.head = "Objects", .key = "inuse_objects", .type = COL_INT, .minw = 7},
};
enum { NCOLS = sizeof snap_cols / sizeof *snap_cols };
_Static_assert(NCOLS == 2 + NSNAP, "a column per figure a snapshot keeps");

/* --spans: per snapshot, the span names whose figures changed in it, with
 * their figures then (cumulative; a span counts at its close); --json every
 * span name's figures so far at each snapshot. */
static const emit_col snap_span_cols[] = {
    {.head = "Time", .type = COL_TEXT, .minw = 8},
    {.head = "Span", .type = COL_TEXT, .flags = COL_LEFT, .minw = 12},
    {.head = "Count", .type = COL_INT, .minw = 5},
    {.head = "Wall", .type = COL_NS, .minw = 11},
    {.head = "Busy", .type = COL_NS, .minw = 11},
    {.head = "Idle", .type = COL_NS, .minw = 11},
};
enum { NSPANCOLS = sizeof snap_span_cols / sizeof *snap_span_cols };

struct span_so_far { char *name; int64_t count, wall_ns, busy_ns; };

static void json_span_snapshot(const struct span_so_far *sp, size_t n, int64_t t_ns, int first)
{
    printf("%s\n  {\"t_ns\": %lld, \"spans\": {", first ? "" : ",", (long long)t_ns);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", stdout);
        json_str(stdout, sp[i].name);
        printf(": {\"count\": %lld, \"wall_ns\": %lld, \"busy_ns\": %lld, \"idle_ns\": %lld}",
               (long long)sp[i].count, (long long)sp[i].wall_ns, (long long)sp[i].busy_ns,
               (long long)(sp[i].wall_ns > sp[i].busy_ns ? sp[i].wall_ns - sp[i].busy_ns : 0));
    }
    fputs("}}", stdout);
}

static int snapshots_spans(pdb *p, const pdb_opts *o, int64_t id, int64_t n)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT t.t_ns, s.name, s.%s, s.%s, s.%s FROM snapshot_times t LEFT JOIN span_snapshots s"
             " ON s.run = t.run AND s.t_ns = t.t_ns WHERE t.run = ? ORDER BY t.t_ns, s.name",
             piano_span_figure_column(PIANO_SPAN_F_count), piano_span_figure_column(PIANO_SPAN_F_wall),
             piano_span_figure_column(PIANO_SPAN_F_busy));
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, id);
    struct span_so_far *sp = NULL;   /* by name, in the order first seen (names sorted per snapshot) */
    size_t nsp = 0, cap = 0, rows = 0;
    emitter e;
    if (o->json)
        fputc('[', stdout);
    else
        emit_begin(&e, stdout, EMIT_TABLE, snap_span_cols, NSPANCOLS, 0);
    int first = 1;
    char when[32];
    int rc = pdb_step(p, st);
    while (rc == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0);
        for (; rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == t; rc = pdb_step(p, st)) {
            if (sqlite3_column_type(st, 1) == SQLITE_NULL)
                continue;   /* no span changed in this snapshot */
            const char *name = (const char *)sqlite3_column_text(st, 1);
            size_t i = 0;
            while (i < nsp && strcmp(sp[i].name, name) != 0)
                i++;
            if (i == nsp) {
                if (nsp == cap)
                    sp = xrealloc(sp, (cap = cap ? 2 * cap : 16) * sizeof *sp);
                sp[nsp++] = (struct span_so_far){.name = xstrdup(name)};
            }
            sp[i].count = sqlite3_column_int64(st, 2);
            sp[i].wall_ns = sqlite3_column_int64(st, 3);
            sp[i].busy_ns = sqlite3_column_int64(st, 4);
            rows++;
            if (!o->json) {
                snprintf(when, sizeof when, "%.3fs", (double)t / 1e9);
                emit_val row[NSPANCOLS] = {{.s = when}, {.s = sp[i].name}, {.i = sp[i].count}, {.i = sp[i].wall_ns},
                                           {.i = sp[i].busy_ns},
                                           {.i = sp[i].wall_ns > sp[i].busy_ns ? sp[i].wall_ns - sp[i].busy_ns : 0}};
                emit_row(&e, row, NULL);
            }
        }
        if (o->json) {
            json_span_snapshot(sp, nsp, t, first);
            first = 0;
        }
    }
    sqlite3_finalize(st);
    if (o->json) {
        fputs("\n]\n", stdout);
    } else {
        emit_end(&e, NULL);
        printf("\n%lld snapshots; %s\n", (long long)n,
               rows ? "figures are cumulative from the run's start, of the spans closed by then; a span is "
                      "listed at the snapshots in which its figures changed"
                    : "no span closed in them (include/piano/span.h, doc/spans.md)");
    }
    for (size_t i = 0; i < nsp; i++)
        free(sp[i].name);
    free(sp);
    return 0;
}

int cmd_snapshots(pdb *p, const pdb_opts *o)
{
    if (o->csv)
        pdb_usage_die("snapshots: --csv is not supported (--json is)");
    int64_t id;
    pdb_pick_runs(p, o, 0, 1, "one RUN or TAG", &id);
    int64_t n = pdb_snapshot_count(p, id);
    if (n == 0) {
        if (o->json)
            puts("[]");
        else
            printf("run %lld has no snapshots (made without PIANO_INTERVAL=SECS, or it ended before its first: a forked child that ended with _exit)\n",
                   (long long)id);
        return 0;
    }
    if (o->spans)
        return snapshots_spans(p, o, id, n);
    /* The figures the run measured (spool/metrics.h's `when`). */
    run_info r;
    pdb_run_load(p, id, &r);
    int shown[NSNAP];
    for (int c = 0, m = 0; m < PIANO_M_N; m++)
        if (pdb_metrics[m].snap)
            shown[c++] = pdb_metrics[m].when == PIANO_WHEN_CPU ? r.cpu_measured
                         : pdb_metrics[m].when == PIANO_WHEN_HEAP ? r.heap_tracked : 1;
    pdb_run_free(&r);
    /* The table's columns: Time, Function, then those of the figures shown (at[c]: snap_cols[c]'s
     * figure in snap_keys). */
    emit_col cols[NCOLS];
    int ncols = 0, at[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        at[c] = -1;
        for (int i = 0; c >= 2 && i < NSNAP; i++)
            if (!strcmp(snap_cols[c].key, snap_keys[i]))
                at[c] = i;
        if (c >= 2 && at[c] < 0)
            pdb_die("snapshots: column %s is no figure of a snapshot", snap_cols[c].key);   /* a bug */
        if (c < 2 || shown[at[c]])
            cols[ncols] = snap_cols[c], cols[ncols++].key = NULL;
    }
    fkeys k;
    fkeys_load(p, id, &k);
    int64_t *cum = xcalloc((k.nids + 1) * NSNAP, sizeof *cum);          /* per id */
    int64_t *by_key = xcalloc(((size_t)k.nkeys + 1) * NSNAP, sizeof *by_key);
    char sql[1024];
    size_t len = (size_t)snprintf(sql, sizeof sql, "SELECT t.t_ns, s.fn");
    for (int c = 0; c < NSNAP; c++)
        len += (size_t)snprintf(sql + len, sizeof sql - len, ", coalesce(s.%s, 0)", snap_keys[c]);
    snprintf(sql + len, sizeof sql - len, " FROM snapshot_times t LEFT JOIN snapshots s ON s.run = t.run "
                                          "AND s.t_ns = t.t_ns WHERE t.run = ? ORDER BY t.t_ns, s.fn");
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, id);
    emitter e;
    if (o->json)
        fputc('[', stdout);
    else
        emit_begin(&e, stdout, EMIT_TABLE, cols, ncols, 0);
    int64_t cur_t = -1;
    int first = 1;
    char when[32];
    int rc = pdb_step(p, st);
    while (rc == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0);
        cur_t = t;
        for (; rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == cur_t; rc = pdb_step(p, st)) {
            if (sqlite3_column_type(st, 1) == SQLITE_NULL)
                continue;   /* a snapshot in which nothing changed */
            int64_t fn = sqlite3_column_int64(st, 1);
            size_t slot = fkeys_index(&k, fn);
            int key = fkeys_find(&k, fn);
            for (int c = 0; c < NSNAP; c++) {
                int64_t v = sqlite3_column_int64(st, 2 + c);
                by_key[(size_t)key * NSNAP + c] = sat_add(by_key[(size_t)key * NSNAP + c], v - cum[slot * NSNAP + c]);
                cum[slot * NSNAP + c] = v;
            }
            if (!o->json) {
                const int64_t *v = by_key + (size_t)key * NSNAP;
                snprintf(when, sizeof when, "%.3fs", (double)t / 1e9);
                emit_val row[NCOLS] = {{.s = when}, {.s = k.labels[key]}};
                int n = 2;
                for (int c = 2; c < NCOLS; c++)
                    if (shown[at[c]])
                        row[n++] = (emit_val){.i = v[at[c]]};
                emit_row(&e, row, NULL);
            }
        }
        if (o->json) {
            json_snapshot(stdout, &k, by_key, t, first, shown);
            first = 0;
        }
    }
    sqlite3_finalize(st);
    if (o->json) {
        fputs("\n]\n", stdout);
    } else {
        emit_end(&e, NULL);
        printf("\n%lld snapshots; figures are cumulative from the run's start; a function is listed at the "
               "snapshots in which its figures changed\n", (long long)n);
    }
    free(cum);
    free(by_key);
    fkeys_free(&k);
    return 0;
}
