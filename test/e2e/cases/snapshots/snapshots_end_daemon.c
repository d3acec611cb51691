// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// The program's end with snapshots on, case 7: a daemon. The program forks,
// the child calls setsid and forks again, and leaves (_exit); the grandchild
// closes every descriptor but a pipe to the first process (close_range),
// opens /dev/null as 0, 1 and 2, writes through a stdio stream on the pipe
// (buffered), ends main by pthread_exit, and its worker is its last thread:
// the C library's exit(0) on it flushes the stream. The first process reads
// the pipe to its end (the daemon's end) and says what it read.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../lib/exit_thread.h"
static volatile unsigned sink;
static FILE *to_parent;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static void *worker(void *arg) {
    (void)arg;
    exit_thread_name("daemon's worker");
    int i = 1;
    do work(i++); while (!main_gone_now());
    fprintf(to_parent, "daemon's worker done\n");
    return NULL;
}
static void daemon_(int w) {
    if (setsid() < 0 || fork() != 0)
        _exit(0);
    syscall(SYS_close_range, 0u, (unsigned)w - 1, 0u);
    syscall(SYS_close_range, (unsigned)w + 1, ~0u, 0u);
    for (int i = 0; i < 3; i++)
        open("/dev/null", O_RDWR);
    to_parent = fdopen(w, "w");
    setvbuf(to_parent, NULL, _IOFBF, 4096);
    exit_thread_to(to_parent);
    work(0);
    if (!snaps_written())
        _exit(1);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_exit(NULL);
}
int main(void) {
    exit_thread_watch();
    exit_thread_name("main");
    work(0);
    int p[2];
    if (pipe(p) != 0)
        return 1;
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        daemon_(p[1]);
    }
    close(p[1]);
    int st = -1;
    waitpid(c, &st, 0);
    printf("child: exit status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    char buf[512];
    ssize_t n, got = 0;
    while (got < (ssize_t)sizeof buf - 1 && (n = read(p[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += n;
    buf[got] = 0;
    printf("daemon said:\n%s", buf);
    return 0;
}
