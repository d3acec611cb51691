// PIANO_FNS: work,child_work
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// A forked child with CPU time measured: the kernel does not copy a perf
// page's mapping into a child, so the address of its parent's pages is free
// there and the child's own spool maps may land on it; piano must not unmap
// it (it did: the child's run header or lock went, its store crashed or its
// run was lost). Threads come and go (their pages free addresses), then 30
// children in turn, each with calls of its own: each exits 0 and its run is
// stored complete, linked to the parent.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int k) { for (int i = 0; i < 2000 * (k + 1); i++) sink += (unsigned)i; }
void child_work(void) { for (int i = 0; i < 20000; i++) sink += (unsigned)i; }
static void *thread(void *arg) { work((int)(long)arg); return NULL; }
int main(void) {
    int bad = 0;
    for (int round = 0; round < 30; round++) {
        pthread_t t[3];
        for (long k = 0; k < 3; k++) pthread_create(&t[k], NULL, thread, (void *)k);
        work(0);
        for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 5; i++) child_work();
            exit(0);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) bad++;
    }
    printf("bad=%d\n", bad);
    return 0;
}
