// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// The program's end with snapshots on, case 2: main ends by pthread_exit;
// its worker (seen by piano: it calls work) writes a line with stdio (stdout
// is a file: buffered until the exit) and returns, the last thread. The C
// library runs exit(0) on that thread, which flushes stdout: the lines must
// be in the output, the exit run on the worker (the snapshot thread kept
// the process alive, then ended it itself: from a descriptor table of its
// own, the program's stdout was gone by then, and the lines lost).
#include <pthread.h>
#include "../lib/exit_thread.h"
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static void *worker(void *arg) {
    (void)arg;
    exit_thread_name("worker");
    int i = 1;
    do work(i++); while (!main_gone_now());
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
    pthread_create(&t, NULL, worker, NULL);
    pthread_exit(NULL);
}
