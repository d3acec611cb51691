// PIANO_FNS: grow,shrink,thread_grow
// ENV: PIANO_HEAP=1 PIANO_INTERVAL=0.1
// CFLAGS: -pthread
// Heap in use over time: the heap grows, then shrinks, holding still 0.3 s
// at each known size, so snapshots (every 0.1 s) see each plateau. grow
// owns 100 x 1000 bytes, then 300 x 1000, then 50 x 1000 (shrink frees 250
// of them) to the end. thread_grow's 10 x 500 bytes are made on a thread
// that ends, and freed by main 0.3 s later: its state's figures change after
// its end.
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
static void *blocks[300], *tblocks[10];
static int nblocks;
void grow(int n) { for (int i = 0; i < n; i++) blocks[nblocks++] = malloc(1000); }
void shrink(int n) { while (n-- > 0) free(blocks[--nblocks]); }
void thread_grow(void) { for (int i = 0; i < 10; i++) tblocks[i] = malloc(500); }
static void *worker(void *arg) { (void)arg; thread_grow(); return NULL; }
static void hold(void) { struct timespec t = {0, 300000000}; nanosleep(&t, NULL); }
int main(void) {
    pthread_t t;
    grow(100);
    hold();
    grow(200);
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    hold();
    for (int i = 0; i < 10; i++) free(tblocks[i]);
    hold();
    shrink(250);
    hold();
    return 0;
}
