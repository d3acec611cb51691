/* (a) deep recursion: fib(N), N from argv[1] (default 35). Instrumented: fib.
 * calls = 2*fib(N+1) - 1, computed exactly below. */
#include "bench_common.h"

NOINLINE uint64_t wk_fib(uint32_t n)
{
    if (n < 2)
        return n;
    uint64_t r = wk_fib(n - 1) + wk_fib(n - 2);
    OPAQUE(r);
    return r;
}

static NOINST uint64_t fib_iter(uint32_t n)
{
    uint64_t a = 0, b = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 35;
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t r = wk_fib(n);
    uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    if (r != fib_iter(n)) {
        fprintf(stderr, "recursion: wrong result\n");
        return 1;
    }
    bench_report(w1 - w0, c1 - c0, 2 * fib_iter(n + 1) - 1, 1, r);
    return 0;
}
