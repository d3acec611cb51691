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

void piano_hist_iter_open(piano_hist_iter *it, const void *blob, size_t len)
{
    it->p = blob;
    it->len = len;
    it->next = 0;
    if (len % PIANO_HIST_RECORD == 0) {
        it->fmt = 0;   /* the fixed records of schema 15 and before */
        it->at = 0;
    } else {
        it->fmt = it->p[0] == 0 ? 2 : 1;
        it->at = it->fmt == 2;
    }
}

int piano_hist_iter_next(piano_hist_iter *it, unsigned *bucket, uint64_t *count)
{
    const unsigned char *p = it->p;
    if (it->at >= it->len)
        return 0;
    if (it->fmt == 0) {
        size_t i = it->at;
        unsigned b = (unsigned)p[i] | (unsigned)p[i + 1] << 8;
        uint64_t c = 0;
        for (int k = 7; k >= 0; k--)
            c = c << 8 | p[i + 2 + k];
        if (b >= PIANO_HIST_BUCKETS)
            return -1;
        it->at += PIANO_HIST_RECORD;
        *bucket = b;
        *count = c;
        return 1;
    }
    if (p[it->at] == 0 && it->at + 1 == it->len) {
        it->at++;
        return 0;   /* the end mark of a length that would be a multiple of 10 */
    }
    uint64_t d, c;
    if (varint(p, it->len, &it->at, &d))
        return -1;
    if (it->fmt == 2) {
        c = d & 3;
        d >>= 2;
        if (!c && varint(p, it->len, &it->at, &c))
            return -1;
    } else if (varint(p, it->len, &it->at, &c)) {
        return -1;
    }
    if (d == 0 || d > PIANO_HIST_BUCKETS - it->next)
        return -1;
    unsigned b = (unsigned)(it->next + d - 1);
    it->next = b + 1;
    *bucket = b;
    *count = c;
    return 1;
}

int piano_hist_add_blob_range(piano_hist *h, const void *blob, size_t len, unsigned *lo, unsigned *hi)
{
    piano_hist_iter it;
    piano_hist_iter_open(&it, blob, len);
    unsigned b;
    uint64_t c;
    int rc;
    while ((rc = piano_hist_iter_next(&it, &b, &c)) == 1) {
        h->count[b] += c;
        h->total += c;
        if (b < *lo)
            *lo = b;
        if (b > *hi)
            *hi = b;
    }
    return rc;
}

int piano_hist_add_blob(piano_hist *h, const void *blob, size_t len)
{
    unsigned lo = PIANO_HIST_BUCKETS, hi = 0;
    return piano_hist_add_blob_range(h, blob, len, &lo, &hi);
}

size_t piano_hist_items(const void *blob, size_t len, unsigned char *out)
{
    const unsigned char *p = blob;
    if (len % PIANO_HIST_RECORD && p[0] == 0) {   /* v2: its buckets as they are, after checking them */
        piano_hist_iter it;
        piano_hist_iter_open(&it, blob, len);
        unsigned b;
        uint64_t c;
        size_t end;
        int rc;
        do
            end = it.at;   /* where the buckets end: at the end mark, or the blob's end */
        while ((rc = piano_hist_iter_next(&it, &b, &c)) == 1);
        if (rc)
            return (size_t)-1;
        size_t n = end - 1;
        memcpy(out, p + 1, n);
        return n;
    }
    piano_hist_iter it;
    piano_hist_iter_open(&it, blob, len);
    piano_hist_writer w = {out, 0, 0};
    unsigned b;
    uint64_t c;
    int rc;
    long last = -1;
    while ((rc = piano_hist_iter_next(&it, &b, &c)) == 1) {
        if ((long)b <= last)
            return (size_t)-1;
        last = b;
        if (c)
            piano_hist_put_one(&w, b, c);
    }
    return rc ? (size_t)-1 : w.len;
}

size_t piano_hist_wrap(const void *items, size_t n, unsigned char *out)
{
    if (!n)
        return 0;
    out[0] = 0;
    memcpy(out + 1, items, n);
    n++;
    if (n % PIANO_HIST_RECORD == 0)
        out[n++] = 0;
    return n;
}

void piano_hist_put(piano_hist_writer *w, const uint64_t *counts, unsigned first_bucket, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (counts[i])
            piano_hist_put_one(w, first_bucket + i, counts[i]);
}

size_t piano_hist_end(piano_hist_writer *w)
{
    if (w->len <= 1)
        return 0;   /* no bucket: the empty blob */
    if (w->len % PIANO_HIST_RECORD == 0)
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
