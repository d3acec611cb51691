/*
 * hist.h - log-linear histograms of per-call times (in clock ticks).
 *
 * Values below 64 have a bucket each; above, each power of two is split in 64
 * equal buckets, so a bucket's midpoint is within 1/128 (0.8%) of any value in
 * it: p50/p99 read from these histograms are within 1% of the exact figures.
 * 59 octaves x 64 buckets cover every uint64_t value; bucket numbers fit in 16 bits.
 * The runtime keeps each octave as a lazily allocated page of 64 counters:
 * bucket b is counter b & PIANO_HIST_SUB_MASK of page b >> PIANO_HIST_SUB_BITS.
 */
#ifndef PIANO_HIST_H
#define PIANO_HIST_H
#include <stddef.h>
#include <stdint.h>

#define PIANO_HIST_SUB_BITS 6
#define PIANO_HIST_SUB (1 << PIANO_HIST_SUB_BITS)   /* buckets per octave page: 64 */
#define PIANO_HIST_SUB_MASK (PIANO_HIST_SUB - 1)    /* a bucket's place in its page */
/* Octave pages that cover uint64_t (59): page 0 holds the values below 64, page
 * k >= 1 the octave [2^(k+5), 2^(k+6)), up to the top bit, 63. */
#define PIANO_HIST_PAGES (64 - PIANO_HIST_SUB_BITS + 1)
#define PIANO_HIST_BUCKETS (PIANO_HIST_PAGES * PIANO_HIST_SUB)
/* A histogram blob (stats.hist_self/hist_total, runs/threads.frame_hist, spans.hist_*) lists
 * the non-zero buckets, ascending. Three formats, told apart by the blob alone:
 * - compact v2 (schema 20 on, written now): a 0 byte, then per bucket, with d its distance
 *   from the previous bucket (the first's from -1, so always >= 1) and c its count, one
 *   unsigned LEB128 varint d << 2 | c when c is 1-3, else the varint d << 2 then the varint
 *   c. The usual bucket is 1 byte (a distance under 32, a count of 1-3: 56% of a short run's
 *   buckets have count 1).
 * - compact v1 (schemas 16-19): per bucket the varints d and c; its first byte is never 0.
 * - fixed (schema 15 and before): records { uint16 bucket; uint64 count; } little-endian;
 *   their length is a multiple of 10.
 * A compact blob whose length would be a multiple of 10 ends with one more 0 byte (no bucket
 * starts with a 0 byte). An empty histogram is an empty blob (0 fixed records).
 * Inside a stats blob (store/stats_blob.h) a v2 histogram is kept as its buckets alone,
 * without the leading 0 and the end mark (piano_hist_items, piano_hist_wrap). */
#define PIANO_HIST_RECORD 10               /* bytes per record of the fixed (old) format */
#define PIANO_HIST_BLOB_MAX (PIANO_HIST_BUCKETS * 12 + 2)   /* the longest compact blob */

/* Bucket of value v: with o = floor(log2(v | 64)), i.e. at least 6, the top
 * seven bits of v are m = v >> (o - 6), and b = 64 * (o - 6) + m. Values
 * below 128 land in bucket v; each octave above has 64 buckets. No branches. */
static inline unsigned piano_hist_bucket(uint64_t v)
{
    unsigned o = 63u ^ (unsigned)__builtin_clzll(v | PIANO_HIST_SUB);   /* 63 - clz: one bsr */
    return (o << PIANO_HIST_SUB_BITS) + (unsigned)(v >> (o - PIANO_HIST_SUB_BITS)) -
           PIANO_HIST_SUB_BITS * PIANO_HIST_SUB;
}

/* Midpoint of bucket b: the value reported for any sample in it. */
uint64_t piano_hist_value(unsigned b);

/* A decoded histogram: dense counts over all buckets (caller allocates and zeroes). */
typedef struct {
    uint64_t count[PIANO_HIST_BUCKETS];
    uint64_t total;
} piano_hist;

/* Add a blob (as stored in stats.hist_*, either format) into h. Returns 0, or -1 if the
 * blob is malformed. */
int piano_hist_add_blob(piano_hist *h, const void *blob, size_t len);

/* Likewise, and widens [*lo, *hi] to the blob's lowest and highest bucket (when it has any). */
int piano_hist_add_blob_range(piano_hist *h, const void *blob, size_t len, unsigned *lo, unsigned *hi);

/* A blob written in pieces: piano_hist_begin, then piano_hist_put with runs of counts in
 * ascending bucket order (e.g. the runtime's octave pages of 64), then piano_hist_end. */
typedef struct {
    unsigned char *out;   /* holds PIANO_HIST_BLOB_MAX bytes */
    size_t len;
    unsigned next;        /* the bucket a distance is counted from, plus 1 */
} piano_hist_writer;

static inline void piano_hist_begin(piano_hist_writer *w, unsigned char *out)
{
    w->out = out;
    out[0] = 0;   /* compact v2 */
    w->len = 1;
    w->next = 0;
}

/* Adds count c (not 0) of bucket b, above the buckets put so far (compact v2). */
static inline void piano_hist_put_one(piano_hist_writer *w, unsigned b, uint64_t c)
{
    unsigned char *o = w->out + w->len;
    size_t n = 0;
    uint64_t v = (uint64_t)(b + 1 - w->next) << 2;   /* the distance and a count of 1-3 in one varint */
    if (c <= 3)
        v |= c;
    for (; v >= 0x80; v >>= 7)
        o[n++] = (unsigned char)(v | 0x80);
    o[n++] = (unsigned char)v;
    if (c > 3) {   /* else the count on its own */
        for (; c >= 0x80; c >>= 7)
            o[n++] = (unsigned char)(c | 0x80);
        o[n++] = (unsigned char)c;
    }
    w->len += n;
    w->next = b + 1;
}

/* Adds the non-zero counts of buckets first_bucket .. first_bucket + n - 1. */
void piano_hist_put(piano_hist_writer *w, const uint64_t *counts, unsigned first_bucket, unsigned n);

/* Ends the blob; returns its length (0 when no bucket was put). */
size_t piano_hist_end(piano_hist_writer *w);

/* The buckets of a blob one at a time, whatever its format. */
typedef struct {
    const unsigned char *p;
    size_t len, at;
    int fmt;         /* 0 fixed, 1 compact v1, 2 compact v2 */
    uint64_t next;   /* the previous bucket + 1 */
} piano_hist_iter;

void piano_hist_iter_open(piano_hist_iter *it, const void *blob, size_t len);
/* The next bucket b (< PIANO_HIST_BUCKETS, ascending in compact blobs) and its count c:
 * returns 1, 0 at the end, -1 when the blob is malformed there. */
int piano_hist_iter_next(piano_hist_iter *it, unsigned *b, uint64_t *c);

/* The buckets of blob (any format) as compact v2 buckets alone (no leading 0, no end mark)
 * into out, which holds 2 * len + 16 bytes. Returns their length, or (size_t)-1 when the
 * blob is malformed or its buckets do not ascend (fixed records may not). */
size_t piano_hist_items(const void *blob, size_t len, unsigned char *out);

/* The buckets of a compact v2 blob (its leading 0 and end mark left out) in place: returns
 * them and their length in *n, or NULL when the blob is of another format. Not checked (as the
 * import's own blobs need not be): the bytes between are taken as they are. */
static inline const unsigned char *piano_hist_v2_items(const void *blob, size_t len, size_t *n)
{
    const unsigned char *p = (const unsigned char *)blob;
    if (len % PIANO_HIST_RECORD == 0 || p[0] != 0)
        return NULL;
    /* an end mark makes the length 1 past a multiple of 10; no bucket's varint ends in 0 */
    *n = len - 1 - (len % PIANO_HIST_RECORD == 1 && len > 1 && p[len - 1] == 0);
    return p + 1;
}

/* The compact v2 blob of buckets items[0 .. n - 1] (as piano_hist_items makes them) into
 * out, which holds n + 2 bytes. Returns its length: 0 when n is 0. */
size_t piano_hist_wrap(const void *items, size_t n, unsigned char *out);

/* The blob of counts[0 .. n - 1] (buckets first_bucket ..) into out, which holds
 * PIANO_HIST_BLOB_MAX bytes. Returns the blob's length. */
size_t piano_hist_encode(const uint64_t *counts, unsigned first_bucket, unsigned n,
                         unsigned char *out);

/* Value (in ticks) at quantile q in [0,1] by nearest rank; 0 for an empty histogram. */
uint64_t piano_hist_quantile(const piano_hist *h, double q);

/* The spike threshold of a run's (or a thread's) frames in ns, from their
 * histogram h (ticks) and the run's ns_per_tick: a frame whose total_ns is
 * above it (as a double) is a spike. 2x the median; no spikes without frames.
 * The import marks frames.spike with it and piano-db recomputes it alike. */
double piano_frame_spike_ns(const piano_hist *h, double ns_per_tick);

#endif
