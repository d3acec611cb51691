// CFLAGS: -pthread
// ENV: PIANO_HEAP=1
// heap in use (PIANO_HEAP=1): each allocation belongs to the function
// innermost when it was made, whoever frees it; exact figures per function,
// the bytes each held at the run's heap peak, and the run's peak.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

void *volatile sink[128];   /* volatile: -O2 must not drop a malloc/free pair */
static void *kept[100], *big[16], *from_thread[10], *leaked_by_thread[3];

__attribute__((noinline)) void keep_100(void)
{
    for (int i = 0; i < 100; i++)
        sink[0] = kept[i] = malloc(1000);
}

__attribute__((noinline)) void churn_64(void)
{
    for (int i = 0; i < 1000; i++) {
        sink[1] = malloc(64);
        free(sink[1]);
    }
}

__attribute__((noinline)) void grow(void)
{
    void *p = NULL;
    for (size_t n = 1024; n <= 65536; n *= 2)
        sink[2] = p = realloc(p, n);
}

__attribute__((noinline)) void aligned_keep(void)
{
    void *p;
    if (posix_memalign(&p, 64, 200) == 0)
        sink[3] = p;
    sink[4] = aligned_alloc(128, 256);
    if (posix_memalign(&p, 256, 512) == 0)   /* freed: not in use */
        free(p);
}

__attribute__((noinline)) void thread_alloc(void)
{
    for (int i = 0; i < 10; i++)
        sink[5] = from_thread[i] = malloc(500);
    for (int i = 0; i < 3; i++)
        sink[6] = leaked_by_thread[i] = malloc(100);
}

static void *thread_main(void *arg)
{
    thread_alloc();
    return arg;
}

/* Frees, after its thread has ended, what thread_alloc made there. */
__attribute__((noinline)) void cross_free(void)
{
    for (int i = 0; i < 10; i++)
        free(from_thread[i]);
}

__attribute__((noinline)) void big_alloc(void)
{
    for (int i = 0; i < 16; i++)
        sink[7] = big[i] = malloc(1 << 20);
}

__attribute__((noinline)) void big_free(void)
{
    for (int i = 0; i < 16; i++)
        free(big[i]);
}

int main(void)
{
    keep_100();
    churn_64();
    grow();
    aligned_keep();
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    cross_free();
    big_alloc();
    big_free();
    return 0;
}
