/*
 * test_snap_count.c - the snapshot thread is out of glibc's count of
 * threads (rt/snap.c nthreads_forget) while it runs, so that the program's
 * last thread ends the process itself, and in the program's descriptor
 * table where glibc's count cannot be found.
 *
 * Built twice: test_snap_count (glibc's count found: the count stays the
 * program's own while the snapshot thread runs, is stopped and started
 * again, and that thread's descriptor table is its own) and
 * test_snap_count_shared (SNAP_COUNT_SHARED: snap_nthreads_lookup, defined
 * below, finds none: the snapshot thread stays in the count and shares the
 * program's table).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
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

#ifdef SNAP_COUNT_SHARED
unsigned int *snap_nthreads_lookup(void)
{
    return NULL;
}
#endif

static struct piano_site site_leaf = { .line = 1, .name = "leaf", .file = "c.c" };

static __attribute__((noinline)) void leaf(void)
{
    __piano_enter(&site_leaf);
    __asm__ volatile("" ::: "memory");
    __piano_exit(&site_leaf);
}

/* The id of the thread named piano-snap, or 0. */
static pid_t snap_tid(void)
{
    DIR *d = opendir("/proc/self/task");
    pid_t found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[300], comm[64] = "";
        snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(p, "r") : NULL;
        if (f && fgets(comm, sizeof comm, f) && !strcmp(comm, "piano-snap\n"))
            found = (pid_t)atoi(e->d_name);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

/* The threads of this process: glibc counts them all (TSan's background
 * thread is started with pthread_create too), but the snapshot thread. */
static unsigned tasks(void)
{
    DIR *d = opendir("/proc/self/task");
    unsigned n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* Waits (up to 20 s) until a thread named piano-snap runs; its id, or 0. */
static pid_t wait_snap_thread(void)
{
    pid_t t = 0;
    for (int i = 0; i < 4000 && !(t = snap_tid()); i++) {
        struct timespec d = { 0, 5000000 };
        nanosleep(&d, NULL);
    }
    return t;
}

/* Whether descriptor fd of this process is in thread tid's table. */
static int in_table(pid_t tid, int fd)
{
    char p[96];
    snprintf(p, sizeof p, "/proc/self/task/%d/fd/%d", (int)tid, fd);
    return access(p, F_OK) == 0 || errno != ENOENT;
}

static void count_and_table(void **state)
{
    (void)state;
    const char *iv = getenv("PIANO_INTERVAL");
    if (!iv || strcmp(iv, "0.01") != 0)
        skip();
    unsigned int *count = dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");
    if (!count)
        skip();   /* not glibc: nothing to compare with */
    leaf();   /* the first call starts the snapshot thread */
    pid_t t = wait_snap_thread();
    assert_true(t > 0);
#ifndef SNAP_COUNT_SHARED
    /* its table made (own_table closes the standard descriptors there too) */
    for (int i = 0; i < 4000 && in_table(t, 0); i++) {
        struct timespec d = { 0, 5000000 };
        nanosleep(&d, NULL);
    }
    assert_false(in_table(t, 0));
#endif
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);   /* the program's, opened after its start */
    assert_true(fd >= 0);
#ifdef SNAP_COUNT_SHARED
    assert_int_equal(__atomic_load_n(count, __ATOMIC_SEQ_CST), tasks());   /* counted */
    assert_true(in_table(t, fd));   /* the program's table */
#else
    assert_int_equal(__atomic_load_n(count, __ATOMIC_SEQ_CST), tasks() - 1);
    assert_false(in_table(t, fd));   /* a table of its own */
    /* stopped: back in the count then taken off it by its end; started again */
    for (int i = 0; i < 5; i++) {
        snap_stop();
        /* joined: gone from the listing a moment later */
        for (int k = 0; k < 4000 && snap_tid(); k++) {
            struct timespec d = { 0, 5000000 };
            nanosleep(&d, NULL);
        }
        assert_int_equal(snap_tid(), 0);
        assert_int_equal(__atomic_load_n(count, __ATOMIC_SEQ_CST), tasks());
        snap_start();
        assert_true(wait_snap_thread() > 0);
        assert_int_equal(__atomic_load_n(count, __ATOMIC_SEQ_CST), tasks() - 1);
    }
#endif
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(count_and_table),
    };
    return cmocka_run_group_tests_name("snap_count", tests, NULL, NULL);
}
