// CFLAGS: -pthread
// ENV: PIANO_HEAP=1
// heap in use under load: 200,000 blocks live at once (the owner map's shards
// grow several times), half freed in a scattered order (deletions amid
// collisions); then 4 threads allocating at once while each frees the blocks
// its neighbour made. The figures at the end do not depend on the order.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#define MANY 200000
#define PER_THREAD 20000
#define THREADS 4

static void **many;
static void *blocks[THREADS][PER_THREAD];
static pthread_barrier_t made, freed;

__attribute__((noinline)) void make_many(void)
{
    many = calloc(MANY, sizeof *many);   /* 1.6 MB, kept: one object */
    for (int i = 0; i < MANY; i++)
        many[i] = malloc(24);
}

__attribute__((noinline)) void free_every_other(void)
{
    for (long i = 0; i < MANY; i += 2)
        free(many[(i * 7919) % MANY]);   /* 7919 is prime: the even indices, scattered */
}

__attribute__((noinline)) void thread_make(int t)
{
    for (int i = 0; i < PER_THREAD; i++)
        blocks[t][i] = malloc(16 + (size_t)(i % 5) * 16);   /* 16..80 bytes: 48 on average */
}

__attribute__((noinline)) void thread_free_neighbours(int t)
{
    int n = (t + 1) % THREADS;
    for (int i = 0; i < PER_THREAD; i += 2)   /* half of them */
        free(blocks[n][i]);
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    thread_make(t);
    pthread_barrier_wait(&made);
    thread_free_neighbours(t);
    pthread_barrier_wait(&freed);
    return NULL;
}

int main(void)
{
    make_many();
    free_every_other();
    pthread_barrier_init(&made, NULL, THREADS);
    pthread_barrier_init(&freed, NULL, THREADS);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
            return 1;
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    return 0;
}
