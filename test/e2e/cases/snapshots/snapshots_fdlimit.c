// PIANO_FNS: serve
// ENV: PIANO_INTERVAL=0.01
// A server at `ulimit -n 64` with snapshots: it holds every descriptor but
// one, which it opens and closes like a connection, for 1 s. The snapshot
// thread's "is a thread of the program left?" check then finds no descriptor
// to read the threads with: that is no evidence that none is left, and the
// program must run to its end (piano used to call exit(0) at the first check).
// At the end it closes them: its run is stored.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
void serve(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
int main(void) {
    struct rlimit r = { 64, 64 };
    if (setrlimit(RLIMIT_NOFILE, &r) != 0)
        return 2;
    serve(0);   /* piano and its snapshot thread start */
    int held[64], n = 0;
    while (n < 64 && (held[n] = open("/dev/null", O_RDONLY)) >= 0)
        n++;
    close(held[--n]);   /* the highest: freed as a connection ends */
    double t0 = now();
    unsigned served = 0, refused = 0;
    while (now() - t0 < 1.0) {
        int c = open("/dev/null", O_RDONLY);
        if (c < 0) {
            refused++;   /* the snapshot thread held it a moment: tried again */
            continue;
        }
        for (int i = 0; i < 1000; i++)
            serve(i);
        served++;
        close(c);
        struct timespec d = { 0, 100000 };
        nanosleep(&d, NULL);
    }
    while (n > 0)
        close(held[--n]);   /* shut down: the run can be stored */
    printf("served %s\n", served > 100 ? "many" : "few");
    printf("done\n");
    return 0;
}
