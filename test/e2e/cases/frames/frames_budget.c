// PIANO_FNS: frame,work
// CFLAGS: -pthread
// ENV: PIANO_FRAMES=1000
// 100,000 frames, every 1,000th of them over 3,000 times longer than the others
// (100 deliberate spikes of several ms), on one thread, or with an argument T on
// T threads sharing them. The spikes the budget keeps are the longest: the
// deliberate ones must outlast what a loaded machine adds to an ordinary frame
// by preempting it (ms), or 900 such frames would take their places (88 of 100
// kept once with spikes of ~0.1 ms, beside a whole test suite): 900 frames
// preempted 5 ms each would take longer than the run. With PIANO_FRAMES=1000 the run keeps its first 1,000 frames,
// every spike and a sample of the rest; the count and histogram stay exact.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
void work(int n) { for (int i = 0; i < n; i++) sink += (unsigned)i; }
void frame(int i) { work(i % 1000 == 999 ? 5000000 : 1500); }
static int per_thread;
static void *loop(void *arg) {
    (void)arg;
    for (int i = 0; i < per_thread; i++) frame(i);
    return NULL;
}
int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    per_thread = 100000 / threads;
    if (threads == 1) {
        loop(NULL);
    } else {
        pthread_t t[16];
        for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, loop, NULL);
        for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    }
    printf("%u\n", sink);
    return 0;
}
