// CFLAGS: -pthread
// PIANO_FNS: =leaf,twig,worker,nest
// A spare run folder's states keep slot 0's pages in memory for the next run
// (rt/slots.c, warm slot 0): that run's first thread zeroes them before its
// header is written, and a reader skips the slot until then. ./prog N T D:
// leaf called N times (default 7) at nesting depth D (default 1, through nest)
// on the main thread, and T - 1 threads (default 1) each calling twig 5 times;
// each leaf call allocates 24 bytes. ./prog kill: killed before any
// instrumented call.
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
static volatile unsigned sink;
static char *volatile kept;   /* the allocation escapes: not elided at -O2 */
void leaf(int i) {
    kept = malloc(24);
    sink += (unsigned)i;
    free(kept);
}
void nest(int d, int i) {
    if (d > 1) nest(d - 1, i); else leaf(i);
}
void twig(int i) { sink ^= (unsigned)i; }
void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) twig(i);
    return NULL;
}
int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "kill"))
        raise(SIGKILL);
    int n = argc > 1 ? atoi(argv[1]) : 7, t = argc > 2 ? atoi(argv[2]) : 1, d = argc > 3 ? atoi(argv[3]) : 1;
    for (int i = 0; i < n; i++) {
        if (d > 1) nest(d - 1, i); else leaf(i);
    }
    for (int i = 1; i < t; i++) {
        pthread_t th;
        pthread_create(&th, NULL, worker, NULL);
        pthread_join(th, NULL);
    }
    return 0;
}
