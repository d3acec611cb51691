/*
 * bench_common.h - timing helpers shared by the benchmark workloads.
 *
 * Every workload prints one line on stdout:
 *   BENCH work_ns=<wall ns of the measured region> cpu_ns=<thread CPU ns, summed>
 *         calls=<instrumentable calls made in the region> frames=<outermost calls>
 *         maxrss_kb=<peak RSS (VmHWM) at the end of main> end_ns=<CLOCK_MONOTONIC at the end of main>
 * bench.py reads it. end_ns lets the harness time what happens after main
 * returns (piano imports its spool into SQLite at exit).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINST __attribute__((no_instrument_function))
#define NOINLINE __attribute__((noinline))
/* Keeps clang from turning recursion into loops (tail-recursion with an
 * accumulator) and from folding calls away: every call in the source is made. */
#define OPAQUE(x) __asm__ volatile("" : "+r"(x))

static NOINST inline uint64_t clock_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static NOINST inline void bench_report(uint64_t work_ns, uint64_t cpu_ns, uint64_t calls, uint64_t frames,
                                       uint64_t check)
{
    /* Peak RSS of this program: VmHWM (getrusage's ru_maxrss would carry the
     * parent's peak across exec, hiding anything smaller than the harness). */
    long hwm = -1;
    FILE *st = fopen("/proc/self/status", "r");
    if (st) {
        char line[256];
        while (fgets(line, sizeof line, st))
            if (sscanf(line, "VmHWM: %ld", &hwm) == 1)
                break;
        fclose(st);
    }
    printf("BENCH work_ns=%llu cpu_ns=%llu calls=%llu frames=%llu maxrss_kb=%ld check=%llu end_ns=%llu\n",
           (unsigned long long)work_ns, (unsigned long long)cpu_ns, (unsigned long long)calls,
           (unsigned long long)frames, hwm, (unsigned long long)check,
           (unsigned long long)clock_ns(CLOCK_MONOTONIC));
    fflush(stdout);
    /* BENCH_QUICK_EXIT=1: leave without running exit handlers (piano's import
     * does not run; its spool stays). For memory runs that are long on purpose. */
    const char *q = getenv("BENCH_QUICK_EXIT");
    if (q && *q == '1')
        _exit(0);
}
#endif
