// PIANO_FNS: frame,work,spin
// CFLAGS: -pthread
// main returns while 4 detached threads are inside instrumented calls, making
// frames as fast as they can (their buffers fill and are stored while the
// run is being stored at exit): the program's status and its buffered stdout
// are its own, the frames completed before the store are stored, once.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
static volatile unsigned sink;
static atomic_int started;
void work(int i) { sink += (unsigned)i; }
void spin(int i) { sink ^= (unsigned)i; }
void frame(int i) { work(i); spin(i); work(i + 1); }
static void *loop(void *arg) {
    (void)arg;
    frame(0);
    atomic_fetch_add(&started, 1);
    for (int i = 1;; i++) {
        frame(i);
        if (i % 4096 == 0) {   /* leave the exiting thread some of the 2 CPUs a test may have */
            struct timespec ts = { 0, 200000 };
            nanosleep(&ts, 0);
        }
    }
    return NULL;
}
int main(void) {
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_create(&t, &a, loop, NULL);
    }
    while (atomic_load(&started) < 4) sched_yield();
    struct timespec ts = { 0, 5000000 };
    nanosleep(&ts, 0);
    for (int i = 0; i < 2000; i++) printf("line %d\n", i);   /* buffered: lost if the exit crashes */
    return 0;
}
