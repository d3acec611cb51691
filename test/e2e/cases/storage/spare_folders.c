// CFLAGS: -pthread
// PIANO_FNS: =leaf,twig,worker
// A stored run's spool folder is kept as a spare (.spare<N>) that the next
// run's start takes and empties (spool.h): each run stored exactly once with
// its own counts, whether it took a spare or not, and taken by one start
// only. ./prog N T: leaf called N times (default 7) on the main thread, and
// T - 1 threads (default 1) each calling twig 5 times.
#include <pthread.h>
#include <stdlib.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void twig(int i) { sink ^= (unsigned)i; }
void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) twig(i);
    return NULL;
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 7, t = argc > 2 ? atoi(argv[2]) : 2;
    for (int i = 0; i < n; i++) leaf(i);
    for (int i = 1; i < t; i++) {
        pthread_t th;
        pthread_create(&th, NULL, worker, NULL);
        pthread_join(th, NULL);
    }
    return 0;
}
