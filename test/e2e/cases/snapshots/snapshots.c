// PIANO_FNS: phase_one,phase_two,quick
// ENV: PIANO_INTERVAL=0.2
// CFLAGS: -pthread
// Snapshots over time: 1.5 s in two phases, each calling its own function;
// every 0.2 s the run keeps a snapshot. Phase one's figures grow, then stay
// flat while phase two's grow. The program also names the snapshot thread it
// sees (piano-snap) and its blocked signals. `quick` returns at once: with a
// long interval the exit must not wait for it; `long` runs 3 s, read live;
// `pthread_exit`: main ends by pthread_exit, a worker runs 0.3 s more: the
// process must end when the worker does, not live on in the snapshot thread.
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
void phase_one(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
void phase_two(int i) { for (int k = 0; k < 100; k++) sink ^= (unsigned)(i + k); }
void quick(void) { sink++; }
/* Prints "thread NAME SigBlk" for each thread of the process but the first. */
static void threads(void) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int first = 1;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], line[256], name[64] = "", blk[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f)) {
            sscanf(line, "Name: %63s", name);
            sscanf(line, "SigBlk: %63s", blk);
        }
        if (f)
            fclose(f);
        if (first && strcmp(name, "piano-snap") != 0) {
            first = 0;   /* the main thread */
            continue;
        }
        printf("thread %s %s\n", name, blk);
    }
    if (d)
        closedir(d);
}
static void *worker(void *arg) {
    (void)arg;
    double t0 = now();
    int i = 0;
    while (now() - t0 < 0.3) phase_one(i++);
    return NULL;
}
int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "pthread_exit")) {
        pthread_t t;
        quick();
        pthread_create(&t, NULL, worker, NULL);
        pthread_exit(NULL);
    }
    /* long: read while live, until the check makes ./stop (at most 30 s) */
    int live = argc > 1 && !strcmp(argv[1], "long");
    double end = live ? 30.0 : 1.5;
    if (argc > 1 && !strcmp(argv[1], "quick")) {
        quick();
        threads();
        return 0;
    }
    double t0 = now();
    int i = 0;
    while (now() - t0 < 0.7) phase_one(i++);
    threads();
    while (now() - t0 < end && (!live || i % 1024 || access("stop", F_OK) != 0)) phase_two(i++);
    printf("done\n");
    return 0;
}
