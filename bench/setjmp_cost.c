/*
 * setjmp_cost.c - what piano's setjmp/longjmp interposition (rt/jumps.c) adds
 * to one setjmp + longjmp pair: the same loop run plain and with the runtime
 * preloaded, recording (the pair's calls are not instrumented; each setjmp
 * still notes the depth and each longjmp looks it up).
 * Usage:
 *   cc -O2 bench/setjmp_cost.c -o /tmp/setjmp_cost
 *   /tmp/setjmp_cost
 *   PIANO_DB=/tmp/sj.db LD_PRELOAD=build/lib/libpiano_rt.so /tmp/setjmp_cost
 */
#include <setjmp.h>
#include <stdio.h>
#include <time.h>

static jmp_buf env;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static __attribute__((noinline)) void jump(void) { longjmp(env, 1); }

int main(void)
{
    enum { N = 1000000 };
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now_ns();
        for (int i = 0; i < N; i++)
            if (!setjmp(env))
                jump();
        double ns = (now_ns() - t0) / N;
        best = ns < best ? ns : best;
    }
    printf("%.1f ns per setjmp + longjmp (best of 5 rounds of %d)\n", best, N);
    return 0;
}
