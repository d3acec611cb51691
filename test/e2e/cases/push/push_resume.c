// PIANO_FNS: phase_one,phase_two
// push --follow stopped, then the stored run pushed: the windows it had not
// sent, each call received once (push_resume.check). The program is
// push_follow's. Run plainly it returns at
// once; `long` runs 2.4 s in two phases (PIANO_INTERVAL set by the check),
// allocating in phase two, and keeping one allocation in 64 of it live (heap
// in use at the end, with PIANO_HEAP=1).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static volatile unsigned sink;
static char *live[256];
static unsigned nlive;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
void phase_one(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
void phase_two(int i) {
    char *p = malloc(64);
    for (int k = 0; k < 100; k++) sink ^= (unsigned)(i + k);
    p[0] = (char)i;
    sink += (unsigned)p[0];
    if (i % 64 == 0 && nlive < 256)
        live[nlive++] = p;
    else
        free(p);
}
int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "long"))
        return 0;
    double t0 = now();
    int i = 0;
    while (now() - t0 < 1.0) phase_one(i++);
    while (now() - t0 < 2.4) phase_two(i++);
    printf("done\n");
    return 0;
}
