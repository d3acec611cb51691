// PIANO_FNS: =leaf,twig,worker
// CFLAGS: -pthread
// ENV: PIANO_STORE=later
// PIANO_STORE=later runs with piano-db commands between them (spool.h): a run
// that took a spare folder leaves its small states unpacked, piano-db stores
// them and keeps them warm for the next run; a run that found no spare packs.
// ./prog N T: leaf called N times (default 7), each allocating 24 bytes, then
// T threads (default 0) alive at once, each calling twig 5 times.
// ./prog kill: killed before any instrumented call.
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
static volatile unsigned sink;
static char *volatile kept;   /* the allocation escapes: not elided at -O2 */
static pthread_barrier_t all;
void leaf(int i) {
    kept = malloc(24);
    sink += (unsigned)i;
    free(kept);
}
void twig(int i) { sink ^= (unsigned)i; }
void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) twig(i);
    pthread_barrier_wait(&all);   /* every thread's state in use at once */
    return NULL;
}
int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "kill"))
        raise(SIGKILL);
    int n = argc > 1 ? atoi(argv[1]) : 7, t = argc > 2 ? atoi(argv[2]) : 0;
    for (int i = 0; i < n; i++) leaf(i);
    pthread_t *th = calloc((size_t)t + 1, sizeof *th);
    pthread_barrier_init(&all, NULL, (unsigned)t + 1);
    for (int i = 0; i < t; i++) pthread_create(&th[i], NULL, worker, NULL);
    pthread_barrier_wait(&all);
    for (int i = 0; i < t; i++) pthread_join(th[i], NULL);
    free(th);
    return 0;
}
