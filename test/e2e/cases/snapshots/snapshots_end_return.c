// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// EXIT: 3
// The program's end with snapshots on, case 1: main joins its worker and
// returns 3. Its buffered stdout is flushed by the exit, run on main, and the
// status is main's (lib/exit_thread.h says which thread ran the exit).
#include <pthread.h>
#include "../lib/exit_thread.h"
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static void *worker(void *arg) {
    (void)arg;
    exit_thread_name("worker");
    work(1);
    printf("worker done\n");
    return NULL;
}
int main(void) {
    exit_thread_watch();
    exit_thread_name("main");
    work(0);
    if (!snaps_written())
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    printf("main returns\n");
    return 3;
}
