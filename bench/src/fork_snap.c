/* Snapshots and fork (issue 25, item 11): T threads (argv[1], default 300)
 * each make 462 calling contexts (21 functions, each from the root and from
 * each of the 21), then sleep. Then (1) the main thread forks N times
 * (argv[2], default 40; the child _exits at once) and prints the mean and
 * the median wall time of fork() in the parent; (2) it sleeps S seconds
 * (argv[3], default 5) and prints the CPU the piano-snap thread used
 * meanwhile (/proc/self/task/TID/stat utime+stime), every thread asleep.
 * Run with PIANO_INTERVAL=0.01 for (1) and =1 for (2) (bench/README.md,
 * "Snapshots and fork"). Instrumented: f0..f20 (PIANO_FNS=f). */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned sink;
typedef void fn_t(int);
static fn_t *table[21];
#define F(k) void f##k(int j) { sink += (unsigned)k; if (j >= 0) table[j](-1); }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19) F(20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, done;

static void *worker(void *arg)
{
    (void)arg;
    for (int a = 0; a < 21; a++) {
        table[a](-1);
        for (int b = 0; b < 21; b++)
            table[a](b);
    }
    pthread_mutex_lock(&lock);
    ready++;
    pthread_cond_broadcast(&cond);
    while (!done)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* utime+stime of the thread named piano-snap, in clock ticks; -1 if none. */
static long snap_cpu(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long cpu = -1;
    while (d && (e = readdir(d))) {
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        if (!strstr(buf, "(piano-snap)") || !p)
            continue;
        unsigned long ut, st;
        if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            cpu = (long)(ut + st);
    }
    if (d)
        closedir(d);
    return cpu;
}

int main(int argc, char **argv)
{
    int nt = argc > 1 ? atoi(argv[1]) : 300, nf = argc > 2 ? atoi(argv[2]) : 40;
    double secs = argc > 3 ? atof(argv[3]) : 5;
    fn_t *fns[21] = { f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20 };
    memcpy(table, fns, sizeof fns);
    f0(-1);   /* piano and its snapshot thread start */
    pthread_t *t = calloc((size_t)nt, sizeof *t);
    for (int i = 0; i < nt; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_mutex_lock(&lock);
    while (ready < nt)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    double *ms = calloc((size_t)nf, sizeof *ms), sum = 0;
    for (int i = 0; i < nf; i++) {
        double t0 = now_s();
        pid_t p = fork();
        if (p == 0)
            _exit(0);
        ms[i] = (now_s() - t0) * 1e3;
        sum += ms[i];
        waitpid(p, NULL, 0);
        struct timespec d = { 0, 3000000 };
        nanosleep(&d, NULL);
    }
    qsort(ms, (size_t)nf, sizeof *ms, cmp);
    printf("fork: %d threads, %d forks: mean %.2f ms, median %.2f ms, max %.2f ms\n", nt, nf, sum / nf, ms[nf / 2],
           ms[nf - 1]);
    long c0 = snap_cpu();
    struct timespec d = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
    nanosleep(&d, NULL);
    long c1 = snap_cpu();
    if (c0 >= 0 && c1 >= 0)
        printf("piano-snap CPU while every thread sleeps: %.1f%% of a core (%ld ticks in %.1f s)\n",
               100.0 * (double)(c1 - c0) / sysconf(_SC_CLK_TCK) / secs, c1 - c0, secs);
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < nt; i++)
        pthread_join(t[i], NULL);
    return 0;
}
