/* (b) a frame loop with allocation: F frames (argv[1], default 1,000,000),
 * each wk_frame() = malloc + wk_parse + wk_resolve + wk_update + free.
 * Instrumented: the four wk_ functions, so each frame touches 4 functions.
 * calls = 4*F, frames = F. */
#include "bench_common.h"
#include <string.h>

NOINLINE uint64_t wk_parse(unsigned char *buf, size_t n, uint64_t seed)
{
    uint64_t h = seed;
    for (size_t i = 0; i < n; i += 8) {
        buf[i] = (unsigned char)(h >> 7);
        h = h * 6364136223846793005ull + 1442695040888963407ull;
    }
    return h;
}

NOINLINE uint64_t wk_resolve(const unsigned char *buf, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i += 8)
        s += buf[i];
    return s;
}

NOINLINE uint64_t wk_update(uint64_t state, uint64_t v)
{
    uint64_t r = state ^ (v * 0x9e3779b97f4a7c15ull);
    OPAQUE(r);
    return r;
}

NOINLINE uint64_t wk_frame(uint64_t state, uint64_t i)
{
    size_t n = 64 + (i & 127);
    unsigned char *buf = malloc(n);
    if (!buf)
        abort();
    uint64_t h = wk_parse(buf, n, state + i);
    uint64_t s = wk_resolve(buf, n);
    state = wk_update(state, h + s);
    free(buf);
    return state;
}

int main(int argc, char **argv)
{
    uint64_t frames = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    uint64_t state = 1;
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < frames; i++)
        state = wk_frame(state, i);
    uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    bench_report(w1 - w0, c1 - c0, 4 * frames, frames, state);
    return 0;
}
