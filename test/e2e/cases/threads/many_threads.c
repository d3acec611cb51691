// PIANO_FNS: task,frame,leaf
// CFLAGS: -pthread
// 200 short threads, created and joined one at a time, each making one
// instrumented call; four of them (every 50th) also make 1,000 frames of
// two calls. Every thread has its slot in the run's one states file: every
// call and every frame is stored, every thread is a row. The check runs it
// again under a file-size limit that leaves room for two slots only: the
// other threads' records are kept in memory and stored all the same.
#include <pthread.h>
#include <stdio.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
void task(int i) { sink ^= (unsigned)i; }
static void *run(void *arg) {
    int i = (int)(long)arg;
    task(i);
    if (i % 50 == 0)
        for (int k = 0; k < 1000; k++) frame(k);
    return NULL;
}
int main(void) {
    for (long i = 0; i < 200; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, (void *)i) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    printf("done\n");
    return 0;
}
