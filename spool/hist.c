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

int piano_hist_add_blob(piano_hist *h, const void *blob, size_t len)
{
    const unsigned char *p = blob;
    if (len % PIANO_HIST_RECORD)
        return -1;
    for (size_t i = 0; i < len; i += PIANO_HIST_RECORD) {
        unsigned b = (unsigned)p[i] | (unsigned)p[i + 1] << 8;
        uint64_t c = 0;
        for (int k = 7; k >= 0; k--)
            c = c << 8 | p[i + 2 + k];
        if (b >= PIANO_HIST_BUCKETS)
            return -1;
        h->count[b] += c;
        h->total += c;
    }
    return 0;
}

size_t piano_hist_encode(const uint64_t *counts, unsigned first_bucket, unsigned n,
                         unsigned char *out)
{
    size_t len = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t c = counts[i];
        if (!c)
            continue;
        unsigned b = first_bucket + i;
        out[len++] = (unsigned char)(b & 0xff);
        out[len++] = (unsigned char)(b >> 8);
        for (int k = 0; k < 8; k++)
            out[len++] = (unsigned char)(c >> (8 * k));
    }
    return len;
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
