/* cpu_switch.c - what PIANO_CPU=1 adds per switch of a thread (bench/README.md,
 * "CPU time"): 20,000 calls of an instrumented function that sleeps 1 us (one
 * switch each). Prints thread CPU ns and wall ns per call.
 *   PIANO_FNS=napper PIANO_MIN_SIZE=0 build/bin/piano-cc -O2 bench/cpu_switch.c -o /tmp/cs
 *   for r in 1 2 3 4 5; do /tmp/cs; PIANO_CPU=1 /tmp/cs; done */
#include <stdio.h>
#include <time.h>

static long long ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

void napper(void)
{
    struct timespec t = {0, 1000};
    nanosleep(&t, 0);
}

int main(void)
{
    enum { N = 20000 };
    long long c0 = ns(CLOCK_THREAD_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
    for (int i = 0; i < N; i++)
        napper();
    printf("%lld %lld\n", (ns(CLOCK_THREAD_CPUTIME_ID) - c0) / N, (ns(CLOCK_MONOTONIC) - w0) / N);
    return 0;
}
