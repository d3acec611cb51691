// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// The program's end with snapshots on, case 6: a program that closes every
// descriptor but its standard ones (closefrom(3) on main, close_range(3,
// ~0U) on its worker) and opens its log again, in a loop, while snapshots
// are taken, and lists its descriptors each time: it sees its own only,
// never one of piano's (the snapshot thread's are in a table of their own),
// and its log has every line. Then main ends by pthread_exit and the worker
// is the last thread: exit(0) on it, stdout flushed.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include "../lib/exit_thread.h"
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
/* Descriptors open but 0, 1, 2, `own` and the listing's. */
static int others(int own) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd > 2 && fd != own && fd != dirfd(d))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}
/* For 0.3 s: close all but 0-2, open the log, a line, list descriptors. */
static int churn(const char *who, int use_close_range) {
    int seen = 0, lines = 0;
    for (double t0 = now(); now() - t0 < 0.3; lines++) {
        if (use_close_range)
            syscall(SYS_close_range, 3u, ~0u, 0u);
        else
            closefrom(3);
        int fd = open("log", O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd < 0 || dprintf(fd, "%s %d\n", who, lines) <= 0)
            printf("%s: log lost\n", who);
        work(lines);
        seen += others(fd);
    }
    syscall(SYS_close_range, 3u, ~0u, 0u);
    printf("%s: %s\n", who, seen ? "saw descriptors not its own" : "saw its own descriptors only");
    return lines;
}
static void *worker(void *arg) {
    (void)arg;
    exit_thread_name("worker");
    main_gone();
    churn("worker", 1);
    return NULL;
}
int main(void) {
    exit_thread_watch();
    exit_thread_name("main");
    work(0);
    if (!snaps_written())
        return 1;
    churn("main", 0);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_exit(NULL);
}
