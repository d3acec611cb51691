/*
 * test_snap_close.c - the snapshot thread never closes a descriptor of the
 * program's. Each file it opens is moved to a high number and the low one
 * closed once checked to be still piano's (rt/snap.c own_take): in the
 * window between that check and the close, a program may close every
 * descriptor (close_range(3, ~0U)) and open a file of its own at that very
 * number. The snapshot thread is held there (snap_own_pause "close",
 * defined below) while the main thread does so; its file must stay open
 * and writable (e2e.snapshots_close_range failed so, now and then, with
 * "write: Bad file descriptor" when the snapshot thread shared the program's
 * descriptor table).
 */
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

static struct piano_site site_leaf = { .line = 1, .name = "leaf", .file = "c.c" };

static __attribute__((noinline)) void leaf(void)
{
    __piano_enter(&site_leaf);
    __asm__ volatile("" ::: "memory");
    __piano_exit(&site_leaf);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int paused, go, held_fd = -1, after;

/* Waits (up to 20 s) until *flag reaches at least `want`, under lock. */
static void wait_for(int *flag, int want)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (*flag < want && pthread_cond_timedwait(&changed, &lock, &until) != ETIMEDOUT)
        ;
}

/* The recorder's pause (rt/snap.c own_take): the first close of a low
 * descriptor waits, after its check, until the main thread says go; each
 * later pause counts (the snapshot thread went on past that close). */
void snap_own_pause(const char *what, int fd)
{
    pthread_mutex_lock(&lock);
    if (!paused && fd >= 0 && !strcmp(what, "close")) {
        paused = 1;
        held_fd = fd;
        pthread_cond_broadcast(&changed);
        wait_for(&go, 1);
    } else if (go) {
        after++;
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
}

static void program_descriptor_never_closed(void **state)
{
    (void)state;
    const char *iv = getenv("PIANO_INTERVAL");
    if (!iv || strcmp(iv, "0.01") != 0)
        skip();
    for (int i = 0; i < 100; i++)
        leaf();   /* the first call starts the snapshot thread */
    pthread_mutex_lock(&lock);
    wait_for(&paused, 1);
    int fd = held_fd;
    pthread_mutex_unlock(&lock);
    assert_int_equal(paused, 1);
    /* The program closes every descriptor of its own and opens its log,
     * again until it has the number the snapshot thread is about to close
     * (when that number is in its table at all). */
    assert_int_equal(syscall(SYS_close_range, 3u, ~0u, 0u), 0);
    int mine[64], n = 0, got;
    do {
        got = open("snap_close.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        assert_true(got >= 3);
        mine[n++] = got;
    } while (got < fd && n < 64);
    pthread_mutex_lock(&lock);
    go = 1;
    pthread_cond_broadcast(&changed);
    wait_for(&after, 3);   /* the snapshot thread went on: the close is done */
    int went_on = after;
    pthread_mutex_unlock(&lock);
    assert_true(went_on >= 3);
    for (int i = 0; i < n; i++) {
        assert_true(fcntl(mine[i], F_GETFD) >= 0);
        assert_int_equal(write(mine[i], "x\n", 2), 2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(program_descriptor_never_closed),
    };
    return cmocka_run_group_tests_name("snap_close", tests, NULL, NULL);
}
