// CFLAGS: -pthread
// A server as redis is one: background threads that each loop in one call
// (bio_worker, as redis' bioProcessBackgroundJobs) and a main loop whose turns
// end (process_events) until one calls exit. No frame completed: report says
// PIANO_FRAME=process_events, a function whose calls end, not bio_worker,
// made more than once (once per thread) but never returned.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static volatile unsigned sink;
static volatile int started;
static int turns;
__attribute__((noinline)) void handle(int i) { sink += (unsigned)i; }
__attribute__((noinline)) void *bio_worker(void *arg) {
    (void)arg;
    __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
    for (;;)
        pause();
    return NULL;
}
__attribute__((noinline)) void process_events(void) {
    for (int i = 0; i < 10; i++) handle(i);
    if (++turns == 300) {
        printf("%u\n", sink);
        exit(0);
    }
}
__attribute__((noinline)) void cycle(void) {
    for (;;) process_events();
}
int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, bio_worker, NULL);
    while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 3)
        usleep(1000);
    cycle();
    return 1;
}
