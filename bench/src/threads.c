/* (d) T threads (argv[1]) each computing fib(N) (argv[2], default 31).
 * Instrumented: fib. calls = T * (2*fib(N+1) - 1). cpu_ns is the sum of the
 * threads' own CPU time (CLOCK_THREAD_CPUTIME_ID) over their work, so per-call
 * cost per thread-CPU-second is comparable between 1 and 8 threads even on 2 cores. */
#include "bench_common.h"
#include <pthread.h>

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

struct job {
    pthread_t th;
    uint32_t n;
    uint64_t result, cpu_ns;
};

static pthread_barrier_t start;

static NOINST void *run(void *p)
{
    struct job *j = p;
    pthread_barrier_wait(&start);
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    j->result = wk_fib(j->n);
    j->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

int main(int argc, char **argv)
{
    int t = argc > 1 ? atoi(argv[1]) : 8;
    uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 31;
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
        if (jobs[i].result != fib_iter(n)) {
            fprintf(stderr, "threads: wrong result\n");
            return 1;
        }
    }
    uint64_t w1 = clock_ns(CLOCK_MONOTONIC);
    bench_report(w1 - w0, cpu, (uint64_t)t * (2 * fib_iter(n + 1) - 1), (uint64_t)t, jobs[0].result);
    return 0;
}
