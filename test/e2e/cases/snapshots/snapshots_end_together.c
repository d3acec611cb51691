// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// The program's end with snapshots on, case 4: main ends by pthread_exit and
// its two workers, the last threads, end together (a barrier, then return).
// One of them runs the C library's exit(0), stdout flushed (each saw the
// other still running at its end: the snapshot thread kept the process
// alive, then ended it itself from its own descriptor table, lines lost).
// Twenty rounds, each a forked child (its own run), for the ends to meet.
#include <pthread.h>
#include <sys/wait.h>
#include "../lib/exit_thread.h"
static volatile unsigned sink;
static pthread_barrier_t b;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static void *worker(void *arg) {
    exit_thread_name("worker");
    int i = 1;
    do work(i++); while (!main_gone_now());
    printf("worker %d done\n", (int)(long)arg);
    pthread_barrier_wait(&b);
    return NULL;
}
static void round_(void) {
    exit_thread_watch();
    exit_thread_name("main");
    work(0);
    if (!snaps_written())
        exit(1);
    pthread_barrier_init(&b, NULL, 2);
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_exit(NULL);
}
int main(void) {
    for (int r = 0; r < 20; r++) {
        fflush(stdout);
        pid_t c = fork();
        if (c == 0)
            round_();
        int st = -1;
        waitpid(c, &st, 0);
        printf("round %d: exit status %d\n", r, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
    return 0;
}
