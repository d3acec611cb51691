/* test_threads.c - several threads calling the hooks at once (the recorder's
 * objects, piano_rt_objects, are linked into this test). Each thread checks its own counts; under
 * ThreadSanitizer the test shows that the per-call path shares nothing
 * between threads beyond the sites' lazily registered ids. The sites start
 * unregistered, so the threads also race to register them. A child forked
 * while threads run dies with _exit and its spool is recovered the way
 * piano-db does it. At exit the runtime imports every thread's spool into
 * $PIANO_DB. PIANO_INTERVAL=0.01 (set by ctest) runs the snapshot thread
 * meanwhile: its last snapshot, taken after the threads ended, holds their
 * exact totals. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "import.h"
#include "store.h"
#include "stats_blob.h"
#include "functions_blob.h"
#include "piano_abi.h"
#include "runtime.h"
#include "internal.h"
#include "snaps_read.h"
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#define THREADS 8
#define ROUNDS 2000

static struct piano_site site_outer = { .line = 1, .name = "outer", .file = "t.c" }, site_leaf = { .line = 2, .name = "leaf", .file = "t.c" },
                         site_rec = { .line = 3, .name = "rec", .file = "t.c" }, site_jump = { .line = 4, .name = "jump", .file = "t.c" },
                         site_left = { .line = 5, .name = "left_in_flight", .file = "t.c" };
static pthread_barrier_t start;

static __attribute__((noinline)) void leaf(void)
{
    __piano_enter(&site_leaf);
    __asm__ volatile("" ::: "memory");
    __piano_exit(&site_leaf);
}

static __attribute__((noinline)) void rec(int n)
{
    __piano_enter(&site_rec);
    if (n > 0)
        rec(n - 1);
    else
        leaf();
    __piano_exit(&site_rec);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void jumps(jmp_buf *env)
{
    __piano_enter(&site_jump);
    longjmp(*env, 1);
}

static __attribute__((noinline)) void outer(int i)
{
    __piano_enter(&site_outer);
    leaf();
    rec(i % 5);
    jmp_buf env;
    if (!setjmp(env))
        jumps(&env);   /* left by longjmp: closed by outer's exit */
    __piano_exit(&site_outer);
    __asm__ volatile("" ::: "memory");
}

static uint64_t calls_of(struct piano_thread *ts, uint32_t fn)
{
    struct piano_node *nodes = PIANO_NODES(ts);
    uint64_t calls = 0;
    for (uint32_t i = 1; i < ts->n_nodes; i++)
        if (nodes[i].fn == fn)
            calls += nodes[i].calls;
    return calls;
}

/* Atomic: another thread's CAS on the id (even a failed one, which TSan
 * counts as a write) may come after this thread's last synchronisation. */
static uint32_t id_of(struct piano_site *site)
{
    return __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
}

static void *worker(void *arg)
{
    long k = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "worker%ld", k);
    pthread_setname_np(pthread_self(), name);
    pthread_barrier_wait(&start);
    for (int i = 0; i < ROUNDS; i++)
        outer(i);
    struct piano_thread *ts = piano_tls;
    if (!ts)
        return (void *)"no thread state";
    if (ts->depth != 0)
        return (void *)"calls left on the stack";
    if (ts->frames_all != ROUNDS)   /* counted; records are the budget's (8,000 for the run by default) */
        return (void *)"frames";
    /* rec(i % 5) makes i % 5 + 1 calls; leaf runs twice per round */
    if (calls_of(ts, id_of(&site_outer)) != ROUNDS || calls_of(ts, id_of(&site_leaf)) != 2 * ROUNDS ||
        calls_of(ts, id_of(&site_rec)) != (uint64_t)ROUNDS * 3 ||
        calls_of(ts, id_of(&site_jump)) != ROUNDS)
        return (void *)"call counts";
    if (k & 1) {
        /* ends inside an instrumented call: the thread's end closes it */
        __piano_enter(&site_left);
        pthread_exit(NULL);
    }
    return NULL;
}

static void threads_record_apart(void **state)
{
    (void)state;
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (long k = 0; k < THREADS; k++)
        assert_int_equal(pthread_create(&t[k], NULL, worker, (void *)k), 0);
    for (int k = 0; k < THREADS; k++) {
        void *why = NULL;
        assert_int_equal(pthread_join(t[k], &why), 0);
        if (why)
            fail_msg("thread %d: %s", k, (const char *)why);
    }
    pthread_barrier_destroy(&start);
    /* Every site got one id, the same for all threads. */
    assert_true(site_outer.id && site_leaf.id && site_rec.id && site_jump.id && site_left.id);
    assert_true(site_outer.id != site_leaf.id && site_leaf.id != site_rec.id);
}

/* The snaps file of this run, read: each function's cumulative calls after
 * every record must only grow, and once the threads above have ended, a
 * later snapshot equals their totals (ended threads included). Read again
 * until it does, for up to 20 s: on a loaded machine the snapshot thread may
 * not have run for a while. */
struct snap_sums {
    int records;
    int64_t cum[SNAPS_READ_IDS][PIANO_SNAP_N];
};

static void read_snaps(struct snap_sums *s)
{
    s->records = snaps_read(s->cum);
}

static int snaps_whole(const struct snap_sums *s)
{
    return s->records >= 2 && s->cum[id_of(&site_outer)][PIANO_SNAP_calls] == (int64_t)THREADS * ROUNDS &&
           s->cum[id_of(&site_leaf)][PIANO_SNAP_calls] == (int64_t)THREADS * 2 * ROUNDS &&
           s->cum[id_of(&site_rec)][PIANO_SNAP_calls] == (int64_t)THREADS * 3 * ROUNDS &&
           s->cum[id_of(&site_outer)][PIANO_SNAP_child_calls] == (int64_t)THREADS * 3 * ROUNDS;
}

static void snapshots_sum_every_thread(void **state)
{
    (void)state;
    const char *iv = getenv("PIANO_INTERVAL");
    if (!iv || strcmp(iv, "0.01") != 0)
        skip();
    static struct snap_sums s;
    struct timespec pause = { 0, 20000000 };
    for (int tries = 0; tries < 1000; tries++) {
        nanosleep(&pause, NULL);
        read_snaps(&s);
        if (snaps_whole(&s))
            break;
    }
    assert_true(s.records >= 2);
    assert_int_equal(s.cum[id_of(&site_outer)][PIANO_SNAP_calls], (int64_t)THREADS * ROUNDS);
    assert_int_equal(s.cum[id_of(&site_leaf)][PIANO_SNAP_calls], (int64_t)THREADS * 2 * ROUNDS);
    assert_int_equal(s.cum[id_of(&site_rec)][PIANO_SNAP_calls], (int64_t)THREADS * 3 * ROUNDS);
    /* outer's instrumented children: leaf, the outermost rec and jump, each round */
    assert_int_equal(s.cum[id_of(&site_outer)][PIANO_SNAP_child_calls], (int64_t)THREADS * 3 * ROUNDS);
}

/* A short thread: one outer call, its own counts checked. A reused slot
 * (rt/slots.c slot_reuse) must start as zeroed as a new one. */
static void *short_one(void *arg)
{
    int i = (int)(long)arg;
    outer(i);
    struct piano_thread *ts = piano_tls;
    if (!ts)
        return (void *)"no thread state";
    if (calls_of(ts, id_of(&site_outer)) != 1 || calls_of(ts, id_of(&site_leaf)) != 2 ||
        calls_of(ts, id_of(&site_rec)) != (uint64_t)(i % 5) + 1 || calls_of(ts, id_of(&site_jump)) != 1 ||
        ts->frames_all != 1 || ts->depth != 0)
        return (void *)"counts of a short thread";
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    for (long i = 0; i < 100; i++) {
        pthread_t t;
        void *why = NULL;
        if (pthread_create(&t, NULL, short_one, (void *)i) != 0 || pthread_join(t, &why) != 0)
            return (void *)"pthread";
        if (why)
            return why;
    }
    return NULL;
}

/* Four threads each making 100 short threads one at a time: the short
 * threads' slots are reused by one another, from several threads at once.
 * The ended file then holds records, with snapshots (unit.threads:
 * PIANO_INTERVAL=0.01; they used to stop reuse) and without. */
static void short_threads_reuse_slots(void **state)
{
    (void)state;
    pthread_t t[4];
    for (long k = 0; k < 4; k++)
        assert_int_equal(pthread_create(&t[k], NULL, spawner, NULL), 0);
    for (int k = 0; k < 4; k++) {
        void *why = NULL;
        assert_int_equal(pthread_join(t[k], &why), 0);
        if (why)
            fail_msg("spawner %d: %s", k, (const char *)why);
    }
    char path[PIANO_PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/" PIANO_SPOOL_ENDED, g.dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 0);
}

static void *spinner(void *arg)
{
    volatile int *stop = arg;
    while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE))
        leaf();
    return NULL;
}

static void forked_child_is_recovered(void **state)
{
    (void)state;
    int stop = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, spinner, &stop), 0);
    __piano_enter(&site_outer);   /* in flight across the fork */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 7; i++)
            leaf();
        _exit(0);   /* no import: the spool stays for recovery */
    }
    __piano_exit(&site_outer);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);

    char path[4096], err[512] = "";
    assert_non_null(piano_db_default_path(path, sizeof path));
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    if (!db)
        fail_msg("%s", err);
    int n = piano_import_recover(db, path, err, sizeof err);
    if (n < 0)
        fail_msg("%s", err);
    assert_true(n >= 1);
    assert_int_equal(piano_stats_register(db), SQLITE_OK);   /* the views stats and functions (piano-db's) */
    assert_int_equal(piano_functions_register(db), SQLITE_OK);
    sqlite3_stmt *st;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT sum(s.calls) FROM runs r JOIN stats s ON s.run = r.id "
             "JOIN functions f ON f.run = r.id AND f.id = s.fn "
             "WHERE r.pid = %d AND r.status = 'recovered' AND f.name = 'leaf'", (int)pid);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), 7);   /* the child's own calls only */
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The stack bounds a state keeps (longjmp's and setcontext's checks: hooks.c
 * same_stack, contexts.c by_region) are the library's: a thread's exactly; the
 * initial thread's from __libc_stack_end and RLIMIT_STACK, without reading
 * /proc/self/maps (runtime.c initial_stack_bounds), no narrower than what
 * pthread_getattr_np finds there and wider by at most the arguments and
 * environment above the first frame. */
static void *bounds_of_thread(void *arg)
{
    (void)arg;
    leaf();
    struct piano_thread *ts = piano_tls;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (!ts || pthread_getattr_np(pthread_self(), &attr) != 0 || pthread_attr_getstack(&attr, &addr, &size) != 0)
        return (void *)"no state or no attributes";
    pthread_attr_destroy(&attr);
    if (ts->stack_lo != (uintptr_t)addr || ts->stack_hi != (uintptr_t)addr + size)
        return (void *)"a thread's bounds differ from pthread_getattr_np's";
    return NULL;
}

extern void *__libc_stack_end;

static void stack_bounds_as_the_library_finds_them(void **state)
{
    (void)state;
    leaf();   /* this (the initial) thread's state */
    struct piano_thread *ts = piano_tls;
    assert_non_null(ts);
    pthread_attr_t attr;
    void *addr;
    size_t size;
    assert_int_equal(pthread_getattr_np(pthread_self(), &attr), 0);
    assert_int_equal(pthread_attr_getstack(&attr, &addr, &size), 0);
    pthread_attr_destroy(&attr);
    uintptr_t lo = (uintptr_t)addr, hi = lo + size, here = (uintptr_t)__builtin_frame_address(0);
    assert_true(ts->stack_lo <= here && here < ts->stack_hi);
    assert_true(ts->stack_hi > (uintptr_t)__libc_stack_end && ts->stack_hi <= hi);
    assert_true(hi - ts->stack_hi < (2u << 20));   /* the arguments and environment */
    assert_true(ts->stack_lo <= lo && lo - ts->stack_lo < (2u << 20));
    pthread_t t;
    void *why = NULL;
    assert_int_equal(pthread_create(&t, NULL, bounds_of_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &why), 0);
    if (why)
        fail_msg("%s", (const char *)why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_record_apart),
        cmocka_unit_test(snapshots_sum_every_thread),
        cmocka_unit_test(short_threads_reuse_slots),
        cmocka_unit_test(forked_child_is_recovered),
        cmocka_unit_test(stack_bounds_as_the_library_finds_them),   /* last: its calls are in no other test's counts */
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
