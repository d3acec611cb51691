/*
 * span_spool.h - the spans file of a run's spool folder (spool.h), written
 * by rt/span.c and read by store/import_spans.c.
 *
 *   <db>.spool/<run key>/spans   PIANO_SPAN_CAP records of PIANO_SPAN_REC_SIZE bytes,
 *                                record i: span name i (a sparse file: made at the
 *                                run's first span, a record's pages at its name's first close)
 *
 * A record holds a span name's lifetime figures: the spans of that name
 * closed so far (and at exit those still open, counted as unfinished), their
 * wall (open to close), busy (entered) ticks, and two log-linear histograms
 * (hist.h) of wall and busy ticks per span. The thread that closes a span
 * adds to its record with atomic adds: no lock. What ran while a span was
 * entered (calls, CPU, allocations) is in the threads' calling contexts,
 * under the span's function id (fn), whose fns record has the file
 * PIANO_SPAN_FILE.
 */
#ifndef PIANO_SPAN_SPOOL_H
#define PIANO_SPAN_SPOOL_H
#include "hist.h"
#include <stdint.h>

#define PIANO_SPOOL_SPANS "spans"
#define PIANO_SPAN_MAGIC 0x6e617073u     /* "span": the record's name is written */
#define PIANO_SPAN_CAP 1024u             /* span names (with their fields) per run; later ones share the last */
#define PIANO_SPAN_NAME_MAX 224          /* bytes of a name with its fields, its NUL included */
#define PIANO_SPAN_FILE "<span>"         /* the file of a span's function record */

struct piano_spool_span {
    uint32_t magic;          /* PIANO_SPAN_MAGIC once name and fn are written */
    uint32_t fn;             /* the span's function id (its frame in the contexts) */
    uint32_t name_len, pad;
    char name[PIANO_SPAN_NAME_MAX];
    uint64_t count;          /* spans closed, and at exit those still open */
    uint64_t unfinished;     /* of them, still open at exit (timed to the end) */
    uint64_t wall, busy;     /* ticks, summed */
    uint64_t enters;         /* times entered */
    uint64_t reserved[3];
    uint64_t hist_wall[PIANO_HIST_BUCKETS];
    uint64_t hist_busy[PIANO_HIST_BUCKETS];
};
/* The one list of a span name's lifetime figures that are counters of its
 * record, kept per snapshot (PIANO_INTERVAL) so that a window has them:
 *   X(field, column, unit, comment)
 *   field   the counter of struct piano_spool_span (ticks when unit is NS)
 *   column  its column of the tables spans and span_snapshots, its JSON key
 *   unit    COUNT or NS
 * The snapshot thread (rt/snap.c) reads them, the snaps record carries their
 * growth, the import (store/import_snaps.c) stores them per snapshot, and
 * piano-db's window (tools/db/spans.c) subtracts them: all from this list.
 * A new one goes at the end (the snaps record changes: PIANO_SPOOL_VERSION). */
#define PIANO_SPAN_FIGURES(X)                                                        \
    X(count, count, COUNT, "spans closed and those open at the end")                 \
    X(unfinished, unfinished, COUNT, "of them open at the end (timed to it)")        \
    X(wall, wall_ns, NS, "open to close (summed)")                                   \
    X(busy, busy_ns, NS, "entered: idle is wall_ns - busy_ns")

enum {
#define PIANO_SPAN_F_ENUM(field, ...) PIANO_SPAN_F_##field,
    PIANO_SPAN_FIGURES(PIANO_SPAN_F_ENUM)
#undef PIANO_SPAN_F_ENUM
    PIANO_SPAN_F_N
};

/* Schema text of the list's columns: "  count INTEGER NOT NULL, -- comment\n". */
#define PIANO_SPAN_F_COLUMN(field, column, unit, comment) "  " #column " INTEGER NOT NULL, -- " comment "\n"
#define PIANO_SPAN_FIGURE_COLUMNS PIANO_SPAN_FIGURES(PIANO_SPAN_F_COLUMN)
/* ",count,unfinished,wall_ns,busy_ns" */
#define PIANO_SPAN_F_CNAME(field, column, unit, comment) "," #column
#define PIANO_SPAN_FIGURE_COLS PIANO_SPAN_FIGURES(PIANO_SPAN_F_CNAME)

/* Figure f's column name and whether it is a time (ticks in the spool, ns stored). */
static inline const char *piano_span_figure_column(int f)
{
#define PIANO_SPAN_F_NAME(field, column, unit, comment) #column,
    static const char *const names[] = {PIANO_SPAN_FIGURES(PIANO_SPAN_F_NAME)};
#undef PIANO_SPAN_F_NAME
    return names[f];
}
#define PIANO_SPAN_UNIT_IS_NS_COUNT 0
#define PIANO_SPAN_UNIT_IS_NS_NS 1
static inline int piano_span_figure_is_ns(int f)
{
#define PIANO_SPAN_F_NS(field, column, unit, comment) PIANO_SPAN_UNIT_IS_NS_##unit,
    static const unsigned char ns[] = {PIANO_SPAN_FIGURES(PIANO_SPAN_F_NS)};
#undef PIANO_SPAN_F_NS
    return ns[f];
}

/* Whether record r's name was written and is whole (not damaged). */
static inline int piano_span_rec_named(const struct piano_spool_span *r)
{
    return __atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) == PIANO_SPAN_MAGIC && r->name_len != 0 &&
           r->name_len < PIANO_SPAN_NAME_MAX && !__builtin_memchr(r->name, 0, r->name_len);
}

/* Record r's figures of the list, each a word read once (a live run's grow
 * meanwhile), made consistent: unfinished <= count, busy <= wall. */
static inline void piano_span_figures_read(const struct piano_spool_span *r, uint64_t out[PIANO_SPAN_F_N])
{
#define PIANO_SPAN_F_READ(field, ...) out[PIANO_SPAN_F_##field] = __atomic_load_n(&r->field, __ATOMIC_RELAXED);
    PIANO_SPAN_FIGURES(PIANO_SPAN_F_READ)
#undef PIANO_SPAN_F_READ
    if (out[PIANO_SPAN_F_unfinished] > out[PIANO_SPAN_F_count])
        out[PIANO_SPAN_F_unfinished] = out[PIANO_SPAN_F_count];
    if (out[PIANO_SPAN_F_busy] > out[PIANO_SPAN_F_wall])
        out[PIANO_SPAN_F_busy] = out[PIANO_SPAN_F_wall];
}

#define PIANO_SPAN_REC_SIZE ((sizeof(struct piano_spool_span) + 4095) & ~(size_t)4095)
#define PIANO_SPANS_FILE_SIZE ((uint64_t)PIANO_SPAN_CAP * PIANO_SPAN_REC_SIZE)

#endif
