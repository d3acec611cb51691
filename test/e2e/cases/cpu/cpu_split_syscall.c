// PIANO_FNS: writes,writes_sleepy
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// CPU time's user/system split against the kernel's own (issue 25 item 8: a
// function that only calls pwrite() showed 100% user time). Each phase runs
// in a thread of its own, which reads getrusage(RUSAGE_THREAD) before and
// after its loop and writes what the kernel says into the output:
//   writes        8 x 4 KiB pwrite() per call, back to back: the function is
//                 the loop, its split is the kernel's for the loop. The
//                 kernel's split is a sample of its ticks: ~100 a second of
//                 CPU on the VM measured (HZ=250, a loaded host), one in
//                 three a user tick here, so 50 ticks (0.5 s) put its user
//                 share anywhere within +-13 points (2 sigma) of the mean
//                 (24-46% seen). The loop runs until the kernel has counted
//                 200 ticks of the thread (+-7 points), 0.5-4 s of CPU;
//   writes_sleepy the same code with usleep(20) between calls (a switch at
//                 every call): the kernel's figures would hold the usleeps'
//                 CPU too (here ~40 us each, more than the call), so the
//                 function's split (0.2 s of CPU in its calls) is held to
//                 the first phase's.
// The output's last field is the phase's ticks (user+system) in
// /proc/thread-self/stat.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
static int fd;
static char block[4096];
static void eight(void) {
    for (int i = 0; i < 8; i++)
        if (pwrite(fd, block, sizeof block, (off_t)i * 4096) != (ssize_t)sizeof block) _exit(3);
}
void writes(void) { eight(); }
void writes_sleepy(void) { eight(); }
static long long cpu_ns(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
/* The calling thread's utime + stime in clock ticks (fields 14 and 15 of
 * /proc/thread-self/stat, after the command's closing parenthesis). */
static long ticks(void) {
    char b[1024];
    int f = open("/proc/thread-self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = f < 0 ? -1 : read(f, b, sizeof b - 1);
    if (f >= 0) close(f);
    if (n <= 0) _exit(5);
    b[n] = 0;
    char *c = strrchr(b, ')');
    if (!c) _exit(5);
    long v = 0;
    for (int field = 2; field < 15 && (c = strchr(c + 1, ' ')); )
        if (++field >= 14) v += atol(c + 1);
    return v;
}
struct phase { const char *name; void (*f)(void); int sleepy; long long user, sys; long ticks; };
static void *run(void *arg) {
    struct phase *p = arg;
    struct rusage a, b;
    long t0 = ticks();
    getrusage(RUSAGE_THREAD, &a);
    long long c0 = cpu_ns(), in_calls = 0;
    if (!p->sleepy) {
        /* the clock read every 64 calls, the ticks every 1024: the loop is
         * the function's */
        for (int n = 1;; n++) {
            p->f();
            if (n & 63) continue;
            long long c = cpu_ns() - c0;
            if (c >= 4000000000LL || (c >= 500000000LL && !(n & 1023) && ticks() - t0 >= 200)) break;
        }
    } else {
        /* 0.2 s in the function's calls, as the thread's clock says */
        while (in_calls < 200000000LL) {
            long long t = cpu_ns();
            p->f();
            in_calls += cpu_ns() - t;
            usleep(20);
        }
    }
    getrusage(RUSAGE_THREAD, &b);
    p->ticks = ticks() - t0;
    p->user = (b.ru_utime.tv_sec - a.ru_utime.tv_sec) * 1000000000LL + (b.ru_utime.tv_usec - a.ru_utime.tv_usec) * 1000LL;
    p->sys = (b.ru_stime.tv_sec - a.ru_stime.tv_sec) * 1000000000LL + (b.ru_stime.tv_usec - a.ru_stime.tv_usec) * 1000LL;
    return NULL;
}
int main(void) {
    fd = open("scratch.bin", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || unlink("scratch.bin") != 0) return 2;
    struct phase ph[] = { { "writes", writes, 0, 0, 0, 0 }, { "writes_sleepy", writes_sleepy, 1, 0, 0, 0 } };
    for (int i = 0; i < 2; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, &ph[i]) != 0 || pthread_join(t, NULL) != 0) return 4;
        printf("%s %lld %lld %ld\n", ph[i].name, ph[i].user, ph[i].sys, ph[i].ticks);
    }
    return 0;
}
