// PIANO_FNS: tick
// CFLAGS: -pthread
// ENV: PIANO_CPU=1 PIANO_FRAMES=off
// Short calls preempted: two threads pinned to one CPU call tick(), a call of
// a few nanoseconds, in a loop for 0.4 s each, so that the scheduler switches
// them out at any instruction, hooks included. An off-CPU period belongs to
// the call whose wall time holds it: a switch inside an entry hook, after its
// check of the perf page and before the call's entry tick, was charged to the
// call although its wall time started after it (tick's CPU time came out far
// below its share, often 0). Each thread prints its tid, the CPU time and
// the wall time its clocks measured around its loop.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static long long ns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static volatile unsigned sink;
void tick(void) { sink++; }
static long long cpu[2], wall[2];
static int tids[2];
static void *loop(void *arg) {
    int k = (int)(long)arg;
    tids[k] = gettid();
    long long c0 = ns(CLOCK_THREAD_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
    for (unsigned n = 1;; n++) {
        tick();
        if (!(n & 4095) && ns(CLOCK_MONOTONIC) - w0 > 400000000LL)
            break;
    }
    cpu[k] = ns(CLOCK_THREAD_CPUTIME_ID) - c0, wall[k] = ns(CLOCK_MONOTONIC) - w0;
    return NULL;
}
int main(void) {
    /* one CPU of those allowed, for both threads */
    cpu_set_t set, one;
    CPU_ZERO(&one);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) { CPU_SET(c, &one); break; }
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return 2;
    pthread_t t;
    pthread_create(&t, NULL, loop, (void *)1L);   /* inherits the affinity */
    loop((void *)0L);
    pthread_join(t, NULL);
    for (int k = 0; k < 2; k++)
        printf("%d %lld %lld\n", tids[k], cpu[k], wall[k]);
    printf("done\n");
    return 0;
}
