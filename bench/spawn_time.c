/*
 * spawn_time.c - start-to-reaped wall time of short processes, variants run
 * in turn (row (f) measured runtime against runtime on one binary).
 *
 *   cc -O2 -o spawn_time bench/spawn_time.c
 *   ./spawn_time ROUNDS DBDIR PLAIN PIANO VARIANT...
 *
 * PLAIN and PIANO: the uninstrumented and the instrumented program. A VARIANT
 * is `plain` (runs PLAIN) or `lib:DIR` (runs PIANO with LD_LIBRARY_PATH=DIR,
 * storing into DBDIR/vN.db, one database per variant, kept across rounds as a
 * test suite's runs share one). Prints each variant's mean and median ms.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double run_once(char *prog, char **envp)
{
    char *av[] = { prog, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid;
    int st = 0;
    if (posix_spawn(&pid, prog, &fa, NULL, av, envp) != 0 || waitpid(pid, &st, 0) != pid || st != 0) {
        fprintf(stderr, "spawn_time: %s failed (status %d)\n", prog, st);
        exit(1);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    posix_spawn_file_actions_destroy(&fa);
    return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: spawn_time ROUNDS DBDIR PLAIN PIANO VARIANT...\n");
        return 2;
    }
    int rounds = atoi(argv[1]), nv = argc - 5;
    double *t = calloc((size_t)rounds * (size_t)nv, sizeof *t);
    if (rounds < 1 || !t)
        return 2;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < nv; v++) {
            const char *var = argv[5 + v];
            char lib[4096], db[4096];
            char *envp[3] = { NULL, NULL, NULL };
            char *prog = argv[3];
            if (strncmp(var, "lib:", 4) == 0) {
                prog = argv[4];
                snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", var + 4);
                snprintf(db, sizeof db, "PIANO_DB=%s/v%d.db", argv[2], v);
                envp[0] = lib;
                envp[1] = db;
            }
            t[v * rounds + r] = run_once(prog, envp);
        }
    for (int v = 0; v < nv; v++) {
        double *x = t + v * rounds, sum = 0;
        for (int r = 0; r < rounds; r++)
            sum += x[r];
        qsort(x, (size_t)rounds, sizeof *x, by_value);
        printf("%-50s mean %.3f ms  median %.3f ms  (p25 %.3f, p75 %.3f; %d runs)\n", argv[5 + v], sum / rounds,
               x[rounds / 2], x[rounds / 4], x[3 * rounds / 4], rounds);
    }
    free(t);
    return 0;
}
