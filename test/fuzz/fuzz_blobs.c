/* fuzz_blobs.c - libFuzzer target: the blob decoders piano-db runs on every
 * stored row, fed directly.
 *
 * The first input byte chooses: even, a histogram blob (stats.hist_self /
 * hist_total: piano_hist_add_blob, then quantiles and the significance test
 * over the decoded buckets); 1 (mod 4), a frame's fns blob (frames.fns:
 * fns_decode of tools/db/query.c); 3 (mod 4), a thread's stats blob
 * (stat_trees.fns: store/stats_blob.h, any version), whose functions, when
 * it reads to its end, are written again and must read back the same, and
 * the blob written, packed, must unpack to its bytes; 2 (mod 8), a block of
 * frames (frame_blocks.frames: store/frames_blob.h), read directly and through
 * the table-valued function piano_frames (both must find it malformed, or
 * neither), whose frames, when it reads to its end, are written again and
 * must read back the same. Packed stats and frames blobs are unpacked first,
 * as blob_table.c does (store/blob_pack.h). A blob piano-db rejects ends in
 * pdb_die, whose hook longjmps back.
 *
 * Seeds: test/fuzz/corpus/blobs (blobs taken from real runs). */
#include "piano_db.h"
#include "blob_pack.h"
#include "hist.h"
#include "stats_blob.h"
#include "frames_blob.h"
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

/* A packed blob (store/blob_pack.h) unpacked, as blob_table.c does before a
 * format reads it: 0, or -1 when it does not unpack (then nothing to read). */
static int unpack_if_packed(const uint8_t **b, size_t *len)
{
    static unsigned char *unpacked;
    if (!piano_blob_packed(*b, *len))
        return 0;
    size_t n = piano_blob_unpacked_size(*b, *len);
    if (n == 0 || n > (1u << 20))
        return -1;
    free(unpacked);
    if (!(unpacked = malloc(n)) || piano_blob_unpack(*b, *len, unpacked, n) != 0)
        return -1;
    *b = unpacked;
    *len = n;
    return 0;
}

static void stats_case(const uint8_t *b, size_t len)
{
    enum { MAX_ROWS = 256 };
    static piano_stats_row rows[MAX_ROWS];
    static unsigned char *repacked;
    if (unpack_if_packed(&b, &len) != 0)
        return;
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

static int same_frame(const piano_frame_row *a, const piano_frame_row *b)
{
    return a->seq == b->seq && a->thread == b->thread && a->start_ns == b->start_ns && a->total_ns == b->total_ns &&
           a->allocs == b->allocs && a->alloc_bytes == b->alloc_bytes && a->frees == b->frees &&
           a->free_bytes == b->free_bytes && a->spike == b->spike && a->has_thread_seq == b->has_thread_seq &&
           (!a->has_thread_seq || a->thread_seq == b->thread_seq) && a->has_cpu == b->has_cpu &&
           (!a->has_cpu || a->cpu_ns == b->cpu_ns) && a->fns_len == b->fns_len &&
           (!a->fns_len || memcmp(a->fns, b->fns, a->fns_len) == 0);
}

static void frames_case(const uint8_t *b, size_t len)
{
    enum { MAX_ROWS = 1024 };
    static piano_frame_row rows[MAX_ROWS];
    if (unpack_if_packed(&b, &len) != 0)
        return;
    piano_frames_reader r;
    size_t n = 0;
    int rc = piano_frames_open(&r, b, len) ? -1 : 1;
    while (rc == 1 && (rc = piano_frames_next(&r)) == 1) {
        const piano_frame_row *f = &r.row;
        if (f->fns < b || f->fns + f->fns_len > b + len || (n && f->seq <= rows[n < MAX_ROWS ? n - 1 : MAX_ROWS - 1].seq))
            abort();   /* functions outside the blob, or frames out of order */
        if (n < MAX_ROWS)
            rows[n] = *f;
        n++;
    }
    /* the table-valued function agrees: an error exactly when the reader found the blob malformed */
    static sqlite3 *db;
    static sqlite3_stmt *st;
    if (!db && (sqlite3_open(":memory:", &db) != SQLITE_OK || piano_frames_register(db) != SQLITE_OK ||
                sqlite3_prepare_v2(db, "SELECT count(*), max(seq), total(length(fns)) FROM piano_frames(?1)", -1, &st,
                                   NULL) != SQLITE_OK))
        abort();
    if (len) {
        sqlite3_bind_blob(st, 1, b, (int)len, SQLITE_STATIC);
        int step = sqlite3_step(st);
        if ((step == SQLITE_ROW) != (rc == 0) || (step == SQLITE_ROW && (uint64_t)sqlite3_column_int64(st, 0) != n))
            abort();
        if (step != SQLITE_ROW && !strstr(sqlite3_errmsg(db), "frame_blocks.frames"))
            abort();
        sqlite3_reset(st);
    }
    if (rc != 0 || n > MAX_ROWS)
        return;
    /* written again and read back: the same frames */
    static piano_frames_writer w;
    piano_frames_begin(&w);
    for (size_t i = 0; i < n; i++)
        piano_frames_put(&w, &rows[i]);
    if (w.failed)
        abort();
    size_t blen;
    const unsigned char *blob = piano_frames_end(&w, &blen);
    piano_frames_reader back;
    if (piano_frames_open(&back, blob, blen) || (n && back.first != rows[0].seq))
        abort();
    for (size_t i = 0; i < n; i++)
        if (piano_frames_next(&back) != 1 || !same_frame(&back.row, &rows[i]))
            abort();
    if (piano_frames_next(&back) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if ((data[0] & 7) == 2)
        frames_case(data + 1, size - 1);
    else if ((data[0] & 3) == 3)
        stats_case(data + 1, size - 1);
    else if (data[0] & 1)
        fns_case(data + 1, size - 1);
    else
        hist_case(data + 1, size - 1);
    return 0;
}
