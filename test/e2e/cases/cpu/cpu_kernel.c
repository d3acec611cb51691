// PIANO_FNS: spin_long,spin_short
// ENV: PIANO_CPU=1 PIANO_HEAP=1 PIANO_INTERVAL=0.1 PIANO_FRAMES=off
// Stored CPU time against the kernel's own figure (the thread's CPU clock,
// CLOCK_THREAD_CPUTIME_ID), with snapshots and heap tracking on, as push
// --follow's program runs (push_follow once saw no CPU growth in any
// window). Both loops spin by CPU time, not wall time: the same CPU under
// any load. spin_long: 40 calls, each running until the thread's CPU clock
// advanced 4 ms; the program sums its CPU clock around each call.
// spin_short: tiny calls (a malloc and a free each) in a loop that runs until
// the thread's CPU clock advanced 150 ms; the program prints the loop's CPU.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long long ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static volatile unsigned sink;
void spin_long(long long cpu_ns)
{
    long long end = ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;
    while (ns(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int k = 0; k < 2000; k++)
            sink += (unsigned)k;
}
void spin_short(int i)
{
    char *p = malloc(32);
    for (int k = 0; k < 100; k++)
        sink += (unsigned)(i + k);
    p[0] = (char)i;
    sink += (unsigned)p[0];
    free(p);
}
int main(void)
{
    long long long_cpu = 0;
    for (int i = 0; i < 40; i++) {
        long long c = ns(CLOCK_THREAD_CPUTIME_ID);
        spin_long(4000000);
        long_cpu += ns(CLOCK_THREAD_CPUTIME_ID) - c;
    }
    long long c0 = ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; ns(CLOCK_THREAD_CPUTIME_ID) - c0 < 150000000;)
        for (int k = 0; k < 1000; k++)
            spin_short(i++);
    printf("%lld %lld\n", long_cpu, ns(CLOCK_THREAD_CPUTIME_ID) - c0);
    return 0;
}
