// PIANO_FNS: frame,work
// CFLAGS: -pthread
// ENV: PIANO_FRAMES=all
// Frames on a disk with little room (the check runs this again with the
// database on a 64 MiB tmpfs): each thread keeps its state and frame buffer in
// anonymous memory and writes them out; a full buffer mid-run, the rest when
// the thread ends (the second thread) or the process exits (main).
#include <pthread.h>
#include <stdio.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
void frame(int i) { work(i); }
static void *second(void *arg) {
    (void)arg;
    for (int i = 0; i < 60000; i++) frame(i);
    return NULL;
}
int main(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, second, NULL) != 0) return 1;
    pthread_join(t, NULL);
    for (int i = 0; i < 60000; i++) frame(i);
    printf("done\n");
    return 0;
}
