/* Frames as small as they come: F frames (argv[1], default 2,000,000) of one
 * instrumented call, wk_tiny, a few dozen ns of work; frames 50,000,
 * 150,000, ... (every 100,000th from the 50,000th) a thousand times longer.
 * calls = frames = F. For bench/frames_budget.py (the frame budget's cost). */
#include "bench_common.h"

static volatile unsigned sink;

NOINLINE void wk_tiny(uint64_t i)
{
    int n = i % 100000 == 49999 ? 20000 : 20;
    for (int k = 0; k < n; k++)
        sink += (unsigned)k;
}

int main(int argc, char **argv)
{
    uint64_t frames = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < frames; i++)
        wk_tiny(i);
    uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    bench_report(w1 - w0, c1 - c0, frames, frames, sink);
    return 0;
}
