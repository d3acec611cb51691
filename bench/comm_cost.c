/*
 * comm_cost.c - what a live read pays per thread to show the thread's name as it is now
 * (store/import.c, live_thread_name: openat of TID/comm in the process's task folder, a read,
 * a close). Starts N sleeping threads, then times R rounds of reading every thread's name of
 * its own process that way, and prints the CPU time (user + system) per name.
 *   cc -O2 -pthread bench/comm_cost.c -o /tmp/comm_cost && /tmp/comm_cost 1000 20
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static double cpu_us(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 1000, rounds = argc > 2 ? atoi(argv[2]) : 20;
    for (int i = 0; i < want; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, sleeper, NULL) != 0) {
            fprintf(stderr, "comm_cost: cannot start thread %d\n", i);
            return 1;
        }
    }
    static unsigned tids[65536];
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d)) && n < 65536;)
        if (e->d_name[0] != '.')
            tids[n++] = (unsigned)atoi(e->d_name);
    if (d)
        closedir(d);
    char task[48];
    snprintf(task, sizeof task, "/proc/%d/task", (int)getpid());
    double start = cpu_us();
    for (int r = 0; r < rounds; r++) {
        int task_fd = open(task, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; i < n; i++) {
            char path[32], name[32];
            snprintf(path, sizeof path, "%u/comm", tids[i]);
            int fd = openat(task_fd, path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                if (read(fd, name, sizeof name) < 0)
                    return 1;
                close(fd);
            }
        }
        close(task_fd);
    }
    printf("%d threads x %d rounds: %.2f us CPU a thread's name\n", n, rounds,
           (cpu_us() - start) / ((double)n * rounds));
    return 0;
}
