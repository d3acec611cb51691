/* hist.c - decoding, encoding and quantiles of piano's log-linear histograms (see hist.h). */
#include "hist.h"
#include <math.h>
#include <string.h>

uint64_t piano_hist_value(unsigned b)
{
    if (b < PIANO_HIST_SUB)
        return b;
    /* octave: floor(log2) of the bucket's values */
    unsigned o = (b >> PIANO_HIST_SUB_BITS) + PIANO_HIST_SUB_BITS - 1;
    uint64_t width = 1ull << (o - PIANO_HIST_SUB_BITS);
    uint64_t lo = (uint64_t)(PIANO_HIST_SUB + (b & PIANO_HIST_SUB_MASK)) << (o - PIANO_HIST_SUB_BITS);
    return lo + width / 2;
}

/* The fixed records of schemas before 14: { uint16 bucket; uint64 count; } little-endian. */
static int add_fixed(piano_hist *h, const unsigned char *p, size_t len, unsigned *lo, unsigned *hi)
{
    for (size_t i = 0; i < len; i += PIANO_HIST_RECORD) {
        unsigned b = (unsigned)p[i] | (unsigned)p[i + 1] << 8;
        uint64_t c = 0;
        for (int k = 7; k >= 0; k--)
            c = c << 8 | p[i + 2 + k];
        if (b >= PIANO_HIST_BUCKETS)
            return -1;
        h->count[b] += c;
        h->total += c;
        if (b < *lo)
            *lo = b;
        if (b > *hi)
            *hi = b;
    }
    return 0;
}

/* An unsigned LEB128 varint at p[*at], below len: 0, or -1 if it is cut or longer than 64 bits. */
static int varint(const unsigned char *p, size_t len, size_t *at, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; *at < len && shift < 64; shift += 7) {
        unsigned char byte = p[(*at)++];
        if (shift == 63 && byte > 1)
            return -1;
        x |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int piano_hist_add_blob_range(piano_hist *h, const void *blob, size_t len, unsigned *lo, unsigned *hi)
{
    const unsigned char *p = blob;
    if (len % PIANO_HIST_RECORD == 0)
        return add_fixed(h, p, len, lo, hi);
    uint64_t next = 0;   /* the previous bucket + 1 */
    for (size_t at = 0; at < len;) {
        if (p[at] == 0 && at + 1 == len)
            break;   /* the end mark of a length that would be a multiple of 10 */
        uint64_t d, c;
        if (varint(p, len, &at, &d) || varint(p, len, &at, &c) || d == 0 || d > PIANO_HIST_BUCKETS - next)
            return -1;
        unsigned b = (unsigned)(next + d - 1);
        next = b + 1;
        h->count[b] += c;
        h->total += c;
        if (b < *lo)
            *lo = b;
        if (b > *hi)
            *hi = b;
    }
    return 0;
}

int piano_hist_add_blob(piano_hist *h, const void *blob, size_t len)
{
    unsigned lo = PIANO_HIST_BUCKETS, hi = 0;
    return piano_hist_add_blob_range(h, blob, len, &lo, &hi);
}

void piano_hist_put(piano_hist_writer *w, const uint64_t *counts, unsigned first_bucket, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (counts[i])
            piano_hist_put_one(w, first_bucket + i, counts[i]);
}

size_t piano_hist_end(piano_hist_writer *w)
{
    if (w->len && w->len % PIANO_HIST_RECORD == 0)
        w->out[w->len++] = 0;
    return w->len;
}

size_t piano_hist_encode(const uint64_t *counts, unsigned first_bucket, unsigned n,
                         unsigned char *out)
{
    piano_hist_writer w;
    piano_hist_begin(&w, out);
    piano_hist_put(&w, counts, first_bucket, n);
    return piano_hist_end(&w);
}

uint64_t piano_hist_quantile(const piano_hist *h, double q)
{
    if (!h->total)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->total);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < PIANO_HIST_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank)
            return piano_hist_value(b);
    }
    return piano_hist_value(PIANO_HIST_BUCKETS - 1);
}

double piano_frame_spike_ns(const piano_hist *h, double ns_per_tick)
{
    if (!h->total)
        return HUGE_VAL;
    return 2.0 * (double)piano_hist_quantile(h, 0.5) * ns_per_tick;
}
