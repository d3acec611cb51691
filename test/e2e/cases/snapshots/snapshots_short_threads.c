// PIANO_FNS: work
// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// 2,000 short threads, made one at a time by each of two spawners, with
// snapshots every 0.01 s: their slots of the spool are reused (snapshots used
// to stop that: a slot per thread, 16 s instead of 1.9 s for 5,000 threads)
// and each snapshot still counts every ended thread's calls exactly once:
// figures never go down, and a snapshot taken after the last thread ended
// holds the run's totals. The program prints how many slots its spool's
// states file has room for (one per thread when none is reused).
#define _GNU_SOURCE
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../lib/spool_file.h"
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
static void *shortt(void *arg) {
    (void)arg;
    for (int i = 0; i < 10; i++)
        work(i);
    return NULL;
}
static void *spawner(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, shortt, NULL) != 0 || pthread_join(t, NULL) != 0)
            exit(3);
    }
    return NULL;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, spawner, NULL);
    pthread_create(&b, NULL, spawner, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    /* two more snapshots, both after the last thread ended (20 s at most) */
    off_t s0 = spool_file_size("snaps"), grew = 0;
    for (int i = 0; i < 4000 && grew < 2; i++) {
        struct timespec d = { 0, 5000000 };
        nanosleep(&d, NULL);
        off_t s = spool_file_size("snaps");
        if (s > s0)
            grew++, s0 = s;
    }
    off_t states = spool_file_size("states");
    /* a slot is 144 MiB of the file (sparse) */
    printf("slots %s\n", states >= 0 && states < 200LL * (144 << 20) ? "reused" : "one per thread");
    printf("done\n");
    return 0;
}
