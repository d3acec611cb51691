/*
 * import_snaps.c - phase 2 of the import, for runs with PIANO_INTERVAL: the
 * snaps file's records (spool.h), turned into snapshot_times and snapshots
 * rows with each function's cumulative figures in ns, and span_snapshots
 * rows with each span name's (span_spool.h PIANO_SPAN_FIGURES). Read up to the first
 * record that is cut or malformed (a crash during the last write, a live
 * run's record being written).
 */
#include "import_int.h"
#include "span_spool.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of the snaps file read at most: 1 GiB, days of snapshots of a
 * thousand changing functions every second. */
#define SNAPS_READ_MAX ((size_t)1 << 30)

#define SPAN_PARAM(...) ",?"

/* The span entries of a record (at e, up to its end): each span name's
 * cumulative figures into cum and a span_snapshots row at t_ns. Names are
 * read from the spans file (NULL: none; its entries are skipped). Returns 0,
 * 1 on damage (told), -1 on a database error. */
static int span_entries(struct job *j, const unsigned char *e, const unsigned char *end,
                        const struct piano_snap_hdr *h, int64_t t_ns, int64_t (*cum)[PIANO_SPAN_F_N],
                        const struct mapping *names, sqlite3_stmt *st)
{
    uint32_t id = 0;
    for (uint32_t k = 0; k < h->nspans; k++) {
        int64_t d[PIANO_SPAN_F_N];
        if (!(e = piano_snap_entry_n(e, end, &id, PIANO_SPAN_CAP + 1, d, PIANO_SPAN_F_N))) {
            import_note(j, PIANO_SPOOL_SNAPS ": a damaged snapshot; the later ones are not read");
            return 1;
        }
        int64_t *c = cum[id - 1];
        for (int f = 0; f < PIANO_SPAN_F_N; f++)
            c[f] += d[f];
        size_t at = (size_t)(id - 1) * PIANO_SPAN_REC_SIZE;
        if (!names || at + sizeof(struct piano_spool_span) > names->len)
            continue;
        const struct piano_spool_span *r = (const struct piano_spool_span *)(names->p + at);
        if (!piano_span_rec_named(r))
            continue;
        sqlite3_bind_int64(st, 1, j->run_id);
        sqlite3_bind_text(st, 2, r->name, (int)r->name_len, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 3, t_ns);
        for (int f = 0; f < PIANO_SPAN_F_N; f++) {
            int64_t v = c[f] > 0 ? c[f] : 0;
            sqlite3_bind_int64(st, 4 + f, piano_span_figure_is_ns(f) ? (v ? to_ns((uint64_t)v, j->npt) : 0) : v);
        }
        if (STEP(st))
            return -1;
    }
    return 0;
}

/* Stores the snapshots of the run. Returns 0, or -1 on a database error. */
int import_snapshots(struct job *j)
{
    struct mapping m = { 0 };
    if (spool_map_at(j->dfd, PIANO_SPOOL_SNAPS, SNAPS_READ_MAX, &m) != 0)
        return 0;   /* no snapshots */
    int64_t (*cum)[PIANO_SNAP_N] = calloc(PIANO_FN_CAP, sizeof *cum);
    int64_t *cpu_was = calloc(PIANO_FN_CAP, sizeof *cpu_was);   /* each function's CPU as last stored */
    int64_t (*span_cum)[PIANO_SPAN_F_N] = calloc(PIANO_SPAN_CAP, sizeof *span_cum);
    struct mapping names = { 0 };   /* the spans file: the span names */
    int have_names = spool_map_at(j->dfd, PIANO_SPOOL_SPANS, PIANO_SPANS_FILE_SIZE, &names) == 0;
    sqlite3_stmt *t_st = NULL, *s_st = NULL, *sp_st = NULL;
    int rc = -1;
    if (!cum || !cpu_was || !span_cum) {
        import_note(j, "no memory for its snapshots");
        rc = 0;
        goto out;
    }
    if (sqlite3_prepare_v2(j->db, "INSERT OR IGNORE INTO snapshot_times(run, t_ns) VALUES(?,?)", -1, &t_st, NULL) ||
        sqlite3_prepare_v2(j->db,
                           "INSERT OR REPLACE INTO snapshots(run, fn, t_ns, calls, self_ns, child_calls, allocs, "
                           "alloc_bytes, cpu_ns, inuse_objects, inuse_bytes) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &s_st, NULL) ||
        sqlite3_prepare_v2(j->db,
                           "INSERT OR REPLACE INTO span_snapshots(run, name, t_ns" PIANO_SPAN_FIGURE_COLS
                           ") VALUES(?,?,?" PIANO_SPAN_FIGURES(SPAN_PARAM) ")",
                           -1, &sp_st, NULL))
        goto out;
    const unsigned char *p = m.p, *end = m.p + m.len, *next;
    struct piano_snap_hdr h;
    const unsigned char *e;
    uint64_t last_tick = 0;
    while ((next = piano_snap_read(p, end, &h, &e)) != NULL) {
        if (h.tick < last_tick || h.tick < j->run->tick0)
            break;   /* time runs forwards: this is damage */
        last_tick = h.tick;
        int64_t t_ns = since(h.tick, j->run->tick0, j->npt);
        sqlite3_bind_int64(t_st, 1, j->run_id);
        sqlite3_bind_int64(t_st, 2, t_ns);
        if (STEP(t_st))
            goto out;
        uint32_t id = 0;
        for (uint32_t k = 0; k < h.nfns; k++) {
            int64_t d[PIANO_SNAP_N];
            if (!(e = piano_snap_entry(e, next, &id, d))) {
                import_note(j, PIANO_SPOOL_SNAPS ": a damaged snapshot; the later ones are not read");
                rc = 0;
                goto out;
            }
            int64_t *c = cum[id];
            for (int i = 0; i < PIANO_SNAP_N; i++)
                c[i] += d[i];
            use_fn(j, id);
            sqlite3_bind_int64(s_st, 1, j->run_id);
            sqlite3_bind_int64(s_st, 2, id);
            sqlite3_bind_int64(s_st, 3, t_ns);
            sqlite3_bind_int64(s_st, 4, c[PIANO_SNAP_calls]);
            sqlite3_bind_int64(s_st, 5, c[PIANO_SNAP_self] > 0 ? to_ns((uint64_t)c[PIANO_SNAP_self], j->npt) : 0);
            sqlite3_bind_int64(s_st, 6, c[PIANO_SNAP_child_calls]);
            sqlite3_bind_int64(s_st, 7, c[PIANO_SNAP_allocs]);
            sqlite3_bind_int64(s_st, 8, c[PIANO_SNAP_alloc_bytes]);
            if (j->run->cpu_mode == PIANO_CPU_PERF) {
                int64_t cpu_self = c[PIANO_SNAP_cpu_self] > 0 ? to_ns((uint64_t)c[PIANO_SNAP_cpu_self], j->npt) : 0;
                /* Self time and off-CPU time are read at different moments,
                 * the calls in flight's as they run (rt/cpu.c
                 * cpu_inflight_add): cumulative CPU never goes down, so that
                 * no window has less than none. */
                int64_t cpu = cpu_self - c[PIANO_SNAP_off];
                if (cpu > cpu_was[id])
                    cpu_was[id] = cpu;
                sqlite3_bind_int64(s_st, 9, cpu_was[id]);
            } else {
                sqlite3_bind_null(s_st, 9);
            }
            if (j->run->heap) {   /* in use now: it also goes down */
                sqlite3_bind_int64(s_st, 10, c[PIANO_SNAP_inuse_objects] > 0 ? c[PIANO_SNAP_inuse_objects] : 0);
                sqlite3_bind_int64(s_st, 11, c[PIANO_SNAP_inuse_bytes] > 0 ? c[PIANO_SNAP_inuse_bytes] : 0);
            } else {
                sqlite3_bind_null(s_st, 10);
                sqlite3_bind_null(s_st, 11);
            }
            if (STEP(s_st))
                goto out;
        }
        int sr = span_entries(j, e, next, &h, t_ns, span_cum, have_names ? &names : NULL, sp_st);
        if (sr != 0) {
            rc = sr > 0 ? 0 : -1;
            goto out;
        }
        p = next;
    }
    /* The process was alive at its last snapshot: a run that died lasts at
     * least until then (its calls may all have ended before). */
    if (last_tick > j->seen)
        j->seen = last_tick;
    rc = 0;
out:
    sqlite3_finalize(t_st);
    sqlite3_finalize(s_st);
    sqlite3_finalize(sp_st);
    free(cum);
    free(cpu_was);
    free(span_cum);
    if (have_names)
        spool_unmap(&names);
    spool_unmap(&m);
    return rc;
}
