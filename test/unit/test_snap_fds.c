/* test_snap_fds.c - the snapshot thread's descriptors and a program that
 * closes every descriptor (close_range(3, ~0U)) and opens files again (the
 * recorder's objects, piano_rt_objects, are linked in; run with
 * PIANO_INTERVAL=0.01 by ctest). The snapshot thread opens the snaps file at
 * a low number, then moves it high; in between, the program may close that
 * number and a file may be opened there: e2e.snapshots_close_range once found
 * a snapshot record written over the first slot's header of states ("states[N]
 * is not a piano thread record", N the high half of the record's tick): a
 * thread's frame buffer growing had opened states read-write at the number,
 * which the snapshot thread took for its snaps file (and closed). Here the
 * snapshot thread is held just after its open of snaps (snap_own_pause,
 * defined below) while the main thread closes every descriptor and opens
 * states read-write at that very number; piano must leave it alone: still
 * open, the slot's header whole, and the snapshots go on. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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
static int paused, go, held_fd = -1;

/* Waits (up to 20 s) until *flag is set, under lock. */
static void wait_for(int *flag)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (!*flag && pthread_cond_timedwait(&changed, &lock, &until) != ETIMEDOUT)
        ;
}

/* The recorder's pause (rt/snap.c own_take): the snapshot thread's first
 * open of snaps that got a descriptor waits, before it looks at it, until
 * the main thread says go. */
void snap_own_pause(const char *what, int fd)
{
    if (fd < 0 || strcmp(what, PIANO_SPOOL_SNAPS) != 0)
        return;
    pthread_mutex_lock(&lock);
    if (!paused) {
        paused = 1;
        held_fd = fd;
        pthread_cond_broadcast(&changed);
        wait_for(&go);
    }
    pthread_mutex_unlock(&lock);
}

/* The leaf's calls summed over the snaps file's records. */
static int64_t snap_calls(void)
{
    static int64_t cum[SNAPS_READ_IDS][PIANO_SNAP_N];
    snaps_read(cum);
    return cum[__atomic_load_n(&site_leaf.id, __ATOMIC_ACQUIRE)][PIANO_SNAP_calls];
}

static void snaps_descriptor_reused_by_states(void **state)
{
    (void)state;
    const char *iv = getenv("PIANO_INTERVAL");
    if (!iv || strcmp(iv, "0.01") != 0)
        skip();
    for (int i = 0; i < CALLS; i++)
        leaf();   /* the first call starts the snapshot thread */
    pthread_mutex_lock(&lock);
    wait_for(&paused);
    int fd = held_fd;
    pthread_mutex_unlock(&lock);
    assert_int_equal(paused, 1);
    /* The program closes every descriptor of its own... */
    assert_int_equal(syscall(SYS_close_range, 3u, ~0u, 0u), 0);
    /* ... and states is opened read-write at the snapshot thread's number
     * (as a frame buffer growing opens it, rt/frame_buffer.c), when that
     * number is in the program's table at all: the snapshot thread has a
     * table of its own (rt/snap.c own_table), its numbers start at 0. */
    char path[PIANO_PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/" PIANO_SPOOL_STATES, g.dir);
    int got = -1;
    do {
        got = open(path, O_RDWR | O_CLOEXEC);
        assert_true(got >= 3);
    } while (got < fd);
    fd = got;
    pthread_mutex_lock(&lock);
    go = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    /* The snapshots go on: the leaf's calls are in them once one after the
     * pause is written (up to 20 s on a loaded machine). */
    int64_t sum = 0;
    struct timespec pause = { 0, 20000000 };
    for (int tries = 0; tries < 1000 && sum != CALLS; tries++) {
        nanosleep(&pause, NULL);
        sum = snap_calls();
    }
    assert_int_equal(sum, CALLS);
    /* The descriptor is still open, and nothing was written through it: the
     * first slot still holds the main thread's header. */
    assert_true(fcntl(fd, F_GETFD) >= 0);
    uint64_t magic = 0;
    assert_int_equal(pread(fd, &magic, sizeof magic, (off_t)piano_slot_offset(0)), (ssize_t)sizeof magic);
    assert_true(magic == PIANO_SPOOL_MAGIC);
    struct piano_thread hdr;
    assert_int_equal(pread(fd, &hdr, sizeof hdr, (off_t)piano_slot_offset(0)), (ssize_t)sizeof hdr);
    assert_int_equal(hdr.thread, 0);
    assert_int_equal(hdr.slot, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snaps_descriptor_reused_by_states),
    };
    return cmocka_run_group_tests_name("snap_fds", tests, NULL, NULL);
}
