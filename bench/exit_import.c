/*
 * exit_import.c - the exit's import alone, on a kept spool: storing row (b)'s
 * 1M frames (bench/README.md, "Where the storing of frames spends its time")
 * without running the program each time, under perf, strace or callgrind.
 *
 *   PIANO_STORE=later PIANO_FRAMES=all PIANO_DB=/tmp/k.db build/bench/frames.piano 1000000
 *   cp -a /tmp/k.db.spool/<the run's folder> /tmp/keep      # the run, as the exit would store it
 *   cc -O2 bench/exit_import.c -o /tmp/exit_import -ldl
 *   cp -a /tmp/keep /tmp/w/run && /tmp/exit_import build/lib/libpiano_import.so /tmp/w/k.db /tmp/w/run
 *
 * It calls piano_store_exit_import as libpiano_rt.so does at exit (the same
 * connection settings: foreign keys off, the close's checkpoint), which
 * removes the folder once stored: copy it again before each run. Prints the
 * call's wall and process CPU milliseconds.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

static double ms(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: exit_import LIBPIANO_IMPORT.so DB SPOOL_RUN_FOLDER\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "exit_import: %s\n", dlerror());
        return 2;
    }
    int (*store)(const char *, const char *, const void *, char *, size_t);
    *(void **)&store = dlsym(h, "piano_store_exit_import");
    if (!store) {
        fprintf(stderr, "exit_import: %s has no piano_store_exit_import\n", argv[1]);
        return 2;
    }
    char err[512] = "";
    struct timespec w0, w1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    int r = store(argv[2], argv[3], NULL, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    printf("stored=%d wall_ms=%.1f cpu_ms=%.1f%s%s\n", r, ms(w0, w1), ms(c0, c1), err[0] ? " " : "", err);
    return r == 1 ? 0 : 1;
}
