/*
 * import_spans.c - phase 2 of the import, for runs with spans: the spans
 * file's records (spool/span_spool.h), one row of the spans table per span name,
 * in ns. A record is read only when its magic says its name was written; its
 * counters are taken as they are (a live run's grow meanwhile: each is a
 * word, read once).
 */
#include "import_int.h"
#include "span_spool.h"

#include <stdlib.h>
#include <string.h>

/* The histogram blob of counts (ticks) into out: returns its length. */
static size_t hist_blob(const uint64_t *counts, unsigned char *out)
{
    return piano_hist_encode(counts, 0, PIANO_HIST_OCTAVES * PIANO_HIST_SUB, out);
}

#define SPAN_PARAM(...) ",?"

/* Stores the spans of the run. Returns 0, or -1 on a database error. */
int import_spans(struct job *j)
{
    struct mapping m = { 0 };
    if (spool_map_at(j->dfd, PIANO_SPOOL_SPANS, PIANO_SPANS_FILE_SIZE, &m) != 0)
        return 0;   /* no spans */
    unsigned char *blob = malloc(2 * (size_t)PIANO_HIST_BLOB_MAX);
    uint64_t *counts = malloc(2 * sizeof(uint64_t) * PIANO_HIST_BUCKETS);
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (!blob || !counts) {
        import_note(j, "no memory for its spans");
        rc = 0;
        goto out;
    }
    if (sqlite3_prepare_v2(j->db,
                           "INSERT OR IGNORE INTO spans(run, name, fn" PIANO_SPAN_FIGURE_COLS ", hist_wall, "
                           "hist_busy) VALUES(?,?,?" PIANO_SPAN_FIGURES(SPAN_PARAM) ",?,?)",
                           -1, &st, NULL))
        goto out;
    for (size_t at = 0; at + sizeof(struct piano_spool_span) <= m.len; at += PIANO_SPAN_REC_SIZE) {
        const struct piano_spool_span *r = (const struct piano_spool_span *)(m.p + at);
        if (!piano_span_rec_named(r))
            continue;   /* never made, or damaged */
        uint64_t f[PIANO_SPAN_F_N];
        piano_span_figures_read(r, f);
        for (unsigned b = 0; b < PIANO_HIST_BUCKETS; b++) {
            counts[b] = __atomic_load_n(&r->hist_wall[b], __ATOMIC_RELAXED);
            counts[PIANO_HIST_BUCKETS + b] = __atomic_load_n(&r->hist_busy[b], __ATOMIC_RELAXED);
        }
        size_t lw = hist_blob(counts, blob);
        size_t lb = hist_blob(counts + PIANO_HIST_BUCKETS, blob + lw);
        sqlite3_bind_int64(st, 1, j->run_id);
        sqlite3_bind_text(st, 2, r->name, (int)r->name_len, SQLITE_TRANSIENT);
        if (r->fn > PIANO_FN_OVERFLOW && r->fn < PIANO_FN_CAP) {
            sqlite3_bind_int64(st, 3, r->fn);
            use_fn(j, r->fn);   /* its name is stored: the span's frame is named so in contexts */
        } else {
            sqlite3_bind_null(st, 3);
        }
        for (int k = 0; k < PIANO_SPAN_F_N; k++)
            sqlite3_bind_int64(st, 4 + k, piano_span_figure_is_ns(k) ? to_ns(f[k], j->npt) : count64(f[k]));
        sqlite3_bind_blob(st, 4 + PIANO_SPAN_F_N, blob, (int)lw, SQLITE_TRANSIENT);
        sqlite3_bind_blob(st, 5 + PIANO_SPAN_F_N, blob + lw, (int)lb, SQLITE_TRANSIENT);
        if (STEP(st))
            goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    free(blob);
    free(counts);
    spool_unmap(&m);
    return rc;
}
