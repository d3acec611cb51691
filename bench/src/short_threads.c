/* (e) N short threads (argv[1], default 300), created and joined one at a
 * time, each making one instrumented call: what a thread pool of short tasks
 * pays per new thread. Instrumented: task. calls = N; work_ns is the wall
 * time of the loop (creation, the call, the thread's end, the join), cpu_ns
 * the process's CPU time over it (every thread's). */
#include "bench_common.h"
#include <pthread.h>

static volatile uint64_t sink;

NOINLINE void wk_task(uint64_t i)
{
    sink += i;
}

static NOINST void *run(void *p)
{
    wk_task((uint64_t)(uintptr_t)p);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    if (n < 1)
        return 2;
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, (void *)(uintptr_t)i) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    uint64_t c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    bench_report(w1 - w0, c1 - c0, (uint64_t)n, (uint64_t)n, sink);
    return 0;
}
