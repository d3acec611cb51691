/* Cost of one __rdtsc() on this machine (back-to-back, dependent on nothing). */
#include "bench_common.h"
#include <x86intrin.h>

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000, acc = 0;
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < n; i++)
        acc += __rdtsc();
    uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    bench_report(w1 - w0, c1 - c0, n, 0, acc & 1);
    return 0;
}
