/* test_snap_start.c - a thread that ends while the snapshot thread is being
 * started (the recorder's objects, piano_rt_objects, are linked in; run with
 * PIANO_INTERVAL=0.01 by ctest). The first thread's first call claims the
 * snapshot thread (rt/snap.c snap_start) and makes its buffers; the threads
 * that start meanwhile do not wait. One that ended in that window, its slot
 * reusable, had its slot's magic cleared with its figures counted nowhere:
 * every later snapshot lacked it (unit.threads failed so, 3 times in 90 runs
 * under load). Here the first thread is held between its claim and the
 * buffers (snap_start_pause, defined below) while a second thread runs and
 * ends; the snapshots must then sum both threads' calls. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "piano_abi.h"
#include "runtime.h"
#include "internal.h"
#include "snaps_read.h"

#define CALLS 1000

static struct piano_site site_leaf = { .line = 1, .name = "leaf", .file = "s.c" };

static __attribute__((noinline)) void leaf(void)
{
    __piano_enter(&site_leaf);
    __asm__ volatile("" ::: "memory");
    __piano_exit(&site_leaf);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int pauses, go;

/* Waits (up to 20 s) until *flag is set, under lock. */
static void wait_for(int *flag)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (!*flag && pthread_cond_timedwait(&changed, &lock, &until) != ETIMEDOUT)
        ;
}

/* The recorder's pause (rt/snap.c): the first snap_start, after its claim
 * and before the snapshot thread's buffers, waits until the main thread says
 * go (the second thread has ended). */
void snap_start_pause(void)
{
    pthread_mutex_lock(&lock);
    pauses++;
    pthread_cond_broadcast(&changed);
    wait_for(&go);
    pthread_mutex_unlock(&lock);
}

static void *calls(void *arg)
{
    (void)arg;
    for (int i = 0; i < CALLS; i++)
        leaf();
    return NULL;
}

/* The leaf's calls summed over the snaps file's records. */
static int64_t snap_calls(void)
{
    static int64_t cum[SNAPS_READ_IDS][PIANO_SNAP_N];
    snaps_read(cum);
    return cum[__atomic_load_n(&site_leaf.id, __ATOMIC_ACQUIRE)][PIANO_SNAP_calls];
}

static void thread_ended_while_snapshots_start(void **state)
{
    (void)state;
    const char *iv = getenv("PIANO_INTERVAL");
    if (!iv || strcmp(iv, "0.01") != 0)
        skip();
    pthread_t first, second;
    assert_int_equal(pthread_create(&first, NULL, calls, NULL), 0);
    pthread_mutex_lock(&lock);
    wait_for(&pauses);   /* the first thread holds the claim */
    int held = pauses;
    pthread_mutex_unlock(&lock);
    assert_int_equal(held, 1);
    assert_int_equal(pthread_create(&second, NULL, calls, NULL), 0);
    assert_int_equal(pthread_join(second, NULL), 0);   /* ended: its slot released, or reused */
    pthread_mutex_lock(&lock);
    go = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    assert_int_equal(pthread_join(first, NULL), 0);
    /* Both threads' calls, once a snapshot after their ends is written: up to
     * 20 s on a loaded machine. */
    int64_t sum = 0;
    struct timespec pause = { 0, 20000000 };
    for (int tries = 0; tries < 1000 && sum != 2 * CALLS; tries++) {
        nanosleep(&pause, NULL);
        sum = snap_calls();
    }
    assert_int_equal(sum, 2 * CALLS);
    assert_int_equal(pauses, 1);   /* one claim */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thread_ended_while_snapshots_start),
    };
    return cmocka_run_group_tests_name("snap_start", tests, NULL, NULL);
}
