// PIANO_FNS: work
// CFLAGS: -pthread
// ENV: PIANO_CPU=1 PIANO_TEST_NO_PERF=1
// CPU time asked for where perf_event_open is refused (PIANO_TEST_NO_PERF
// makes the runtime take it so): CPU is stored as not measured (NULL, shown
// null and '-'), never as a wrong number, and nothing is said per thread.
// The check runs the program again without PIANO_CPU and with PIANO_CPU=0.
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static volatile unsigned sink;
void work(void) { for (int i = 0; i < 100000; i++) sink += (unsigned)i; struct timespec t = { 0, 100000 }; nanosleep(&t, 0); }
static void *thread(void *a) { (void)a; for (int i = 0; i < 10; i++) work(); return NULL; }
int main(void) {
    pthread_t t[3];
    for (int k = 0; k < 3; k++) pthread_create(&t[k], NULL, thread, NULL);
    thread(NULL);
    for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
    puts("done");
    return 0;
}
