// PIANO_FNS: work
// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// The program's end with snapshots on, case 3: main ends by pthread_exit
// and its worker, the last thread, is one piano never saw start: it calls
// no function piano records, and no piano code runs at its end. Its end is
// still the process's: the C library's exit(0) on it, stdout flushed (the
// snapshot thread kept the process alive, and ended it up to 0.1 s later
// itself, from its own descriptor table: the lines were lost).
#include <pthread.h>
#include "../lib/exit_thread.h"
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static void *unseen(void *arg) {
    (void)arg;
    exit_thread_name("worker");
    if (!main_gone())
        printf("main still running after 20 s\n");
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
    printf("main\n");
    pthread_create(&t, NULL, unseen, NULL);
    pthread_exit(NULL);
}
