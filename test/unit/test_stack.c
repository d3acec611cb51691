/* test_stack.c - the shadow stack and calling contexts of the runtime, driven
 * by calling the hooks directly (the recorder's objects, piano_rt_objects, are linked into this test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fns_blob.h"
#include "frames_blob.h"
#include "functions_blob.h"
#include "piano_abi.h"
#include "runtime.h"

static struct piano_site site_a = { .line = 1, .name = "a", .file = "t.c" }, site_b = { .line = 2, .name = "b", .file = "t.c" },
                         site_c = { .line = 3, .name = "c", .file = "t.c" }, site_r = { .line = 4, .name = "r", .file = "t.c" },
                         site_long = { .line = 5, .name = "long_call", .file = "t.c" },
                         site_h = { .line = 6, .name = "h", .file = "t.c" };
static jmp_buf jump;

static struct piano_node *node_of(struct piano_site *s, uint32_t parent_fn)
{
    struct piano_thread *ts = piano_tls;
    struct piano_node *nodes = PIANO_NODES(ts);
    for (uint32_t i = 1; i < ts->n_nodes; i++)
        if (nodes[i].fn == s->id && nodes[nodes[i].parent].fn == parent_fn)
            return &nodes[i];
    return NULL;
}

static __attribute__((noinline)) void b(void)
{
    __piano_enter(&site_b);
    assert_int_equal(piano_tls->depth, 2);
    __piano_exit(&site_b);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void a(void)
{
    __piano_enter(&site_a);
    b();
    b();
    __piano_exit(&site_a);
    __asm__ volatile("" ::: "memory");
}

static void nesting_and_contexts(void **state)
{
    (void)state;
    a();
    struct piano_thread *ts = piano_tls;
    assert_non_null(ts);
    assert_int_equal(ts->depth, 0);
    struct piano_node *na = node_of(&site_a, 0), *nb = node_of(&site_b, site_a.id);
    assert_non_null(na);
    assert_non_null(nb);
    assert_int_equal(na->calls, 1);
    assert_int_equal(nb->calls, 2);
    assert_int_equal(nb->parent, (uint32_t)(na - PIANO_NODES(ts)));   /* b's context is under a's */
    assert_int_equal(ts->frames, 1);                 /* one outermost call: one frame */
}

static __attribute__((noinline)) void c_jumps(void)
{
    __piano_enter(&site_c);
    longjmp(jump, 1);
}

static __attribute__((noinline)) void b_calls_c(void)
{
    __piano_enter(&site_b);
    c_jumps();
    __piano_exit(&site_b);
}

static __attribute__((noinline)) void a_with_setjmp(void)
{
    __piano_enter(&site_a);
    if (!setjmp(jump))
        b_calls_c();
    /* b and c were left by longjmp: a's exit closes them */
    __piano_exit(&site_a);
    __asm__ volatile("" ::: "memory");
}

static void longjmp_closes_abandoned_calls(void **state)
{
    (void)state;
    uint64_t frames = piano_tls ? piano_tls->frames : 0;
    a_with_setjmp();
    struct piano_thread *ts = piano_tls;
    assert_int_equal(ts->depth, 0);
    struct piano_node *nb = node_of(&site_b, site_a.id);
    struct piano_node *nc = node_of(&site_c, site_b.id);
    assert_non_null(nc);
    assert_int_equal(nc->calls, 1);
    assert_int_equal(nb->calls, 3);   /* 2 from the first test, 1 here */
    assert_int_equal(ts->frames, frames + 1);
}

static void unmatched_exit_is_ignored(void **state)
{
    (void)state;
    __piano_exit(&site_c);
    assert_int_equal(piano_tls->depth, 0);
}

/* n + 1 nested calls of site s. */
static __attribute__((noinline)) void recurse(struct piano_site *s, int n)
{
    __piano_enter(s);
    if (n > 0)
        recurse(s, n - 1);
    __piano_exit(s);
    __asm__ volatile("" ::: "memory");
}

static void recursion_contexts_are_bounded(void **state)
{
    (void)state;
    recurse(&site_r, 299);   /* deeper than PIANO_CTX_DEPTH: deep calls share a context */
    struct piano_thread *ts = piano_tls;
    assert_int_equal(ts->depth, 0);
    struct piano_node *nodes = PIANO_NODES(ts);
    uint64_t calls = 0, contexts = 0;
    for (uint32_t i = 1; i < ts->n_nodes; i++)
        if (nodes[i].fn == site_r.id) {
            calls += nodes[i].calls;
            contexts++;
        }
    assert_int_equal(calls, 300);
    /* one context per depth up to PIANO_CTX_DEPTH, then one shared by all deeper calls */
    assert_int_equal(contexts, PIANO_CTX_DEPTH + 1);
}

/* A call of h 2^40 ticks long: its sample's pages are not made yet, so the
 * next exit (another function's) takes the full path to count it. */
static __attribute__((noinline)) void h_long(void)
{
    __piano_enter(&site_h);
    PIANO_STACK(piano_tls)[piano_tls->depth].t0 -= 1ull << 40;
    __piano_exit(&site_h);
    __asm__ volatile("" ::: "memory");
}

/* The samples of fn's histogram k (0 self, 1 total) on ts: its pages'
 * counters with their carry, its first samples' page (PIANO_TABLE_FEW), and
 * the header's pending sample (the latest exit's, rt/hooks.c). */
static uint64_t hist_samples(struct piano_thread *ts, uint32_t fn, int k)
{
    uint64_t n = ts->pend_fn == fn;
    uint32_t tb = PIANO_FNS(ts)[fn].table;
    uint32_t *words = PIANO_PAGES(ts);
    if (tb & PIANO_TABLE_FEW)
        return n + words[(size_t)(tb & ~PIANO_TABLE_FEW) * PIANO_PAGE_WORDS];
    const uint16_t *table = (const uint16_t *)(words + (size_t)tb * PIANO_PAGE_WORDS);
    for (unsigned e = 0; tb && e < PIANO_FN_PAGES; e++)
        for (unsigned b = 0; table[e] && b < PIANO_PAGE_BUCKETS; b++)
            n += piano_hist_word(ts, ts->hist_carried != 0, (size_t)table[e] * PIANO_PAGE_WORDS + b * 2 + (unsigned)k);
    return n;
}

/* Each exit counts its call's sample once, through the function's page
 * table as the exit hook cached it: across the table's making (the 32nd
 * sample, PIANO_FEW_MAX) with recursion and with other functions' calls
 * between, and when the full path counted the sample before (its page not
 * made yet) and pended the next; then with its counters at their top, each wrap carried (the exit
 * hook's own carry, spool.h piano_hist_inc's form) and no sample lost. */
static void hist_counts_each_call_once(void **state)
{
    (void)state;
    recurse(&site_h, 0);
    struct piano_thread *ts = piano_tls;
    uint32_t fn = site_h.id;
    assert_true(fn > 1);
    assert_true((int32_t)PIANO_FNS(ts)[fn].table <= 0);   /* none yet, or its first samples' page */
    assert_int_equal(hist_samples(ts, fn, 0), 1);
    recurse(&site_h, 39);   /* recursion: the 32nd sample makes the table while it is pending */
    assert_int_equal((int32_t)PIANO_FNS(ts)[fn].table > 0, 1);
    uint64_t calls = 41;
    for (int i = 0; i < 20; i++, calls += 4) {
        recurse(&site_h, 1);
        a();   /* a and b's exits between */
        recurse(&site_h, 1);
    }
    for (int i = 0; i < 3; i++, calls += 3) {
        h_long();   /* counted by b's exit, on the full path, which pends b's sample */
        a();
        recurse(&site_h, 1);
    }
    assert_int_equal(hist_samples(ts, fn, 0), calls);
    assert_int_equal(hist_samples(ts, fn, 1), calls);
    assert_int_equal(ts->hist_carried, 0);
    /* Every counter of its pages at the top: its next sample there wraps. */
    uint32_t tb = PIANO_FNS(ts)[fn].table;
    const uint16_t *table = (const uint16_t *)(PIANO_PAGES(ts) + (size_t)tb * PIANO_PAGE_WORDS);
    for (unsigned e = 0; e < PIANO_FN_PAGES; e++)
        for (unsigned w = 0; table[e] && w < PIANO_PAGE_WORDS; w++)
            PIANO_PAGES(ts)[(size_t)table[e] * PIANO_PAGE_WORDS + w] = UINT32_MAX;
    uint64_t self0 = hist_samples(ts, fn, 0), total0 = hist_samples(ts, fn, 1);
    uint64_t more = 0;
    for (; more < 10000 && !ts->hist_carried; more += 2)
        recurse(&site_h, 1);
    assert_int_equal(ts->hist_carried, 1);
    for (int i = 0; i < 10; i++, more += 2)
        recurse(&site_h, 1);   /* wrapped counters go on from 0, their carry 1 */
    assert_true(hist_samples(ts, fn, 0) == self0 + more);
    assert_true(hist_samples(ts, fn, 1) == total0 + more);
}

/* A frame in which a function has more self time than 8 bytes of prefix
 * varint hold (2^56 ticks): the record gives it the 9-byte form, and the
 * stored frame keeps the whole time. A child makes the frame and stores its run at
 * exit; the parent reads it back. */
static __attribute__((noinline)) int long_call(void)
{
    __piano_enter(&site_long);
    struct piano_thread *ts = piano_tls;
    PIANO_STACK(ts)[ts->depth].t0 -= 1ull << 57;   /* as if it had started 2^57 ticks ago */
    uint32_t at = ts->chunk ? ts->chunk_used : 0;
    __piano_exit(&site_long);
    __asm__ volatile("" ::: "memory");
    const unsigned char *rec = ts->chunk + sizeof(struct piano_chunk_hdr) + at;
    const unsigned char *end = ts->chunk + sizeof(struct piano_chunk_hdr) + ts->chunk_used;
    struct piano_frame_view f;
    uint32_t fn = 0;
    uint64_t self = 0;
    return piano_frame_read(rec, end, 0, 0, &f) == end && f.nfns == 1 &&
           piano_frame_fn(f.fns, end, &fn, &self) == end && fn == site_long.id && self >= 1ull << 57 &&
           f.total == self;
}

static void long_self_time_in_frame(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        exit(long_call() ? 0 : 3);   /* exit: the child's run is stored */
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(getenv("PIANO_DB"), &db), SQLITE_OK);
    assert_int_equal(piano_functions_register(db), SQLITE_OK);   /* the views functions and frames (piano-db's) */
    assert_int_equal(piano_frames_register(db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
        "SELECT f.fns, r.ns_per_tick, fn.id FROM frames f JOIN runs r ON r.id = f.run "
        "JOIN functions fn ON fn.run = f.run AND fn.name = 'long_call' "
        "ORDER BY f.run DESC, f.seq DESC LIMIT 1", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *b = sqlite3_column_blob(st, 0);
    size_t len = (size_t)sqlite3_column_bytes(st, 0), at = 0;
    uint32_t fn = 0;
    uint64_t self = 0;
    assert_int_equal(piano_fns_get(b, len, &at, &fn, &self), 0);
    assert_int_equal(at, len);   /* the frame holds that one function */
    assert_int_equal(fn, sqlite3_column_int64(st, 2));
    double want = (double)(1ull << 57) * sqlite3_column_double(st, 1);
    assert_true((double)self >= want && (double)self < want * 1.01);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The frame record's prefix varints: each value comes back, takes the bytes
 * its size says, and a record cut short or out of range is refused. */
static void frame_record_codec(void **state)
{
    (void)state;
    static const struct { uint64_t v; unsigned len; } cases[] = {
        { 0, 1 }, { 127, 1 }, { 128, 2 }, { (1ull << 14) - 1, 2 }, { 1ull << 14, 3 },
        { (1ull << 49) - 1, 7 }, { 1ull << 49, 8 }, { (1ull << 56) - 1, 8 }, { 1ull << 56, 9 },
        { UINT64_MAX, 9 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char b[9 + PIANO_PV_SLACK];
        memset(b, 0xee, sizeof b);
        const unsigned char *end = piano_pv_put(b, cases[i].v);
        assert_int_equal(end - b, cases[i].len);
        uint64_t v = 0;
        assert_ptr_equal(piano_pv_get(b, end, &v), end);
        assert_int_equal(v, cases[i].v);
        assert_null(piano_pv_get(b, end - 1, &v));   /* cut short */
    }
    assert_int_equal(piano_unzigzag(piano_zigzag(-5)), -5);
    assert_int_equal(piano_zigzag(-1), 1);

    /* start 10 ticks before the base (a clock a little behind), total 7, no
     * allocations, 6 ns off the CPU, functions 5, 3 and 4 (the id after 3:
     * the short form) */
    unsigned char rec[128], *p = rec;
    p = piano_pv_put(p, piano_zigzag(-10));
    p = piano_pv_put(p, 7);
    for (int i = 0; i < 4; i++)
        p = piano_pv_put(p, 0);
    p = piano_pv_put(p, 3);
    p = piano_pv_put(p, 2 << 2 | PIANO_KEPT_SPIKE);   /* two frames after the buffer's previous */
    p = piano_pv_put(p, 6);                            /* 6 ns off the CPU */
    p = piano_pv_put(p, 300 << 1);
    p = piano_pv_put(p, piano_zigzag(5));
    p = piano_pv_put(p, 1 << 1);
    p = piano_pv_put(p, piano_zigzag(3 - 5));
    p = piano_pv_put(p, 2 << 1 | 1);
    struct piano_frame_view f;
    assert_ptr_equal(piano_frame_read(rec, p, 1000, 40, &f), p);
    assert_int_equal(f.start, 990);
    assert_int_equal(f.total, 7);
    assert_int_equal(f.nfns, 3);
    assert_int_equal(f.n, 42);
    assert_int_equal(f.kept, PIANO_KEPT_SPIKE);
    assert_int_equal(f.off_ns, 6);
    uint32_t fn = 0;
    uint64_t self = 0;
    const unsigned char *q = piano_frame_fn(f.fns, p, &fn, &self);
    assert_true(q && fn == 5 && self == 300);
    q = piano_frame_fn(q, p, &fn, &self);
    assert_true(q && fn == 3 && self == 1);
    q = piano_frame_fn(q, p, &fn, &self);
    assert_true(q == p && fn == 4 && self == 2);
    assert_null(piano_frame_read(rec, p - 1, 1000, 40, &f));   /* the last entry cut short */

    p = rec;   /* a frame naming more functions than there can be */
    for (int i = 0; i < 6; i++)
        p = piano_pv_put(p, 0);
    unsigned char *nfns_at = p;
    p = piano_pv_put(p, PIANO_FN_CAP + 1ull);
    p = piano_pv_put(p, 1 << 2);
    p = piano_pv_put(p, 0);
    assert_null(piano_frame_read(rec, p, 0, 0, &f));
    p = piano_pv_put(nfns_at, 0);   /* no function, kept for no known reason */
    p = piano_pv_put(p, 1 << 2 | 3);
    p = piano_pv_put(p, 0);
    assert_null(piano_frame_read(rec, p, 0, 0, &f));
    p = piano_pv_put(nfns_at, 1);   /* one function, with an id past the cap */
    p = piano_pv_put(p, 1 << 2);
    p = piano_pv_put(p, 0);
    p = piano_pv_put(p, 1 << 1);
    p = piano_pv_put(p, piano_zigzag(PIANO_FN_CAP));
    assert_null(piano_frame_read(rec, p, 0, 0, &f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nesting_and_contexts),
        cmocka_unit_test(longjmp_closes_abandoned_calls),
        cmocka_unit_test(unmatched_exit_is_ignored),
        cmocka_unit_test(recursion_contexts_are_bounded),
        cmocka_unit_test(hist_counts_each_call_once),
        cmocka_unit_test(long_self_time_in_frame),
        cmocka_unit_test(frame_record_codec),
    };
    return cmocka_run_group_tests_name("stack", tests, NULL, NULL);
}
