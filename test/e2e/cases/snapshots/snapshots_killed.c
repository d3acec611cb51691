// PIANO_FNS: work
// ENV: PIANO_INTERVAL=0.1
// EXIT: 137
// SIGKILL after 0.6 s: the run is recovered with the snapshots it took.
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
int main(void) {
    double t0 = now();
    int i = 0;
    while (now() - t0 < 0.6) work(i++);
    printf("before\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
