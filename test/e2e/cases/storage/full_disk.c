// PIANO_FNS: frame,leaf
// CFLAGS: -pthread
// ENV: PIANO_FRAMES=all
// Frames on a disk that fills up (the check runs this on a 2 MiB tmpfs): the
// program's output and status are its own, piano says so in one line, the
// run's figures are stored, and every frame is either stored or counted as
// dropped, on both threads.
#include <pthread.h>
#include <stdio.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
static void *second(void *arg) {
    (void)arg;
    for (int i = 0; i < 330000; i++) frame(i);
    return NULL;
}
int main(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, second, NULL) != 0) return 1;
    for (int i = 0; i < 330000; i++) frame(i);
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
