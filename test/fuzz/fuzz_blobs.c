/* fuzz_blobs.c - libFuzzer target: the blob decoders piano-db runs on every
 * stored row, fed directly.
 *
 * The first input byte chooses: even, a histogram blob (stats.hist_self /
 * hist_total: piano_hist_add_blob, then quantiles and the significance test
 * over the decoded buckets); 1 (mod 4), a frame's fns blob (frames.fns:
 * fns_decode of tools/db/query.c); 3 (mod 4), a thread's stats blob
 * (stat_trees.fns: store/stats_blob.h, any version; packed ones unpacked
 * first, as blob_table.c does: store/blob_pack.h), whose functions, when
 * it reads to its end, are written again and must read back the same, and
 * the blob written, packed, must unpack to its bytes. A blob
 * piano-db rejects ends in pdb_die, whose hook longjmps back.
 *
 * Seeds: test/fuzz/corpus/blobs (blobs taken from real runs). */
#include "piano_db.h"
#include "blob_pack.h"
#include "hist.h"
#include "stats_blob.h"
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf env;

static void jump_out(const char *msg)
{
    (void)msg;
    longjmp(env, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    pdb_die_hook = jump_out;
    return 0;
}

static void hist_case(const uint8_t *b, size_t len)
{
    static piano_hist h;
    memset(&h, 0, sizeof h);
    if (piano_hist_add_blob(&h, b, len) != 0)
        return;
    uint64_t p50 = piano_hist_quantile(&h, 0.5), p99 = piano_hist_quantile(&h, 0.99);
    if (h.total && p50 > p99)
        abort();
    /* the diff's significance test on the decoded histogram against itself */
    static hbin bins[PIANO_HIST_BUCKETS];
    size_t n = 0;
    for (unsigned i = 0; i < PIANO_HIST_BUCKETS; i++)
        if (h.count[i])
            bins[n++] = (hbin){ (uint16_t)i, h.count[i] };
    sig_result r = sig_mann_whitney(bins, n, 1.0, (call_fix){ 0, 1 }, bins, n, 1.5, (call_fix){ 3.0, 0.5 });
    (void)r;
}

static void fns_case(const uint8_t *b, size_t len)
{
    /* a run whose functions are ids 2..9, two of them sharing a key; key 7 is "(unknown)" */
    static int64_t ids[] = { 2, 3, 4, 5, 6, 7, 8, 9 };
    static int key_of[] = { 0, 1, 2, 2, 3, 4, 5, 6 };
    fkeys k = { .ids = ids, .key_of = key_of, .nids = sizeof ids / sizeof ids[0], .nkeys = 8 };
    static pdb p = { .path = "fuzz" };
    static fnself *buf;   /* static: survives a longjmp */
    static size_t cap;
    if (!setjmp(env)) {
        size_t n = fns_decode(&p, &k, b, len, 1, &buf, &cap);
        for (size_t i = 0; i < n; i++)
            if (buf[i].key < 0 || buf[i].key >= k.nkeys)
                abort();
    }
}

static void stats_case(const uint8_t *b, size_t len)
{
    enum { MAX_ROWS = 256 };
    static piano_stats_row rows[MAX_ROWS];
    static unsigned char *unpacked, *repacked;
    if (piano_blob_packed(b, len)) {
        size_t n = piano_blob_unpacked_size(b, len);
        if (n == 0 || n > (1u << 20))
            return;
        free(unpacked);
        if (!(unpacked = malloc(n)) || piano_blob_unpack(b, len, unpacked, n) != 0)
            return;
        b = unpacked;
        len = n;
    }
    piano_stats_reader r;
    if (piano_stats_open(&r, b, len))
        return;
    size_t n = 0;
    int rc;
    while (n < MAX_ROWS && (rc = piano_stats_next(&r, &rows[n])) == 1) {
        const piano_stats_row *w = &rows[n++];
        if ((w->hs && (w->hs < b || w->hs + w->hs_len > b + len)) || (w->ht && (w->ht < b || w->ht + w->ht_len > b + len)))
            abort();   /* a histogram outside the blob */
        for (int m = 0; m < PIANO_STATS_NV; m++)
            if (w->v[m] < 0)
                abort();
    }
    if (n == MAX_ROWS || rc != 0)
        return;
    /* written again (this writer, v3) and read back: the same functions and figures */
    static piano_stats_writer out;
    static unsigned char hs[PIANO_HIST_BLOB_MAX + 16], ht[PIANO_HIST_BLOB_MAX + 16];
    piano_stats_begin(&out, r.flags);
    for (size_t i = 0; i < n; i++) {
        const piano_stats_row *w = &rows[i];
        if ((w->hs && w->hs_len > PIANO_HIST_BLOB_MAX) || (w->ht && w->ht_len > PIANO_HIST_BLOB_MAX))
            return;
        size_t hn = w->hs ? (r.hist_v2 ? piano_hist_wrap(w->hs, w->hs_len, hs) : (memcpy(hs, w->hs, w->hs_len), w->hs_len)) : 0;
        size_t tn = w->ht ? (r.hist_v2 ? piano_hist_wrap(w->ht, w->ht_len, ht) : (memcpy(ht, w->ht, w->ht_len), w->ht_len)) : 0;
        piano_stats_put(&out, w->fn, w->v, w->hs ? hs : NULL, hn, w->ht ? ht : NULL, tn);
        if (out.failed)
            return;   /* (a histogram the writer refuses) */
    }
    piano_stats_reader back;
    piano_stats_row row;
    if (piano_stats_open(&back, out.buf, out.len))
        abort();
    for (size_t i = 0; i < n; i++) {
        if (piano_stats_next(&back, &row) != 1 || row.fn != rows[i].fn || !row.hs != !rows[i].hs ||
            !row.ht != !rows[i].ht)
            abort();
        for (int m = 0; m < PIANO_STATS_NV; m++)
            if (!rows[i].null[m] && (row.null[m] || row.v[m] != rows[i].v[m]))
                abort();
    }
    if (piano_stats_next(&back, &row) != 0)
        abort();
    /* packed, it unpacks to the same bytes */
    free(repacked);
    if (!(repacked = malloc(2 * out.len + 64)))
        return;
    size_t plen = piano_blob_pack(out.buf, out.len, repacked, out.len);
    if (plen) {
        unsigned char *again = repacked + out.len;
        if (plen >= out.len || piano_blob_unpacked_size(repacked, plen) != out.len ||
            piano_blob_unpack(repacked, plen, again, out.len) != 0 || memcmp(again, out.buf, out.len) != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if ((data[0] & 3) == 3)
        stats_case(data + 1, size - 1);
    else if (data[0] & 1)
        fns_case(data + 1, size - 1);
    else
        hist_case(data + 1, size - 1);
    return 0;
}
