// PIANO_FNS: outer,burn,nap
// ENV: PIANO_CPU=1 PIANO_INTERVAL=0.1
// Snapshots' CPU of calls in flight (issue 25 item 9): one call of burn spins
// for 0.6 s of CPU while snapshots are taken every 0.1 s. Its cumulative CPU
// grows from snapshot to snapshot while it runs (it showed 0 until the call
// returned, then all of it in one window), never goes down, and no window
// holds more CPU than its length. Then one call of nap sleeps 0.4 s: no
// window shows its sleep as CPU.
#include <stdio.h>
#include <time.h>
static long long ns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static volatile unsigned sink;
void burn(void) {
    long long c0 = ns(CLOCK_THREAD_CPUTIME_ID);
    while (ns(CLOCK_THREAD_CPUTIME_ID) - c0 < 600000000LL)
        for (unsigned i = 0; i < 10000; i++) sink += i;
}
void nap(void) { struct timespec t = { 0, 400000000 }; while (nanosleep(&t, &t) != 0) ; }
void outer(void) { burn(); nap(); }
int main(void) {
    outer();
    puts("done");
    return 0;
}
