// PIANO_FNS: work,release
// CFLAGS: -pthread
// ENV: PIANO_HEAP=1
// Heap in use with short threads whose slots are reused (rt/slots.c
// slot_reuse): 200 threads each allocate two blocks in work() and free one;
// 180 free the other too (nothing of theirs is live: their slots are reused);
// 20 hand it to main (live: their states stay, for the frees to reach). main
// frees 10 of those in release(). Every figure is exact.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
void *volatile sink;
static void *handed[20];
__attribute__((noinline)) void work(int i) {
    void *a = malloc(100), *b = malloc(200);
    sink = a;
    free(a);
    if (i % 10 == 0)
        handed[i / 10] = b;
    else
        free(b);
}
__attribute__((noinline)) void release(void) {
    for (int i = 0; i < 10; i++)
        free(handed[i]);
}
static void *run(void *arg) { work((int)(long)arg); return NULL; }
int main(void) {
    for (long i = 0; i < 200; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, (void *)i) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    release();
    printf("done\n");
    return 0;
}
