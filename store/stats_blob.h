/*
 * stats_blob.h - a thread's per-function stats as one blob (stat_trees.fns,
 * schema 18), the one writer and reader of the format, and the stats view
 * that reads them as the rows of schema 17's stats table.
 *
 * A blob: one byte h = flags | nf << 2 | v2 (flags: 1 the thread measured CPU
 * time, 2 the run tracked heap in use; nf: the figure fields the writer knew,
 * at most 30; v2: 0x80, set since schema 20, see below); since schema 22 nf
 * is 31 there and a second byte holds the real nf, which says the figures
 * are in PIANO_STATS_FIELDS_V3 order (v3). Then per function in ascending fn
 * order, unsigned LEB128 varints:
 *   (fn - the previous function's fn - 1) << 5 | k (the first's previous is
 *     -1; k: the figure fields that follow, those past them 0)
 *   k values, in PIANO_STATS_FIELDS order (v3: PIANO_STATS_FIELDS_V3, where
 *     child_calls comes fourth, before the allocation figures: jq's trivial
 *     run allocates in 90 of its 216 functions and calls others in 151, so
 *     the allocation figures' zeros are mostly past k: -490 bytes a run,
 *     bench/README.md "Schema 22"); total_ns (the third) as its
 *     difference from self_ns, zigzag (2d, or -2d - 1 when negative): 0 for
 *     a function that calls no instrumented function
 *   hist_self: 0 when NULL, else its length + 1, then its bytes
 *   hist_total: 0 when NULL, 1 when it equals hist_self (a leaf function:
 *     no bytes follow), else its length + 2, then its bytes
 * Without v2 (schemas 18-19) the histograms are spool/hist.h's blobs as they
 * were in stats' columns; with it, their compact v2 buckets alone, without
 * the blob's leading 0 and end mark (hist.h piano_hist_items): the reader
 * (piano_stats) gives them back as whole v2 blobs (piano_hist_wrap), so the
 * stats rows read the same.
 * A short run's function takes about 5 bytes besides its histograms, where a
 * row of the stats table took about 50 (a record header of a byte per column
 * for 22 columns, its key, and the pages' slack). The CPU fields are NULL
 * when flag 1 is not set, the heap fields when flag 2 is not; a field past nf
 * is 0 (or NULL when measured only when asked).
 */
#ifndef PIANO_STATS_BLOB_H
#define PIANO_STATS_BLOB_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include "metrics.h"

/* A function's figures: v[m] for each metric m (PIANO_M_*), and child_calls
 * (stats.child_calls, not a metric) at PIANO_STATS_CHILD. */
#define PIANO_STATS_CHILD PIANO_M_N
#define PIANO_STATS_NV (PIANO_M_N + 1)

/* The figure fields of a blob's function, in their order in the blob: those
 * of schema 18, then the counters added since (PIANO_NODE_COUNTERS). A blob's
 * order never changes: a new CTX or FN metric goes at the end (a static
 * assertion in stats_blob.c counts them). */
#define PIANO_STATS_FIELDS                                                                                 \
    PIANO_M_calls, PIANO_M_self_ns, PIANO_M_total_ns, PIANO_M_allocs, PIANO_M_alloc_bytes, PIANO_M_frees,  \
        PIANO_M_free_bytes, PIANO_STATS_CHILD, PIANO_M_unfinished, PIANO_M_cpu_ns, PIANO_M_cpu_total_ns,   \
        PIANO_M_cpu_user_ns, PIANO_M_cpu_sys_ns, PIANO_M_offcpu_ns, PIANO_M_inuse_objects,                 \
        PIANO_M_inuse_bytes, PIANO_M_peak_inuse_bytes PIANO_NODE_COUNTERS(PIANO_CTX_FIELD_COMMA)
/* The order of schema 22 on (v3): child_calls before the allocation figures. */
#define PIANO_STATS_FIELDS_V3                                                                              \
    PIANO_M_calls, PIANO_M_self_ns, PIANO_M_total_ns, PIANO_STATS_CHILD, PIANO_M_allocs, PIANO_M_alloc_bytes, \
        PIANO_M_frees, PIANO_M_free_bytes, PIANO_M_unfinished, PIANO_M_cpu_ns, PIANO_M_cpu_total_ns,       \
        PIANO_M_cpu_user_ns, PIANO_M_cpu_sys_ns, PIANO_M_offcpu_ns, PIANO_M_inuse_objects,                 \
        PIANO_M_inuse_bytes, PIANO_M_peak_inuse_bytes PIANO_NODE_COUNTERS(PIANO_CTX_FIELD_COMMA)
#ifndef PIANO_CTX_FIELD_COMMA
#define PIANO_CTX_FIELD_COMMA(id, field) , PIANO_M_##id
#endif

enum { PIANO_STATS_CPU = 1, PIANO_STATS_HEAP = 2, PIANO_STATS_HIST_V2 = 0x80, PIANO_STATS_V3_NF = 31 };

/* A blob being written: a growing buffer (malloc'd; free buf when done). */
typedef struct {
    unsigned char *buf;
    size_t len, cap;
    int64_t last_fn;
    int failed;   /* out of memory */
} piano_stats_writer;

/* Starts a blob (w's buffer kept from a previous one); flags PIANO_STATS_*. */
void piano_stats_begin(piano_stats_writer *w, int flags);
/* Appends function fn (ascending): v[PIANO_STATS_NV] its figures (>= 0), its
 * histograms hs (hs_len bytes) and ht, each NULL for a NULL column (any of
 * hist.h's formats: a v2 blob's buckets are kept as they are, unchecked; a
 * malformed v1 or fixed one, or fixed records out of order, fails the blob:
 * w->failed). */
void piano_stats_put(piano_stats_writer *w, int64_t fn, const int64_t v[PIANO_STATS_NV], const void *hs,
                     size_t hs_len, const void *ht, size_t ht_len);
/* Whether it holds a function. */
static inline int piano_stats_any(const piano_stats_writer *w) { return w->len > 2; }

/* A function read back: null[m] when figure m is NULL (not measured); hs and
 * ht point into the blob (NULL: the column is NULL): whole hist.h blobs, or
 * v2 buckets alone when the reader's hist_v2 is set. */
typedef struct {
    int64_t fn;
    int64_t v[PIANO_STATS_NV];
    unsigned char null[PIANO_STATS_NV];
    const unsigned char *hs, *ht;
    size_t hs_len, ht_len;
} piano_stats_row;

typedef struct {
    const unsigned char *b;
    size_t len, at;
    int flags, nf;
    int hist_v2;   /* the histograms are compact v2 buckets alone (PIANO_STATS_HIST_V2) */
    const int *order;   /* the figures' order: PIANO_STATS_FIELDS, or _V3 */
    int64_t fn;
} piano_stats_reader;

/* Starts reading blob b. Returns 0, or -1 when it has no header. */
int piano_stats_open(piano_stats_reader *r, const void *b, size_t len);
/* The next function: 1, 0 at the end, -1 when the blob is malformed there. */
int piano_stats_next(piano_stats_reader *r, piano_stats_row *row);

/* Registers the table-valued function piano_stats(fns) on db (its columns:
 * those of the stats view from fn on) and makes the TEMP view stats over it
 * and stat_rows, which piano-db's statements read (the table of schema 17,
 * same columns; since schema 19 the database stores no view of its own).
 * Returns SQLITE_OK or an error. */
int piano_stats_register(sqlite3 *db);

/* Makes the TEMP view stats (piano_stats_register) take inserts, updates and
 * deletes (`piano-db sql`): INSTEAD OF triggers, inserted rows going to
 * stat_rows; an update or delete of a function in a blob moves its thread's
 * stats to stat_rows first. Returns SQLITE_OK or an error. */
int piano_stats_make_triggers(sqlite3 *db);

#endif
