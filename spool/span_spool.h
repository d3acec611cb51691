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
#define PIANO_SPAN_REC_SIZE ((sizeof(struct piano_spool_span) + 4095) & ~(size_t)4095)
#define PIANO_SPANS_FILE_SIZE ((uint64_t)PIANO_SPAN_CAP * PIANO_SPAN_REC_SIZE)

#endif
