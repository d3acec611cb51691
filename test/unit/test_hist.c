/* test_hist.c - the log-linear histograms: bucket bounds, the 1% error bound
 * on quantiles, blob round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "spool.h"
#include <sys/mman.h>

/* Every value maps into a bucket whose reported value is within 1/128 of it. */
static void bucket_value_within_one_percent(void **state)
{
    (void)state;
    uint64_t v = 1;
    for (int i = 0; i < 200000; i++) {
        unsigned b = piano_hist_bucket(v);
        assert_true(b < PIANO_HIST_BUCKETS);
        double rep = (double)piano_hist_value(b);
        assert_true(fabs(rep - (double)v) <= (double)v / 128.0 + 0.5);
        v += 1 + v / 1000;
    }
    assert_int_equal(piano_hist_bucket(0), 0);
    assert_int_equal(piano_hist_bucket(63), 63);
    assert_int_equal(piano_hist_bucket(64), 64);
    assert_true(piano_hist_bucket(UINT64_MAX) < PIANO_HIST_BUCKETS);
}

/* Buckets are monotone in the value. */
static void buckets_are_monotone(void **state)
{
    (void)state;
    unsigned last = 0;
    for (uint64_t v = 0; v < 1u << 20; v++) {
        unsigned b = piano_hist_bucket(v);
        assert_true(b >= last);
        last = b;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* p50 and p99 from the histogram are within 1% of the exact nearest-rank
 * quantiles, for a skewed distribution spanning six decades. */
static void quantiles_within_one_percent(void **state)
{
    (void)state;
    enum { N = 100000 };
    uint64_t *v = malloc(N * sizeof *v);
    piano_hist *h = calloc(1, sizeof *h);
    srand(42);
    for (int i = 0; i < N; i++) {
        double u = (rand() + 1.0) / ((double)RAND_MAX + 2.0);
        v[i] = (uint64_t)(20.0 * exp(14.0 * u * u));   /* 20 .. ~24 million */
        h->count[piano_hist_bucket(v[i])]++;
        h->total++;
    }
    qsort(v, N, sizeof *v, cmp_u64);
    double qs[] = { 0.5, 0.9, 0.99, 0.999 };
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        uint64_t exact = v[(size_t)ceil(qs[k] * N) - 1];
        uint64_t est = piano_hist_quantile(h, qs[k]);
        assert_true(fabs((double)est - (double)exact) <= 0.01 * (double)exact);
    }
    free(v);
    free(h);
}

/* Encoding then decoding a histogram gives it back; malformed blobs are refused. */
static void blob_round_trip(void **state)
{
    (void)state;
    uint64_t counts[128] = { 0 };
    counts[0] = 5;
    counts[70] = 1ull << 40;
    counts[127] = 3;
    unsigned char blob[PIANO_HIST_BLOB_MAX];
    size_t len = piano_hist_encode(counts, 640, 128, blob);
    /* v2: its mark 0; 641 << 2 = 0x84 0x14, then 5; 70 << 2 = 0x98 0x02, then 2^40 in 6 bytes;
     * 57 << 2 | 3 = 0xe7 0x01 */
    static const unsigned char want[] = { 0x00, 0x84, 0x14, 0x05, 0x98, 0x02, 0x80, 0x80,
                                          0x80, 0x80, 0x80, 0x20, 0xe7, 0x01 };
    assert_int_equal(len, sizeof want);
    assert_memory_equal(blob, want, sizeof want);
    piano_hist *h = calloc(1, sizeof *h);
    unsigned lo = PIANO_HIST_BUCKETS, hi = 0;
    assert_int_equal(piano_hist_add_blob_range(h, blob, len, &lo, &hi), 0);
    assert_int_equal(lo, 640);
    assert_int_equal(hi, 767);
    assert_int_equal(h->count[640], 5);
    assert_int_equal(h->count[710], 1ull << 40);
    assert_int_equal(h->count[767], 3);
    assert_int_equal(h->total, 8 + (1ull << 40));
    assert_int_equal(piano_hist_add_blob(h, blob, len - 1), -1);   /* a bucket cut */
    assert_int_equal(piano_hist_add_blob(h, blob, 11), -1);        /* a bucket without its count */
    /* the same histogram in the compact v1 format of schemas 16-19 reads the same */
    static const unsigned char v1[] = { 0x81, 0x05, 0x05, 70, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 57, 3 };
    piano_hist *h1 = calloc(1, sizeof *h1);
    assert_int_equal(piano_hist_add_blob(h1, v1, sizeof v1), 0);
    assert_int_equal(h1->total, 8 + (1ull << 40));
    memset(h, 0, sizeof *h);
    assert_int_equal(piano_hist_add_blob(h, blob, len), 0);
    assert_memory_equal(h, h1, sizeof *h);
    free(h1);
    unsigned char bad[] = { 0x00, 0x01, 0x01 };                    /* a distance of 0 */
    assert_int_equal(piano_hist_add_blob(h, bad, sizeof bad), -1);
    unsigned char past[] = { 0xc1, 0x1d, 0x01 };                   /* bucket 3776: past the last */
    assert_int_equal(piano_hist_add_blob(h, past, sizeof past), -1);
    unsigned char longer[] = { 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };   /* 2^64 */
    assert_int_equal(piano_hist_add_blob(h, longer, sizeof longer), -1);
    free(h);
}

/* A blob whose length is a multiple of 10 gets an end mark (0), so it is not taken
 * for the fixed records of schema 15 and before; and those are still read. */
static void blob_formats(void **state)
{
    (void)state;
    uint64_t counts[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };   /* its mark and nine buckets of 1 byte: 10 */
    unsigned char blob[PIANO_HIST_BLOB_MAX];
    size_t len = piano_hist_encode(counts, 0, 9, blob);
    assert_int_equal(len, 11);
    assert_int_equal(blob[0], 0);
    assert_int_equal(blob[1], 1 << 2 | 1);
    assert_int_equal(blob[10], 0);
    piano_hist *h = calloc(1, sizeof *h);
    assert_int_equal(piano_hist_add_blob(h, blob, len), 0);
    assert_int_equal(h->total, 9);
    assert_int_equal(h->count[8], 1);
    /* v1 with its end mark: five records of 2 bytes, then 0 */
    static const unsigned char v1[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
    memset(h, 0, sizeof *h);
    assert_int_equal(piano_hist_add_blob(h, v1, sizeof v1), 0);
    assert_int_equal(h->total, 5);
    assert_int_equal(h->count[4], 1);
    /* fixed records: bucket 700 x 3, bucket 5 x 2^33 */
    unsigned char fixed[2 * PIANO_HIST_RECORD] = { 0xbc, 0x02, 3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 2 };
    memset(h, 0, sizeof *h);
    unsigned lo = PIANO_HIST_BUCKETS, hi = 0;
    assert_int_equal(piano_hist_add_blob_range(h, fixed, sizeof fixed, &lo, &hi), 0);
    assert_int_equal(h->count[700], 3);
    assert_int_equal(h->count[5], 1ull << 33);
    assert_int_equal(lo, 5);
    assert_int_equal(hi, 700);
    unsigned char bad[PIANO_HIST_RECORD] = { 0xff, 0xff };
    assert_int_equal(piano_hist_add_blob(h, bad, sizeof bad), -1);
    assert_int_equal(piano_hist_encode(counts, 0, 0, blob), 0);   /* empty: empty */
    free(h);
}

/* A thread's histogram counters are 32 bits (spool.h piano_hist_inc): a
 * bucket driven past 2^32 carries into its word of the carry, read back by
 * piano_hist_word (the import's and the frame budget's reader) as 64 bits. */
static void counter_carries_past_32_bits(void **state)
{
    (void)state;
    size_t len = PIANO_OFF_HASH;   /* header, ..., pages, carry: untouched parts cost nothing */
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert_true(m != MAP_FAILED);
    struct piano_thread *ts = m;
    uint32_t *lo = (uint32_t *)(void *)((char *)m + PIANO_OFF_PAGES);
    size_t word = (size_t)(PIANO_PAGE_CAP - 1) * PIANO_PAGE_WORDS + 7;   /* the last page: the carry's far end */
    lo[word] = UINT32_MAX - 1;
    piano_hist_inc(ts, word);
    assert_int_equal(ts->hist_carried, 0);
    assert_true(piano_hist_word(m, 0, word) == UINT32_MAX);
    piano_hist_inc(ts, word);   /* 2^32: wraps */
    assert_int_equal(lo[word], 0);
    assert_int_equal(ts->hist_carried, 1);
    assert_true(piano_hist_word(m, 1, word) == 1ull << 32);
    piano_hist_inc(ts, word);
    assert_true(piano_hist_word(m, 1, word) == (1ull << 32) + 1);
    lo[word] = UINT32_MAX;   /* 2^33 - 1, then the second wrap */
    assert_true(piano_hist_word(m, 1, word) == (1ull << 33) - 1);
    piano_hist_inc(ts, word);
    assert_true(piano_hist_word(m, 1, word) == 1ull << 33);
    /* Its neighbours are untouched. */
    assert_true(piano_hist_word(m, 1, word - 1) == 0 && piano_hist_word(m, 1, word + 1) == 0);
    munmap(m, len);
}

/* Compact v2 (schema 20): a count of 1-3 shares its bucket's varint, 0 is not
 * written, 4 and above follow it; counts past 2^32 and up to 2^64 - 1, the
 * first bucket (distance 1 from -1) and the last, gaps across the whole
 * range. Each histogram reads back the same, through piano_hist_items and
 * piano_hist_wrap too (a stats blob's form), and from v1 and fixed blobs. */
static void v2_edges(void **state)
{
    (void)state;
    static uint64_t counts[PIANO_HIST_BUCKETS];
    static unsigned char blob[PIANO_HIST_BLOB_MAX], items[2 * PIANO_HIST_BLOB_MAX + 16], again[PIANO_HIST_BLOB_MAX];
    piano_hist *h = calloc(1, sizeof *h);
    struct {
        unsigned b;
        uint64_t c;
        size_t bytes;   /* its bytes in the blob */
    } cases[] = {
        { 0, 1, 1 }, { 1, 2, 1 }, { 2, 3, 1 }, { 3, 4, 2 }, { 4, 0, 0 }, { 5, 127, 2 }, { 6, 128, 3 },
        { 37, 1, 1 },                                    /* distance 31: 124 | 1, one byte */
        { 70, 3, 2 },                                    /* distance 33: two bytes */
        { 100, (1ull << 32) + 5, 1 + 5 },                /* past 32 bits */
        { 200, UINT64_MAX, 2 + 10 },                     /* distance 100: two bytes, then 10 */
        { PIANO_HIST_BUCKETS - 1, 2, 2 },                /* the last bucket, a long gap */
    };
    size_t n_cases = sizeof cases / sizeof *cases, want = 1;
    for (size_t i = 0; i < n_cases; i++) {
        counts[cases[i].b] = cases[i].c;
        want += cases[i].bytes;
    }
    size_t len = piano_hist_encode(counts, 0, PIANO_HIST_BUCKETS, blob);
    assert_int_equal(len, want + (want % PIANO_HIST_RECORD == 0));
    assert_int_equal(blob[0], 0);
    assert_int_equal(blob[1], 1 << 2 | 1);        /* bucket 0 x 1 */
    assert_int_equal(blob[2], 1 << 2 | 2);        /* bucket 1 x 2 */
    assert_int_equal(blob[3], 1 << 2 | 3);        /* bucket 2 x 3 */
    assert_int_equal(blob[4], 1 << 2);            /* bucket 3, then its count 4 */
    assert_int_equal(blob[5], 4);
    assert_int_equal(blob[6], 2 << 2);            /* bucket 5 (4 has none), then 127 */
    assert_int_equal(blob[7], 127);
    unsigned lo = PIANO_HIST_BUCKETS, hi = 0;
    assert_int_equal(piano_hist_add_blob_range(h, blob, len, &lo, &hi), 0);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, PIANO_HIST_BUCKETS - 1);
    assert_memory_equal(h->count, counts, sizeof counts);
    /* its buckets alone, and whole again */
    size_t n = piano_hist_items(blob, len, items);
    assert_int_equal(n, want - 1);
    assert_memory_equal(items, blob + 1, n);
    assert_int_equal(piano_hist_wrap(items, n, again), len);
    assert_memory_equal(again, blob, len);
    /* the same buckets from a v1 blob and from fixed records: the same v2 buckets */
    size_t v1_len = 0, fx_len = 0;
    static unsigned char v1[PIANO_HIST_BLOB_MAX], fx[PIANO_HIST_BUCKETS * PIANO_HIST_RECORD];
    unsigned next = 0;
    for (unsigned b = 0; b < PIANO_HIST_BUCKETS; b++) {
        if (!counts[b])
            continue;
        for (uint64_t v = b + 1 - next;; v >>= 7) {
            v1[v1_len++] = (unsigned char)(v | (v >= 0x80 ? 0x80 : 0));
            if (v < 0x80)
                break;
        }
        uint64_t c = counts[b];
        for (; c >= 0x80; c >>= 7)
            v1[v1_len++] = (unsigned char)(c | 0x80);
        v1[v1_len++] = (unsigned char)c;
        next = b + 1;
        fx[fx_len] = (unsigned char)b, fx[fx_len + 1] = (unsigned char)(b >> 8);
        for (int k = 0; k < 8; k++)
            fx[fx_len + 2 + k] = (unsigned char)(counts[b] >> (8 * k));
        fx_len += PIANO_HIST_RECORD;
    }
    if (v1_len % PIANO_HIST_RECORD == 0)
        v1[v1_len++] = 0;
    assert_int_equal(piano_hist_items(v1, v1_len, again), n);
    assert_memory_equal(again, items, n);
    assert_int_equal(piano_hist_items(fx, fx_len, again), n);
    assert_memory_equal(again, items, n);
    memset(h, 0, sizeof *h);
    assert_int_equal(piano_hist_add_blob(h, v1, v1_len), 0);
    assert_memory_equal(h->count, counts, sizeof counts);
    /* fixed records out of order have no v2 buckets; malformed blobs none either */
    static const unsigned char unordered[2 * PIANO_HIST_RECORD] = { 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1 };
    assert_int_equal(piano_hist_items(unordered, sizeof unordered, again), (size_t)-1);
    assert_int_equal(piano_hist_items(blob, len - 1, again), (size_t)-1);
    /* an empty histogram: the empty blob, no buckets */
    assert_int_equal(piano_hist_encode(counts, 0, 0, blob), 0);
    assert_int_equal(piano_hist_items(blob, 0, again), 0);
    assert_int_equal(piano_hist_wrap(items, 0, again), 0);
    /* malformed v2 */
    static const unsigned char zero_gap[] = { 0x00, 0x00, 0x05 };             /* distance 0, count 5 */
    static const unsigned char no_count[] = { 0x00, 0x04 };                    /* count 4+ missing */
    static const unsigned char past[] = { 0x00, 0x85, 0x76 };                  /* bucket 3776 */
    static const unsigned char huge[] = { 0x00, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0x02 };      /* a count of 2^64 */
    static const unsigned char cut[] = { 0x00, 0x84 };                         /* a varint cut */
    assert_int_equal(piano_hist_add_blob(h, zero_gap, sizeof zero_gap), -1);
    assert_int_equal(piano_hist_add_blob(h, no_count, sizeof no_count), -1);
    assert_int_equal(piano_hist_add_blob(h, past, sizeof past), -1);
    assert_int_equal(piano_hist_add_blob(h, huge, sizeof huge), -1);
    assert_int_equal(piano_hist_add_blob(h, cut, sizeof cut), -1);
    /* the last bucket alone: 3776 << 2 | 1 in two bytes */
    static const unsigned char last[] = { 0x00, 0x81, 0x76 };
    memset(h, 0, sizeof *h);
    assert_int_equal(piano_hist_add_blob(h, last, sizeof last), 0);
    assert_int_equal(h->count[PIANO_HIST_BUCKETS - 1], 1);
    free(h);
}

static void empty_histogram_quantile_is_zero(void **state)
{
    (void)state;
    piano_hist *h = calloc(1, sizeof *h);
    assert_int_equal(piano_hist_quantile(h, 0.5), 0);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bucket_value_within_one_percent),
        cmocka_unit_test(buckets_are_monotone),
        cmocka_unit_test(blob_formats),
        cmocka_unit_test(quantiles_within_one_percent),
        cmocka_unit_test(blob_round_trip),
        cmocka_unit_test(v2_edges),
        cmocka_unit_test(empty_histogram_quantile_is_zero),
        cmocka_unit_test(counter_carries_past_32_bits),
    };
    return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
