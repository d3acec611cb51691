/*
 * make_fixture.c - builds piano databases with known figures for piano-db's tests.
 * The schema comes from piano_store_open, rows from plain INSERTs.
 *
 *   make_fixture basic FILE      two runs (see below) for report/runs/tag/diff
 *   make_fixture sig FILE        runs 'base', 'slower' (+10%), 'same' (same distribution)
 *   make_fixture big FILE N      one run with N frames
 *   make_fixture huge FILE N     one run of 20 N frames, N kept (as the frame budget keeps them)
 *   make_fixture tree FILE       two runs with calling contexts and C++ names (flamegraph, export)
 *   make_fixture snaps FILE      a run of 3 s with snapshots (PIANO_INTERVAL), one without
 *   make_fixture sets FILE       a test suite's runs: several programs, clocks and overheads (sets)
 *   make_fixture sets-old FILE   the same at the schema before tag_runs, with the tag_runs
 *                                piano-db made then: 'suite' names runs 1..3, 'one' run 5
 *   make_fixture sets-old-untagged FILE  the same without tag_runs (no tag of several runs made)
 *   make_fixture empty FILE      a piano database without runs
 *   make_fixture v99 FILE        a piano database with user_version 99
 *   make_fixture foreign FILE    an SQLite database that is not piano's
 *   make_fixture junk FILE       4 KB of pseudo-random bytes
 */
#include "contexts_blob.h"
#include "frames_blob.h"
#include "functions_blob.h"
#include "fns_blob.h"
#include "hist.h"
#include "piano_schema.h"
#include "store.h"
#include "stats_blob.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *db;

static void die(const char *what)
{
    fprintf(stderr, "make_fixture: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
    exit(1);
}

static void exec(const char *sql)
{
    if (piano_store_exec(db, sql) != SQLITE_OK)
        die(sql);
}

static sqlite3_stmt *prep(const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        die(sql);
    return st;
}

static void done(sqlite3_stmt *st)
{
    if (sqlite3_step(st) != SQLITE_DONE)
        die("insert");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static void open_db(const char *path)
{
    char err[512];
    remove(path);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    if (!db) {
        fprintf(stderr, "make_fixture: %s\n", err);
        exit(1);
    }
    /* stats, contexts and frames: the views `piano-db sql` makes, which take inserts */
    if (piano_contexts_register(db) != SQLITE_OK || piano_stats_register(db) != SQLITE_OK ||
        piano_contexts_make_triggers(db) != SQLITE_OK || piano_stats_make_triggers(db) != SQLITE_OK ||
        piano_functions_register(db) != SQLITE_OK || piano_frames_register(db) != SQLITE_OK ||
        piano_frames_make_triggers(db) != SQLITE_OK)
        die("the views stats, contexts, functions and frames");
}

static void run(int id, const char *key, const char *parent, int pid, const char *cmd,
                long long started, long long duration, const char *status, double nspt, double ovh)
{
    sqlite3_stmt *st = prep("INSERT INTO runs(id, key, parent_key, pid, command, started_ns, "
                            "duration_ns, status, clock, ns_per_tick, overhead_ns) "
                            "VALUES(?,?,?,?,?,?,?,?,'tsc',?,?)");
    sqlite3_bind_int(st, 1, id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    if (parent)
        sqlite3_bind_text(st, 3, parent, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, pid);
    sqlite3_bind_text(st, 5, cmd, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, started);
    sqlite3_bind_int64(st, 7, duration);
    sqlite3_bind_text(st, 8, status, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 9, nspt);
    sqlite3_bind_double(st, 10, ovh);
    done(st);
    sqlite3_finalize(st);
}

static void fn(int run, int id, const char *name, const char *file, int line)
{
    sqlite3_stmt *st = prep("INSERT INTO functions(run, id, name, file, line) VALUES(?,?,?,?,?)");
    sqlite3_bind_int(st, 1, run);
    sqlite3_bind_int(st, 2, id);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, file, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, line);
    done(st);
    sqlite3_finalize(st);
}

static void thread(int run, int t, int tid, const char *name)
{
    sqlite3_stmt *st = prep("INSERT INTO threads(run, thread, tid, name) VALUES(?,?,?,?)");
    sqlite3_bind_int(st, 1, run);
    sqlite3_bind_int(st, 2, t);
    sqlite3_bind_int(st, 3, tid);
    sqlite3_bind_text(st, 4, name, -1, SQLITE_STATIC);
    done(st);
    sqlite3_finalize(st);
}

/* A histogram blob of `n` values (ticks), each with its count. */
typedef struct {
    unsigned char bytes[PIANO_HIST_BLOB_MAX];
    size_t len;
} blob;

static uint64_t dense[PIANO_HIST_BUCKETS];

static void encode(blob *b)
{
    b->len = piano_hist_encode(dense, 0, PIANO_HIST_BUCKETS, b->bytes);
    memset(dense, 0, sizeof dense);
}

static void hist(blob *b, int n, const uint64_t *values, const uint64_t *counts)
{
    for (int i = 0; i < n; i++)
        dense[piano_hist_bucket(values[i])] += counts[i];
    encode(b);
}

static long long child_calls; /* for the next stat_row */

static void stat_row(int run, int t, int f, long long calls, long long self, long long total,
                     long long allocs, long long bytes, long long frees, long long fbytes,
                     const blob *hs, const blob *ht)
{
    sqlite3_stmt *st = prep("INSERT INTO stats(run, thread, fn, calls, self_ns, total_ns, allocs, "
                            "alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls) "
                            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
    sqlite3_bind_int64(st, 13, child_calls);
    child_calls = 0;
    long long v[] = {run, t, f, calls, self, total, allocs, bytes, frees, fbytes};
    for (int i = 0; i < 10; i++)
        sqlite3_bind_int64(st, i + 1, v[i]);
    if (hs)
        sqlite3_bind_blob(st, 11, hs->bytes, (int)hs->len, SQLITE_TRANSIENT);
    if (ht)
        sqlite3_bind_blob(st, 12, ht->bytes, (int)ht->len, SQLITE_TRANSIENT);
    done(st);
    sqlite3_finalize(st);
}

/* Same figures, self and total histograms each holding `calls` copies of one value. */
static void stat1(int run, int t, int f, long long calls, long long self, long long total,
                  long long allocs, long long bytes, uint64_t vself, uint64_t vtotal)
{
    blob hs, ht;
    uint64_t c = (uint64_t)calls;
    hist(&hs, 1, &vself, &c);
    hist(&ht, 1, &vtotal, &c);
    stat_row(run, t, f, calls, self, total, allocs, bytes, allocs, bytes, &hs, &ht);
}

static size_t put_fns(unsigned char *out, int n, const uint32_t *ids, const uint64_t *ns)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += piano_fns_put(out + len, ids[i], ns[i]);
    return len;
}

static sqlite3_stmt *frame_st;
static void frame(int run, long long seq, int t, long long start, long long total, long long allocs,
                  long long bytes, int n, const uint32_t *ids, const uint64_t *ns)
{
    unsigned char buf[PIANO_FNS_ENTRY_MAX * 16];
    size_t len = put_fns(buf, n, ids, ns);
    if (!frame_st)
        frame_st = prep("INSERT INTO frames(run, seq, thread, start_ns, total_ns, allocs, "
                        "alloc_bytes, frees, free_bytes, fns) VALUES(?,?,?,?,?,?,?,?,?,?)");
    long long v[] = {run, seq, t, start, total, allocs, bytes, allocs, bytes};
    for (int i = 0; i < 9; i++)
        sqlite3_bind_int64(frame_st, i + 1, v[i]);
    sqlite3_bind_blob(frame_st, 10, buf, (int)len, SQLITE_TRANSIENT);
    done(frame_st);
}

/*
 * Run 1 (older; ns_per_tick 0.5, overhead 0): parse, resolve, helper (a.c), old_fn.
 * Run 2 (latest; forked from run 1; recovered; ns_per_tick 1, overhead 10 ns):
 *   parse twice (ids 1 and 6, same name/file/line: merged; 108 child calls), resolve,
 *   main (59 child calls),
 *   helper in a.c and in b.c (two rows), parse_item; threads 0 'main', 1 'worker';
 *   5 frames, frame 4 a spike; 2 unfinished calls; CPU time on thread 0 only.
 */
static void basic(void)
{
    exec("BEGIN");
    run(1, "1000-1700000000000000000", NULL, 1000, "./app --fast", 1700000000000000000LL,
        2500000000LL, "complete", 0.5, 0);
    fn(1, 0, "parse", "parse.c", 20);
    fn(1, 1, "resolve", "resolve.c", 5);
    fn(1, 2, "helper", "a.c", 3);
    fn(1, 3, "old_fn", "old.c", 1);
    thread(1, 0, 1000, "main");
    /* ticks of 0.5 ns: values are twice the ns */
    stat1(1, 0, 0, 12, 341210000, 400000000, 840, 64000, 2 * 28110000, 2 * 30000000);
    stat1(1, 0, 1, 47, 141130000, 141130000, 329, 24678, 2 * 2980000, 2 * 2980000);
    stat1(1, 0, 2, 100, 3000, 3000, 0, 0, 60, 60);
    stat1(1, 0, 3, 3, 900, 900, 1, 10, 600, 600);

    run(2, "1001-1700000100000000000", "1000-1700000000000000000", 1001, "./app", 1700000100000000000LL,
        1200000000LL, "recovered", 1.0, 10.0);
    fn(2, 0, "main", "main.c", 10);
    fn(2, 1, "parse", "parse.c", 20);
    fn(2, 2, "resolve", "resolve.c", 5);
    fn(2, 3, "helper", "a.c", 3);
    fn(2, 4, "helper", "b.c", 7);
    fn(2, 5, "parse_item", "parse.c", 40);
    fn(2, 6, "parse", "parse.c", 20);
    thread(2, 0, 1001, "main");
    thread(2, 1, 1005, "worker \"w\"");
    /* child_calls: the overhead (10 ns) of those calls is taken off the caller's self time */
    child_calls = 59;
    stat1(2, 0, 0, 1, 500000, 250000000, 3, 300, 500000, 250000000);
    child_calls = 100;
    stat1(2, 0, 1, 10, 10040, 20000, 5, 2048, 1000, 2000);
    child_calls = 8;
    stat1(2, 1, 6, 2, 10000, 12000, 1, 100, 5000, 6000);
    stat1(2, 0, 2, 47, 141130000, 150000000, 329, 24678, 3000000, 3100000);
    stat1(2, 0, 3, 100, 3000, 3000, 0, 0, 30, 30);
    child_calls = 200; /* correction beyond its self time: clamped at 0 */
    stat1(2, 0, 4, 50, 1000, 1000, 0, 0, 20, 20);
    {
        blob hs, ht;
        uint64_t v[] = {800000, 1200000}, c[] = {100, 8};
        hist(&hs, 2, v, c);
        hist(&ht, 2, v, c);
        stat_row(2, 1, 5, 108, 94580000, 94580000, 1620, 129331, 1600, 120000, &hs, &ht);
    }
    {
        uint32_t ids[] = {1, 2, 5};
        uint64_t f1[] = {28110000, 2980000, 870000};
        uint64_t f2[] = {28500000, 3010000, 910000};
        uint64_t f3[] = {27940000, 2950000, 850000};
        uint64_t f4[] = {71220000, 3100000, 1050000};
        frame(2, 1, 0, 1000, 48120000, 93, 21811, 3, ids, f1);
        frame(2, 2, 0, 50000000, 49010000, 95, 22323, 3, ids, f2);
        frame(2, 3, 0, 100000000, 47880000, 91, 21401, 3, ids, f3);
        frame(2, 4, 0, 150000000, 102330000, 210, 49868, 3, ids, f4);
        uint32_t ids5[] = {6, 1, 5};
        uint64_t f5[] = {28000000, 300000, 890000};
        frame(2, 5, 1, 260000000, 48550000, 94, 22016, 3, ids5, f5);
    }
    exec("INSERT INTO unfinished(run, thread, depth, fn, start_ns, elapsed_ns) "
         "VALUES(2, 0, 0, 0, 1000, 5000), (2, 1, 0, 5, 2000, 700)");
    /* CPU time measured on thread 0 only (thread 1 could not open its perf
     * event): self CPU half the self time, inclusive half the total, an
     * eighth of it system; functions with a row on thread 1 are not known. */
    exec("UPDATE runs SET cpu_mode = 'perf' WHERE id = 2;"
         "UPDATE stats SET cpu_ns = self_ns / 2, cpu_total_ns = total_ns / 2, cpu_sys_ns = total_ns / 16,"
         " cpu_user_ns = total_ns / 2 - total_ns / 16, offcpu_ns = total_ns - total_ns / 2 WHERE run = 2 AND thread = 0;"
         "UPDATE frames SET cpu_ns = total_ns / 2 WHERE run = 2 AND thread = 0");
    exec("COMMIT");
}

/* xorshift64* and Box-Muller: reproducible log-normal draws. */
static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return ((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
    double u = uniform(), v = uniform();
    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void lognormal_hist(blob *b, int n, double median, double sigma)
{
    for (int i = 0; i < n; i++)
        dense[piano_hist_bucket((uint64_t)llround(median * exp(sigma * gauss())))]++;
    encode(b);
}

static void sig_run(int id, const char *key, const char *tag, double work_median)
{
    const int calls = 20000;
    run(id, key, NULL, 2000 + id, "./bench", 1700000000000000000LL + id * 1000000000LL, 900000000LL,
        "complete", 1.0, 0);
    fn(id, 0, "work", "work.c", 1);
    fn(id, 1, "steady", "work.c", 9);
    thread(id, 0, 2000 + id, "main");
    blob hs, ht;
    lognormal_hist(&hs, calls, work_median, 0.3);
    lognormal_hist(&ht, calls, work_median * 2, 0.3);
    long long self = (long long)(calls * work_median * exp(0.045));
    stat_row(id, 0, 0, calls, self, 2 * self, 0, 0, 0, 0, &hs, &ht);
    lognormal_hist(&hs, calls, 5000, 0.3);
    lognormal_hist(&ht, calls, 5000, 0.3);
    self = (long long)(calls * 5000 * exp(0.045));
    stat_row(id, 0, 1, calls, self, self, 0, 0, 0, 0, &hs, &ht);
    sqlite3_stmt *st = prep("INSERT INTO tags(name, run) VALUES(?, ?)");
    sqlite3_bind_text(st, 1, tag, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, id);
    done(st);
    sqlite3_finalize(st);
}

static void sig(void)
{
    exec("BEGIN");
    sig_run(1, "k1", "base", 10000);
    sig_run(2, "k2", "slower", 11000);
    sig_run(3, "k3", "same", 10000);
    exec("COMMIT");
}

static void big(long long n)
{
    exec("BEGIN");
    run(1, "3000-1", NULL, 3000, "./game", 1700000000000000000LL, n * 16000000LL, "complete", 1.0, 0);
    fn(1, 0, "frame", "game.c", 1);
    fn(1, 1, "update", "game.c", 20);
    fn(1, 2, "render", "game.c", 40);
    thread(1, 0, 3000, "main");
    stat1(1, 0, 0, n, n * 1000, n * 16000000, 0, 0, 1000, 16000000);
    stat1(1, 0, 1, n, n * 5000000, n * 5000000, n, n * 64, 5000000, 5000000);
    stat1(1, 0, 2, n, n * 10999000, n * 10999000, 0, 0, 10999000, 10999000);
    uint32_t ids[] = {0, 1, 2};
    for (long long i = 1; i <= n; i++) {
        uint64_t ns[] = {1000, 5000000 + (uint64_t)(i % 7), 10999000};
        frame(1, i, 0, (i - 1) * 16000000, 16000000 + i % 7, 1, 64, 3, ids, ns);
    }
    exec("COMMIT");
}

/* A run as the frame budget leaves one: `kept` rows in the frames table (every
 * 1000th a spike, marked), out of 20x as many frames counted in runs.frames
 * and in the run's frame histogram (ns_per_tick 1: 16 ms frames, 40 ms spikes). */
static void huge(long long kept)
{
    exec("BEGIN");
    long long all = 20 * kept, spikes = all / 1000;
    run(1, "3000-1", NULL, 3000, "./game", 1700000000000000000LL, kept * 16000000LL, "complete", 1.0, 0);
    fn(1, 0, "frame", "game.c", 1);
    fn(1, 1, "update", "game.c", 20);
    fn(1, 2, "render", "game.c", 40);
    thread(1, 0, 3000, "main");
    stat1(1, 0, 0, all, all * 1000, all * 16000000, 0, 0, 1000, 16000000);
    uint64_t *counts = calloc(PIANO_HIST_BUCKETS, sizeof *counts);
    unsigned char *blob = malloc(PIANO_HIST_BLOB_MAX);
    counts[piano_hist_bucket(16000000)] = (uint64_t)(all - spikes);
    counts[piano_hist_bucket(40000000)] = (uint64_t)spikes;
    size_t len = piano_hist_encode(counts, 0, PIANO_HIST_BUCKETS, blob);
    sqlite3_stmt *st = prep("UPDATE runs SET frames = ?1, frames_kept = ?2, frame_hist = ?3 WHERE id = 1");
    sqlite3_bind_int64(st, 1, all);
    sqlite3_bind_int64(st, 2, kept);
    sqlite3_bind_blob(st, 3, blob, (int)len, SQLITE_TRANSIENT);
    done(st);
    sqlite3_finalize(st);
    st = prep("UPDATE threads SET frames = ?1, frame_hist = ?2 WHERE run = 1 AND thread = 0");
    sqlite3_bind_int64(st, 1, all);
    sqlite3_bind_blob(st, 2, blob, (int)len, SQLITE_TRANSIENT);
    done(st);
    sqlite3_finalize(st);
    free(counts);
    free(blob);
    /* the frames in blocks, as the import writes them (store/frames_blob.h): millions of
     * rows through the view and packed would take minutes on a loaded machine */
    st = prep(PIANO_FRAMES_INSERT);
    piano_frames_writer w = {0};
    piano_frames_begin(&w);
    uint32_t ids[] = {0, 1, 2};
    unsigned char fns[PIANO_FNS_ENTRY_MAX * 3];
    for (long long i = 1; i <= kept; i++) {
        int spike = i % 1000 == 0;
        uint64_t ns[] = {1000, spike ? 29000000 : 5000000, 10999000};
        piano_frame_row f = {.seq = i, .start_ns = (i - 1) * 16000000 * 20, .total_ns = spike ? 40000000 : 16000000,
                             .allocs = 1, .alloc_bytes = 64, .frees = 1, .free_bytes = 64, .fns = fns,
                             .fns_len = put_fns(fns, 3, ids, ns), .thread_seq = i * 20, .has_thread_seq = 1,
                             .spike = spike};
        piano_frames_put(&w, &f);
        if ((piano_frames_full(&w) || i == kept) && piano_frames_store(st, 1, &w) != SQLITE_OK)
            die("a block of frames");
    }
    free(w.buf);
    sqlite3_finalize(st);
    exec("COMMIT");
}

static sqlite3_stmt *ctx_st;
static void ctx(int run, int t, int id, int parent, int f, long long calls, long long self,
                long long total, long long allocs, long long bytes)
{
    if (!ctx_st)
        ctx_st = prep("INSERT INTO contexts(run, thread, id, parent, fn, calls, self_ns, total_ns, "
                      "allocs, alloc_bytes, frees, free_bytes) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
    long long v[] = {run, t, id, parent, f, calls, self, total, allocs, bytes, allocs, bytes};
    for (int i = 0; i < 12; i++)
        sqlite3_bind_int64(ctx_st, i + 1, v[i]);
    if (parent < 0)
        sqlite3_bind_null(ctx_st, 4);
    done(ctx_st);
}

/* Stats row without histograms (figures of the matching contexts). */
static void stat0(int run, int t, int f, long long calls, long long self, long long total,
                  long long allocs, long long bytes)
{
    stat_row(run, t, f, calls, self, total, allocs, bytes, allocs, bytes, NULL, NULL);
}

/*
 * Run 1 'tree_base' (one thread): main > {parse > leaf, resolve, old_fn}.
 * Run 2 'tree_new' (latest; threads 0 'main' tid 4000 and 1 'worker<1>' tid 4001):
 *   thread 0: main(1000) > {parse(4000) > leaf(2000), resolve(3000)}
 *   thread 1: main(500) > parse(2000); leaf(50) without a parent (past the runtime's cap).
 *   Merged: main 1500, main;parse 6000, main;parse;leaf 2000, main;resolve 3000, leaf 50:
 *   12550 ns of self time, 42 calls. Against run 1: parse faster, resolve slower.
 *   Frames: 3 on thread 0, 1 on thread 1; frame 3 (9000 ns) a spike.
 */
static void tree(void)
{
    static const char *names[] = {"main", "ns::Parser<std::vector<int>>::parse(int&)",
                                  "resolve<A&B>", "leaf", "old_fn"};
    static const char *files[] = {"main.cpp", "parse.cpp", "res.cpp", "leaf.c", "old.c"};
    exec("BEGIN");
    run(1, "4000-1", NULL, 3999, "./tree --base", 1700000000000000000LL, 100000, "complete", 1.0, 0);
    for (int i = 0; i < 5; i++)
        fn(1, i, names[i], files[i], 10 * i + 1);
    thread(1, 0, 3999, "main");
    ctx(1, 0, 1, -1, 0, 1, 1500, 13200, 1, 100);
    ctx(1, 0, 2, 1, 1, 12, 8000, 10000, 5, 500);
    ctx(1, 0, 3, 2, 3, 20, 2000, 2000, 0, 0);
    ctx(1, 0, 4, 1, 2, 3, 1000, 1000, 2, 64);
    ctx(1, 0, 5, 1, 4, 1, 700, 700, 0, 0);
    stat0(1, 0, 0, 1, 1500, 13200, 1, 100);
    stat0(1, 0, 1, 12, 8000, 10000, 5, 500);
    stat0(1, 0, 3, 20, 2000, 2000, 0, 0);
    stat0(1, 0, 2, 3, 1000, 1000, 2, 64);
    stat0(1, 0, 4, 1, 700, 700, 0, 0);

    run(2, "4001-2", NULL, 4000, "./tree", 1700000001000000000LL, 100000, "complete", 1.0, 0);
    for (int i = 0; i < 4; i++)
        fn(2, i, names[i], files[i], 10 * i + 1);
    thread(2, 0, 4000, "main");
    thread(2, 1, 4001, "worker<1>");
    ctx(2, 0, 1, -1, 0, 1, 1000, 10000, 1, 100);
    ctx(2, 0, 2, 1, 1, 10, 4000, 6000, 5, 500);
    ctx(2, 0, 3, 2, 3, 20, 2000, 2000, 0, 0);
    ctx(2, 0, 4, 1, 2, 3, 3000, 3000, 2, 64);
    ctx(2, 1, 1, -1, 0, 1, 500, 2500, 0, 0);
    ctx(2, 1, 2, 1, 1, 2, 2000, 2000, 0, 0);
    ctx(2, 1, 65540, -1, 3, 5, 50, 50, 0, 0);
    stat0(2, 0, 0, 1, 1000, 10000, 1, 100);
    stat0(2, 0, 1, 10, 4000, 6000, 5, 500);
    stat0(2, 0, 3, 20, 2000, 2000, 0, 0);
    stat0(2, 0, 2, 3, 3000, 3000, 2, 64);
    stat0(2, 1, 0, 1, 500, 2500, 0, 0);
    stat0(2, 1, 1, 2, 2000, 2000, 0, 0);
    stat0(2, 1, 3, 5, 50, 50, 0, 0);
    {
        uint32_t i1[] = {1, 0, 3}, i2[] = {0, 1}, i3[] = {2, 1, 3}, i4[] = {0};
        uint64_t n1[] = {2000, 500, 500}, n2[] = {500, 2000}, n3[] = {3000, 2000, 1500}, n4[] = {1000};
        frame(2, 1, 0, 0, 3000, 1, 100, 3, i1, n1);
        frame(2, 2, 1, 100, 2500, 0, 0, 2, i2, n2);
        frame(2, 3, 0, 4000, 9000, 6, 564, 3, i3, n3);
        frame(2, 4, 0, 14000, 1000, 0, 0, 1, i4, n4);
    }
    /* run 2 measured CPU time: three quarters of each context's self time */
    exec("UPDATE runs SET cpu_mode = 'perf' WHERE id = 2;"
         "UPDATE contexts SET cpu_ns = self_ns * 3 / 4, cpu_total_ns = total_ns * 3 / 4, cpu_sys_ns = 0,"
         " cpu_user_ns = total_ns * 3 / 4, offcpu_ns = total_ns - total_ns * 3 / 4 WHERE run = 2;"
         "UPDATE stats SET cpu_ns = self_ns * 3 / 4, cpu_total_ns = total_ns * 3 / 4, cpu_sys_ns = 0,"
         " cpu_user_ns = total_ns * 3 / 4, offcpu_ns = total_ns - total_ns * 3 / 4 WHERE run = 2");
    exec("INSERT INTO tags(name, run) VALUES('tree_base', 1), ('tree_new', 2)");
    exec("COMMIT");
}

/*
 * Run 1 (3 s; ns_per_tick 1, overhead 0): snapshots at 1 s, 2 s and 2.5 s (in
 * which nothing changed); parse 10 / 30 calls (100 / 300 ms) at the first
 * two, 40 (400 ms) at the end; resolve 5 calls (50 ms, 2 allocations of
 * 64 B) from 1 s, 8 (80 ms, 3 of 96 B) at the end. Spans of run 1: req 4
 * closed (400 ms wall, 40 ms busy) at 1 s, 6 (700, 60) at 2 s, 9 (1.2 s, 100 ms;
 * 1 unfinished) at the end; job 2 (300 ms, 30 ms) at the end only. Run 2: no
 * snapshots.
 */
static void snaps(void)
{
    exec("BEGIN");
    run(1, "1000-1700000000000000000", NULL, 1000, "./server", 1700000000000000000LL, 3000000000LL, "complete",
        1.0, 0);
    fn(1, 2, "parse", "parse.c", 20);
    fn(1, 3, "resolve", "resolve.c", 5);
    thread(1, 0, 1000, "main");
    stat1(1, 0, 2, 40, 400000000, 400000000, 0, 0, 10000000, 10000000);
    stat1(1, 0, 3, 8, 80000000, 80000000, 3, 96, 10000000, 10000000);
    exec("INSERT INTO snapshot_times(run, t_ns) VALUES(1, 1000000000), (1, 2000000000), (1, 2500000000);"
         "INSERT INTO snapshots(run, fn, t_ns, calls, self_ns, child_calls, allocs, alloc_bytes) VALUES"
         "(1, 2, 1000000000, 10, 100000000, 0, 0, 0), (1, 3, 1000000000, 5, 50000000, 0, 2, 64),"
         "(1, 2, 2000000000, 30, 300000000, 0, 0, 0)");
    exec("INSERT INTO spans(run, name, fn, count, unfinished, wall_ns, busy_ns) VALUES"
         "(1, 'req', NULL, 9, 1, 1200000000, 100000000), (1, 'job', NULL, 2, 0, 300000000, 30000000);"
         "INSERT INTO span_snapshots(run, name, t_ns, count, unfinished, wall_ns, busy_ns) VALUES"
         "(1, 'req', 1000000000, 4, 0, 400000000, 40000000), (1, 'req', 2000000000, 6, 0, 700000000, 60000000)");
    run(2, "1001-1700000100000000000", NULL, 1001, "./tool", 1700000100000000000LL, 1000000000LL, "complete", 1.0,
        0);
    fn(2, 2, "parse", "parse.c", 20);
    thread(2, 0, 1001, "main");
    stat1(2, 0, 2, 4, 40000000, 40000000, 0, 0, 10000000, 10000000);
    exec("COMMIT");
}

/*
 * A test suite's runs, for sets (report SET, diff SET SET, runs --group, tag NAME SET):
 *   1 ./jq .a          nspt 1, overhead 0: main (1 call, self 5000, 10 child calls), parse (10 calls of 20 ns)
 *   2 /usr/bin/jq -n 1 nspt 1, overhead 10: main (1 call, self 9000, 30 child calls: 8700 corrected),
 *                      parse (30 calls of 100 ns); CPU measured in runs 1 and 2, heap in use too
 *   3 ./jq .b          nspt 0.5, overhead 0: parse (10 calls of 40 ns: 80 ticks); no CPU, no heap
 *   4 ./jq --version   recorded nothing
 *   5, 6 ./fmt-test    children of run 7: fmt::write<char> and <wchar_t> (fmt.h), run 6 slower
 *   7 ctest            their parent: main
 * parse over runs 1-3: 50 calls, self 3600; per call 10x20, 30x100, 10x40 ns: p50 100 ns (the
 * averaged p50s would be 53); inclusive 10x30, 30x120, 10x50: p50 120.
 */
static void sets(void)
{
    exec("BEGIN");
    const long long T = 1700000000000000000LL;
    run(1, "100-1", NULL, 100, "./jq .a", T + 1000000000LL, 50000000LL, "complete", 1.0, 0);
    fn(1, 0, "main", "main.c", 1);
    fn(1, 1, "parse", "parse.c", 10);
    child_calls = 10;
    stat1(1, 0, 0, 1, 5000, 8000, 2, 100, 5000, 8000);
    stat1(1, 0, 1, 10, 200, 300, 1, 16, 20, 30);
    run(2, "101-2", NULL, 101, "/usr/bin/jq -n 1", T + 2000000000LL, 60000000LL, "complete", 1.0, 10.0);
    fn(2, 0, "main", "main.c", 1);
    fn(2, 1, "parse", "parse.c", 10);
    child_calls = 30;
    stat1(2, 0, 0, 1, 9000, 12000, 4, 200, 9000, 12000);
    stat1(2, 0, 1, 30, 3000, 3600, 3, 48, 100, 120);
    exec("UPDATE stats SET cpu_ns = self_ns, cpu_total_ns = total_ns, cpu_user_ns = total_ns - 100, cpu_sys_ns = 100,"
         " offcpu_ns = 50, inuse_objects = allocs - 1, inuse_bytes = alloc_bytes / 2, peak_inuse_bytes = alloc_bytes"
         " WHERE run IN (1, 2)");
    run(3, "102-3", NULL, 102, "./jq .b", T + 3000000000LL, 40000000LL, "recovered", 0.5, 0);
    fn(3, 1, "parse", "parse.c", 10);
    stat1(3, 0, 1, 10, 400, 500, 0, 0, 80, 100);
    run(4, "103-4", NULL, 103, "./jq --version", T + 4000000000LL, 1000000LL, "complete", 1.0, 0);
    run(7, "200-7", NULL, 200, "ctest", T + 5000000000LL, 900000000LL, "complete", 1.0, 0);
    fn(7, 0, "main", "ctest.c", 1);
    stat1(7, 0, 0, 1, 1000, 1000, 0, 0, 1000, 1000);
    for (int r = 5; r <= 6; r++) {
        run(r, r == 5 ? "201-5" : "202-6", "200-7", 196 + r, r == 5 ? "./fmt-test" : "./fmt-test --gtest_filter=x",
            T + (r + 1) * 1000000000LL, 20000000LL, "complete", 1.0, 0);
        fn(r, 0, "void fmt::write<char>(int)", "fmt.h", 50);
        fn(r, 1, "void fmt::write<wchar_t>(int)", "fmt.h", 50);
        /* per call: 60 ns (run 5), 90 ns (run 6, the slower) */
        uint64_t v = r == 5 ? 60 : 90;
        stat1(r, 0, 0, 1000, 1000 * (long long)v, 1000 * (long long)v, 0, 0, v, v);
        stat1(r, 0, 1, 1000, 1000 * (long long)v, 1000 * (long long)v, 0, 0, v, v);
        /* main > write<char>, main > write<wchar_t>: one path grouped (export, flamegraph --group template) */
        fn(r, 2, "main", "fmt_test.c", 1);
        stat1(r, 0, 2, 1, 100, 100 + 2000 * (long long)v, 0, 0, 100, 100 + 2000 * v);
        ctx(r, 0, 1, -1, 2, 1, 100, 100 + 2000 * (long long)v, 0, 0);
        ctx(r, 0, 2, 1, 0, 1000, 1000 * (long long)v, 1000 * (long long)v, 0, 0);
        ctx(r, 0, 3, 1, 1, 1000, 1000 * (long long)v, 1000 * (long long)v, 0, 0);
    }
    exec("COMMIT");
}

/* The sets at the schema before tag_runs (PIANO_SCHEMA_TAG_RUNS_SINCE): piano-db
 * made it on the first tag of several runs then (as here, when tagged). */
static void sets_old(int tagged)
{
    sets();
    exec("DROP TABLE tag_runs");
    if (tagged)
        exec("CREATE TABLE IF NOT EXISTS tag_runs(\n"
             "  name TEXT NOT NULL,\n"
             "  run  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
             "  PRIMARY KEY(name, run)\n"
             ") WITHOUT ROWID;"
             "INSERT INTO tag_runs(name, run) VALUES('suite', 1), ('suite', 2), ('suite', 3);"
             "INSERT INTO tags(name, run) VALUES('one', 5);");
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d", PIANO_SCHEMA_TAG_RUNS_SINCE - 1);
    exec(sql);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: make_fixture basic|sig|big|empty|v99|foreign|junk FILE [N]\n");
        return 2;
    }
    const char *kind = argv[1], *path = argv[2];
    if (!strcmp(kind, "junk")) {
        FILE *f = fopen(path, "wb");
        if (!f)
            return 1;
        for (int i = 0; i < 4096; i++)
            fputc((int)(uniform() * 256), f);
        return fclose(f) != 0;
    }
    if (!strcmp(kind, "foreign")) {
        remove(path);
        if (sqlite3_open(path, &db) != SQLITE_OK)
            die("open");
        exec("CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('hello')");
        sqlite3_close(db);
        return 0;
    }
    open_db(path);
    if (!strcmp(kind, "basic"))
        basic();
    else if (!strcmp(kind, "sig"))
        sig();
    else if (!strcmp(kind, "huge"))
        huge(argc > 3 ? atoll(argv[3]) : 5000000);
    else if (!strcmp(kind, "big"))
        big(argc > 3 ? atoll(argv[3]) : 1000000);
    else if (!strcmp(kind, "tree"))
        tree();
    else if (!strcmp(kind, "snaps"))
        snaps();
    else if (!strcmp(kind, "sets"))
        sets();
    else if (!strcmp(kind, "sets-old") || !strcmp(kind, "sets-old-untagged"))
        sets_old(!strcmp(kind, "sets-old"));
    else if (!strcmp(kind, "v99"))
        exec("PRAGMA user_version=99");
    else if (strcmp(kind, "empty"))
        die("unknown fixture");
    if (frame_st)
        sqlite3_finalize(frame_st);
    if (ctx_st)
        sqlite3_finalize(ctx_st);
    /* The contexts were inserted through the view (rows): stored as a run's
     * import stores them, a blob per thread (store/contexts_blob.h), so that
     * piano-db reads them as it reads real runs' (the tests that change them
     * through the view then move a thread's tree back to rows). */
    if (piano_contexts_pack(db) != SQLITE_OK)
        die("pack the contexts");
    /* The frames too: in blocks (store/frames_blob.h), as an import stores them. */
    if (piano_frames_pack(db) != SQLITE_OK)
        die("pack the frames");
    if (sqlite3_close(db) != SQLITE_OK)
        die("close");
    return 0;
}
