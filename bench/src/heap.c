/* (f) heap tracking: T threads (argv[1]) each making N malloc/free pairs
 * (argv[2]) of mixed sizes (16 B to 4 KiB) inside an instrumented function,
 * keeping a window of 64 blocks live, so a free releases a block made 64
 * calls before (as a program's queue or cache does). calls = T * N: one
 * allocation and one free per call. cpu_ns: the threads' own CPU time. */
#include "bench_common.h"
#include <pthread.h>

#define WINDOW 64

NOINLINE void *wk_step(void **window, uint32_t i, uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    size_t size = 16u << (*seed >> 16) % 9;   /* 16 .. 4096 bytes */
    void **slot = &window[i % WINDOW];
    free(*slot);
    *slot = malloc(size);
    OPAQUE(*slot);
    return *slot;
}

struct job {
    pthread_t th;
    uint32_t n;
    uint64_t cpu_ns;
};

static pthread_barrier_t start;

static NOINST void *run(void *p)
{
    struct job *j = p;
    void *window[WINDOW] = {0};
    uint32_t seed = (uint32_t)(uintptr_t)p;
    pthread_barrier_wait(&start);
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint32_t i = 0; i < j->n; i++)
        wk_step(window, i, &seed);
    j->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    for (int i = 0; i < WINDOW; i++)
        free(window[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    int t = argc > 1 ? atoi(argv[1]) : 1;
    uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 2000000;
    if (t < 1 || t > 64)
        return 2;
    struct job jobs[64];
    pthread_barrier_init(&start, NULL, (unsigned)t + 1);
    for (int i = 0; i < t; i++) {
        jobs[i].n = n;
        if (pthread_create(&jobs[i].th, NULL, run, &jobs[i]) != 0)
            return 1;
    }
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC);
    pthread_barrier_wait(&start);
    uint64_t cpu = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(jobs[i].th, NULL);
        cpu += jobs[i].cpu_ns;
    }
    uint64_t w1 = clock_ns(CLOCK_MONOTONIC);
    bench_report(w1 - w0, cpu, (uint64_t)t * n, (uint64_t)t * n, 0);
    return 0;
}
