// PIANO_FNS: sleeper,napper
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// Calls still in flight at the end, asleep: a thread sleeping in `sleeper`
// when the process exits, and `napper`, which sleeps and then calls exit()
// itself. Neither makes a hook after waking, so only the run's end can read
// their off-CPU time: a daemon's idle threads showed their whole life as CPU.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void nap_ms(long ms) { struct timespec t = { ms / 1000, (ms % 1000) * 1000000 }; nanosleep(&t, 0); }
void sleeper(void) { for (;;) nap_ms(50); }
static void *thread(void *arg) { (void)arg; sleeper(); return NULL; }
void napper(void) {
    nap_ms(300);
    printf("done\n");
    fflush(stdout);
    exit(0);
}
int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, thread, NULL);
    napper();
}
