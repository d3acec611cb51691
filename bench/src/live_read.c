/* Live reads (issue 20 item 3): F frames (argv[1], default 10,000,000) of a
 * frame loop whose frames reach 10,000 calling contexts: wk_frame(i) calls
 * wk_a<i % 100>, which calls wk_b<(i / 100) % 100>, so the contexts are
 * wk_frame, wk_frame>wk_a<k> (100) and wk_frame>wk_a<k>>wk_b<m> (10,000):
 * 10,101 in all once F >= 10,000. calls = 3*F, frames = F.
 * Then it prints its BENCH line and "ready", and stays alive (the run is
 * live) until its standard input ends; bench.py times piano-db on it then. */
#include "bench_common.h"

static uint64_t (*b_fns[100])(uint64_t);

#define B(k) NOINLINE uint64_t wk_b##k(uint64_t v) { v = v * 6364136223846793005ull + k; OPAQUE(v); return v; }
#define A(k) NOINLINE uint64_t wk_a##k(uint64_t v, uint64_t m) { v ^= k; OPAQUE(v); return b_fns[m](v); }
#define TEN(X, d) X(d##0) X(d##1) X(d##2) X(d##3) X(d##4) X(d##5) X(d##6) X(d##7) X(d##8) X(d##9)
#define HUNDRED(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) \
    TEN(X, 1) TEN(X, 2) TEN(X, 3) TEN(X, 4) TEN(X, 5) TEN(X, 6) TEN(X, 7) TEN(X, 8) TEN(X, 9)
HUNDRED(B)
HUNDRED(A)
#define LIST_B(k) wk_b##k,
#define LIST_A(k) wk_a##k,
static uint64_t (*const a_fns[100])(uint64_t, uint64_t) = { HUNDRED(LIST_A) };
static uint64_t (*const b_init[100])(uint64_t) = { HUNDRED(LIST_B) };

NOINLINE uint64_t wk_frame(uint64_t state, uint64_t i)
{
    return a_fns[i % 100](state, (i / 100) % 100);
}

int main(int argc, char **argv)
{
    uint64_t frames = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    for (int k = 0; k < 100; k++)
        b_fns[k] = b_init[k];
    uint64_t state = 1;
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < frames; i++)
        state = wk_frame(state, i);
    uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    bench_report(w1 - w0, c1 - c0, 3 * frames, frames, state);
    printf("ready\n");
    fflush(stdout);
    char buf[64];
    while (fread(buf, 1, sizeof buf, stdin) > 0)
        ;
    return 0;
}
