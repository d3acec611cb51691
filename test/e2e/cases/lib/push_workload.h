// The program of the push cases (push_follow.c, push_resume.c include it; a
// header, not a case). Run plainly it returns at once; `long` runs phase_one
// for 0.3 s and 200,000 calls at least, then phase_two, allocating and keeping
// one allocation in 64 live (heap in use at the end, with PIANO_HEAP=1), until
// the check makes the file ./stop (once --follow has pushed what it looks at:
// a condition, not a time; after 200,000 calls at least) or 30 s passed.
// PIANO_INTERVAL is set by the check.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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
    /* Each phase makes MIN_CALLS calls at least, whatever the time: on a starved
     * machine a phase timed by the wall clock alone could end with a call or two
     * (phase_one made 1 call in its 0.3 s in 5 runs of 6 at nice 19 beside a busy
     * loop: the first call's registration took them), and its stored CPU 0. */
    enum { MIN_CALLS = 200000 };
    while (now() - t0 < 0.3 || i < MIN_CALLS) phase_one(i++);
    int two = i;
    while (now() - t0 < 30 && (i % 1024 || i - two < MIN_CALLS || access("stop", F_OK) != 0)) phase_two(i++);
    printf("done\n");
    return 0;
}
