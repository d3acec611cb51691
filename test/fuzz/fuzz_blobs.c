/* fuzz_blobs.c - libFuzzer target: the two blob decoders piano-db runs on
 * every stored row, fed directly.
 *
 * The first input byte chooses: even, a histogram blob (stats.hist_self /
 * hist_total: piano_hist_add_blob, then quantiles and the significance test
 * over the decoded buckets); odd, a frame's fns blob (frames.fns: fns_decode
 * of tools/db/query.c). A blob
 * piano-db rejects ends in pdb_die, whose hook longjmps back.
 *
 * Seeds: test/fuzz/corpus/blobs (blobs taken from real runs). */
#include "piano_db.h"
#include "hist.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fns_case(data + 1, size - 1);
    else
        hist_case(data + 1, size - 1);
    return 0;
}
