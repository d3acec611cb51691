/* A parent that forks and execs /bin/true N times (argv[1], default 200),
 * from an instrumented function: the median wall time from the call of fork
 * to its return in the parent (what a parent that spawns processes, a shell
 * or make, waits per child). Not a row of bench/run.sh; run by hand
 * (bench/README.md, "A fork"). Instrumented: spawn, work. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static volatile unsigned sink;

void work(int i) { sink += (unsigned)i; }

double spawn(void)
{
    double t0 = now_s();
    pid_t p = fork();
    if (p == 0) {
        execl("/bin/true", "true", (char *)0);
        _exit(127);
    }
    double t1 = now_s();
    if (p > 0)
        waitpid(p, 0, 0);
    return t1 - t0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1 || n > 100000)
        n = 200;
    for (int i = 0; i < 100; i++)
        work(i);
    double *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return 1;
    for (int i = 0; i < n; i++)
        v[i] = spawn();
    qsort(v, (size_t)n, sizeof *v, by_value);
    printf("fork returned in the parent after: median %.1f us\n", v[n / 2] * 1e6);
    free(v);
    return 0;
}
