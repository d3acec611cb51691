// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// main ends by pthread_exit; its worker writes a line with stdio (stdout is a
// file: buffered until the exit) and returns. The process ends with its last
// thread, and that end flushes stdout: the line must be in the output, with
// the snapshot thread running (it ends the process itself when it finds
// itself alone: from a descriptor table of its own, the program's stdout was
// gone by then, and the line lost).
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
static void *worker(void *arg) {
    (void)arg;
    double t0 = now();
    int i = 0;
    while (now() - t0 < 0.1) work(i++);
    printf("worker done\n");
    return NULL;
}
int main(void) {
    pthread_t t;
    printf("main\n");
    pthread_create(&t, NULL, worker, NULL);
    pthread_exit(NULL);
}
