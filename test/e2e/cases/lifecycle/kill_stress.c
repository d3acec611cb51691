// PIANO_FNS: frame,work,tick,step
// CFLAGS: -pthread
// ENV: PIANO_FRAMES=all
// Two threads make frames of 8 functions (one 300,000 of them: a stored chunk
// file and the buffer; the other 10,000), then the program exits. The check runs it 30
// times, SIGKILLing each at a random moment (making frames, storing a chunk,
// storing its run at exit, removing its spool) while piano-db commands run
// in a loop, and checks that every run is stored exactly once, whole.
#include <pthread.h>
#include <stdio.h>
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 90; k++) sink += (unsigned)(i + k); }   /* ~0.5 us: 0.2 s of frames */
void tick(int i) { sink ^= (unsigned)i; }
#define STEP(n) void step##n(int i) { sink += (unsigned)i * n; }
STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6)
void frame(int i) { work(i); tick(i); step1(i); step2(i); step3(i); step4(i); step5(i); step6(i); }
static void *other(void *arg) {
    (void)arg;
    for (int i = 0; i < 10000; i++) frame(i);
    return NULL;
}
int main(void) {
    frame(0);
    printf("started\n");
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    for (int i = 1; i < 300000; i++) frame(i);
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
