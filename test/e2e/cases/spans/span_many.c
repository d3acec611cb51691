// PIANO_FNS: work
// CFLAGS: -pthread
// Thousands of concurrent spans: 5,000 open at once across 4 threads, each
// entered and exited twice, then closed by another thread than the opener.
#include <piano/span.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define PER 1250
static piano_span *spans[THREADS][PER];
static pthread_barrier_t all_open, all_used;

__attribute__((noinline)) void work(void)
{
    volatile int x = 0;
    for (int i = 0; i < 100; i++)
        x += i;
}
static void *run(void *arg)
{
    long me = (long)arg;
    for (int i = 0; i < PER; i++)
        spans[me][i] = piano_span_open(i % 2 ? "odd" : "even");
    pthread_barrier_wait(&all_open);   /* 5,000 open */
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < PER; i++) {
            piano_span_enter(spans[me][i]);
            work();
            piano_span_exit(spans[me][i]);
        }
    pthread_barrier_wait(&all_used);
    long other = (me + 1) % THREADS;
    for (int i = 0; i < PER; i++)
        piano_span_close(spans[other][i]);
    return NULL;
}
int main(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&all_open, NULL, THREADS);
    pthread_barrier_init(&all_used, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, run, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    /* and again: the objects are reused */
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, run, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    puts("done");
    return 0;
}
