// PIANO_FNS: arith,arith_sleepy,arith_writes
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// CPU time's user/system split of a user-only function against the kernel's
// own (issue 25 item 8: a pure arithmetic loop showed 37 ms user, 76 ms
// system). Each phase runs in a thread of its own, which reads
// getrusage(RUSAGE_THREAD) before and after its loop and writes what the
// kernel says into the output:
//   arith         arithmetic, calls back to back for 0.5 s of CPU: the
//                 function is the loop, its split is the kernel's for it;
//   arith_sleepy  the same code with usleep(20) between calls (a switch at
//                 every call), 0.2 s of CPU in its calls;
//   arith_writes  the same code with 8 x 4 KiB pwrite() between calls (the
//                 system time is the caller's), 0.2 s of CPU in its calls.
// The last two are held to the first phase's split: the kernel's figures for
// their loops hold the CPU of what runs between the calls.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
static int fd;
static char block[4096];
static volatile unsigned sink;
static void sum(void) { for (unsigned i = 0; i < 20000; i++) sink += i * 7u; }
void arith(void) { sum(); }
void arith_sleepy(void) { sum(); }
void arith_writes(void) { sum(); }
static long long cpu_ns(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
struct phase { const char *name; void (*f)(void); int between; long long user, sys; };
static void *run(void *arg) {
    struct phase *p = arg;
    struct rusage a, b;
    getrusage(RUSAGE_THREAD, &a);
    long long c0 = cpu_ns(), in_calls = 0;
    if (!p->between) {
        /* 0.5 s; the clock read every 64 calls: the loop is the function's */
        for (int n = 0; (n & 63) || cpu_ns() - c0 < 500000000LL; n++)
            p->f();
    } else {
        /* 0.2 s in the function's calls, as the thread's clock says */
        while (in_calls < 200000000LL) {
            long long t = cpu_ns();
            p->f();
            in_calls += cpu_ns() - t;
            if (p->between == 1)
                usleep(20);
            else
                for (int i = 0; i < 8; i++)
                    if (pwrite(fd, block, sizeof block, (off_t)i * 4096) != (ssize_t)sizeof block) _exit(3);
        }
    }
    getrusage(RUSAGE_THREAD, &b);
    p->user = (b.ru_utime.tv_sec - a.ru_utime.tv_sec) * 1000000000LL + (b.ru_utime.tv_usec - a.ru_utime.tv_usec) * 1000LL;
    p->sys = (b.ru_stime.tv_sec - a.ru_stime.tv_sec) * 1000000000LL + (b.ru_stime.tv_usec - a.ru_stime.tv_usec) * 1000LL;
    return NULL;
}
int main(void) {
    fd = open("scratch.bin", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || unlink("scratch.bin") != 0) return 2;
    struct phase ph[] = { { "arith", arith, 0, 0, 0 }, { "arith_sleepy", arith_sleepy, 1, 0, 0 },
                          { "arith_writes", arith_writes, 2, 0, 0 } };
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, &ph[i]) != 0 || pthread_join(t, NULL) != 0) return 4;
        printf("%s %lld %lld\n", ph[i].name, ph[i].user, ph[i].sys);
    }
    return 0;
}
