// PIANO_FNS: step
// CFLAGS: -pthread
// A span opened on main, entered on thread A, then on thread B, closed on B
// (enter and exit pair per thread); a span entered on two threads at once
// (busy counts the time it is entered anywhere); a span entered twice on
// one thread (re-entrancy): one span each, busy within wall.
#include <piano/span.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void nap_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}
__attribute__((noinline)) void step(void)
{
    nap_ms(2);
}
static piano_span *job, *shared;
static pthread_barrier_t both;

static void *first(void *arg)
{
    (void)arg;
    piano_span_enter(job);
    step();
    piano_span_exit(job);
    return NULL;
}
static void *second(void *arg)
{
    (void)arg;
    piano_span_enter(job);
    step();
    step();
    piano_span_exit(job);
    piano_span_close(job);   /* closed on another thread than it was opened on */
    return NULL;
}
static void *together(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&both);
    piano_span_enter(shared);
    step();
    piano_span_exit(shared);
    return NULL;
}
int main(void)
{
    pthread_t t;
    job = piano_span_open("job");
    pthread_create(&t, NULL, first, NULL);
    pthread_join(t, NULL);
    nap_ms(10);   /* idle */
    pthread_create(&t, NULL, second, NULL);
    pthread_join(t, NULL);

    shared = piano_span_open("shared");
    pthread_t a, b;
    pthread_barrier_init(&both, NULL, 2);
    pthread_create(&a, NULL, together, NULL);
    pthread_create(&b, NULL, together, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    piano_span_close(shared);

    piano_span *re = piano_span_open("reentrant");
    piano_span_enter(re);
    piano_span_enter(re);   /* entered twice */
    step();
    piano_span_exit(re);
    step();
    piano_span_exit(re);
    nap_ms(5);
    piano_span_close(re);
    puts("done");
    return 0;
}
