// PIANO_FNS: grow,shrink,thread_grow
// ENV: PIANO_HEAP=1 PIANO_INTERVAL=0.1
// CFLAGS: -pthread
// Heap in use over time: the heap grows, then shrinks, holding still at each
// known size until two snapshots (every 0.1 s) were written after it (the
// program waits for the spool's snaps file to grow twice, 20 s at most: a
// hold of 0.3 s missed the 50000 plateau once under load), so snapshots see
// each plateau. grow owns 100 x 1000 bytes, then 300 x 1000, then 50 x 1000
// (shrink frees 250 of them) to the end. thread_grow's 10 x 500 bytes are
// made on a thread that ends, and freed by main after two snapshots: its
// state's figures change after its end.
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../lib/spool_file.h"
static void *blocks[300], *tblocks[10];
static int nblocks;
void grow(int n) { for (int i = 0; i < n; i++) blocks[nblocks++] = malloc(1000); }
void shrink(int n) { while (n-- > 0) free(blocks[--nblocks]); }
void thread_grow(void) { for (int i = 0; i < 10; i++) tblocks[i] = malloc(500); }
static void *worker(void *arg) { (void)arg; thread_grow(); return NULL; }
/* Holds the heap still until two snapshots were written after this call:
 * the second was taken after the first was written, so after the change. */
static void hold(void) {
    off_t s0 = spool_file_size("snaps");
    int grew = 0;
    for (int i = 0; i < 4000 && grew < 2; i++) {
        struct timespec t = {0, 5000000};
        nanosleep(&t, NULL);
        off_t s = spool_file_size("snaps");
        if (s > s0)
            grew++, s0 = s;
    }
    if (grew < 2)
        printf("no snapshot in 20 s\n");
}
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
