/*
 * contexts_blob.h - a thread's calling contexts as one blob (context_trees.
 * nodes, schema 17), the one writer and reader of the format, and the
 * contexts view that reads them as the rows of schema 16's contexts table.
 *
 * A blob: one byte h = flags | nf << 2 | v2 (flags: 1 the thread measured CPU
 * time, 2 the run tracked heap in use; nf: the metric fields the writer knew,
 * at most 31; v2: 0x80, set since schema 21), then per context in ascending
 * id order, unsigned LEB128 varints:
 *   v2 (schema 21 on):
 *     c << 5 | k (k: the metric fields that follow, those past them 0), where
 *       c >= 1 says the context's id is the previous one's + 1 and its parent
 *       the (c - 1)th up the previous context's ancestry: c = 1 the previous
 *       context itself, 2 its parent, ..., c = its depth + 1 none (a root);
 *       c = 0 that the next two varints say them. 95% of jq's contexts are
 *       1-3 (one byte for head and parent where v1 took two). The ancestry
 *       of a context whose parent is not in the blob is itself alone.
 *     when c = 0: id - the previous context's id - 1 (the first context's
 *       previous id is 0), then up: 0 at a root, else id - parent (a parent
 *       always has a smaller id)
 *     fn as its difference from the previous context's fn (the first's
 *       previous is 0), zigzag (2d, or -2d - 1 when negative): jq's contexts
 *       take 1.2 bytes for it where fn itself took 1.6
 *   v1 (schemas 17-20):
 *     (id - the previous context's id - 1) << 5 | k (as above)
 *     up (as above)
 *     fn
 *   then k values, in PIANO_CTX_FIELDS order; total_ns (the third) as its
 *     difference from self_ns, zigzag: 0 at a leaf
 * A short run's context takes 6-10 bytes in v1 (one each for its id step and
 * k, up, calls, and at a leaf total; 1-2 for fn, 2-3 for self; the allocation
 * figures mostly 0, left out), about 1.4 less in v2, where a row of the
 * contexts table took about 41 (a record header of a byte per column, its
 * key, and the pages' slack).
 * The CPU fields are NULL when flag 1 is not set, the heap fields when flag
 * 2 is not; a field past nf is 0 (or NULL when measured only when asked).
 */
#ifndef PIANO_CONTEXTS_BLOB_H
#define PIANO_CONTEXTS_BLOB_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include "metrics.h"

/* The metric fields of a blob's context, in their order in the blob: the CTX
 * metrics of schema 17, then the counters added since (PIANO_NODE_COUNTERS).
 * A blob's order never changes: a new CTX metric goes at the end (a static
 * assertion in contexts_blob.c counts them). */
#define PIANO_CTX_FIELD_ID(id, field) PIANO_M_##id,
#define PIANO_CTX_FIELDS                                                                                   \
    PIANO_M_calls, PIANO_M_self_ns, PIANO_M_total_ns, PIANO_M_allocs, PIANO_M_alloc_bytes, PIANO_M_frees,  \
        PIANO_M_free_bytes, PIANO_M_cpu_ns, PIANO_M_cpu_total_ns, PIANO_M_cpu_user_ns, PIANO_M_cpu_sys_ns, \
        PIANO_M_offcpu_ns, PIANO_M_inuse_objects, PIANO_M_inuse_bytes,                                     \
        PIANO_M_peak_inuse_bytes PIANO_NODE_COUNTERS(PIANO_CTX_FIELD_COMMA)
#define PIANO_CTX_FIELD_COMMA(id, field) , PIANO_M_##id

enum { PIANO_CTX_CPU = 1, PIANO_CTX_HEAP = 2, PIANO_CTX_V2 = 0x80 };

/* The contexts of a blob so far, to tell a context's ancestry (v2): their ids
 * (ascending) and each one's parent's index in them (-1: a root, or a parent
 * not in the blob), and the indexes of the last context's ancestry, root first. */
typedef struct {
    int64_t *id, *up;
    size_t n, cap;
    int64_t *chain;
    size_t depth, chain_cap;
} piano_ctx_tree;

/* A blob being written: a growing buffer (malloc'd; free buf and the tree's
 * arrays when done: piano_ctx_writer_free). */
typedef struct {
    unsigned char *buf;
    size_t len, cap;
    int64_t last_id, last_fn;
    int failed;   /* out of memory */
    piano_ctx_tree tree;
} piano_ctx_writer;
void piano_ctx_writer_free(piano_ctx_writer *w);

/* Starts a blob (w's buffer kept from a previous one); flags PIANO_CTX_*. */
void piano_ctx_begin(piano_ctx_writer *w, int flags);
/* Appends a context: v[m] for each CTX metric m (PIANO_M_*; int64, >= 0),
 * parent < 0 at a root. Ids ascend. */
void piano_ctx_put(piano_ctx_writer *w, int64_t id, int64_t parent, int64_t fn, const int64_t v[PIANO_M_N]);
/* Whether it holds a context. */
static inline int piano_ctx_any(const piano_ctx_writer *w) { return w->len > 1; }

/* A context read back: null[m] when metric m is NULL (not measured). */
typedef struct {
    int64_t id, parent, fn;   /* parent < 0: a root */
    int64_t v[PIANO_M_N];
    unsigned char null[PIANO_M_N];
} piano_ctx_row;

typedef struct {
    const unsigned char *b;
    size_t len, at;
    int flags, nf, v2;
    int64_t id, fn;
    piano_ctx_tree tree;   /* (v2) */
} piano_ctx_reader;

/* Starts reading blob b; r zeroed before its first blob (its arrays are kept
 * for the next: piano_ctx_close frees them).
 * Returns 0, or -1 when it has no header. */
int piano_ctx_open(piano_ctx_reader *r, const void *b, size_t len);
/* Frees what a reader allocated. */
void piano_ctx_close(piano_ctx_reader *r);
/* The next context: 1, 0 at the end, -1 when the blob is malformed there. */
int piano_ctx_next(piano_ctx_reader *r, piano_ctx_row *row);

/* Registers the table-valued function piano_contexts(nodes) on db (its
 * columns: id, parent, fn and the CTX metrics) and makes the TEMP view
 * contexts over it and context_rows, which piano-db's statements read (the
 * table of schema 16, same columns; since schema 19 the database stores no
 * view of its own). Returns SQLITE_OK or an error. */
int piano_contexts_register(sqlite3 *db);

/* Makes the TEMP view contexts (piano_contexts_register) take inserts,
 * updates and deletes (`piano-db sql`): INSTEAD OF triggers, inserted rows
 * going to context_rows; an update or delete of a context in a blob moves its
 * thread's tree to context_rows first. Returns SQLITE_OK or an error. */
int piano_contexts_make_triggers(sqlite3 *db);

/* Moves the rows of context_rows (older schemas' contexts) into blobs, each
 * thread's whose rows a blob can hold as they are (whole numbers >= 0, a
 * parent before its child, the CPU and heap figures NULL in all its rows or
 * in none); the others stay rows. Returns SQLITE_OK or an error. */
int piano_contexts_pack(sqlite3 *db);

#endif
