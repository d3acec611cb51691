// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// The program's end with snapshots on, case 5: a forked child whose last
// thread is a worker (main ended by pthread_exit), then an exec of the
// program whose last thread is a worker too. Each ends by the C library's
// exit(0) on that worker, stdout flushed, each run stored with snapshots.
#include <pthread.h>
#include <sys/wait.h>
#include "../lib/exit_thread.h"
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
static void *worker(void *arg) {
    exit_thread_name(arg);
    int i = 1;
    do work(i++); while (!main_gone_now());
    printf("%s done\n", (const char *)arg);
    return NULL;
}
/* main's end: pthread_exit, a worker named who left. The exec'd program
 * works 0.1 s instead of waiting for its snaps file (the spool holds the
 * run before the exec too, of the same process id: spool_file_size sees two) */
static void end_by_worker(const char *who, int execd) {
    work(0);
    for (double t0 = now(); execd && now() - t0 < 0.1;)
        work(1);
    if (!execd && !snaps_written())
        exit(1);
    pthread_t t;
    pthread_create(&t, NULL, worker, (void *)who);
    pthread_exit(NULL);
}
int main(int argc, char **argv) {
    exit_thread_watch();
    exit_thread_name("main");
    if (argc > 1)
        end_by_worker("exec'd worker", 1);
    work(0);
    if (!snaps_written())
        return 1;
    fflush(stdout);
    pid_t c = fork();
    if (c == 0)
        end_by_worker("child's worker", 0);
    int st = -1;
    waitpid(c, &st, 0);
    printf("child: exit status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    fflush(stdout);
    execl(argv[0], argv[0], "again", (char *)NULL);
    printf("exec failed\n");
    return 1;
}
