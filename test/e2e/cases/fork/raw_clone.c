// PIANO_FNS: frame,leaf
// A child made by a raw clone() without CLONE_VM (no fork handlers run)
// exits through exit(): it must not store, or delete, its parent's live run.
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
static int child(void *arg) {
    (void)arg;
    exit(0);
}
int main(void) {
    for (int i = 0; i < 500; i++) frame(i);
    static char stack[1 << 16];
    int pid = clone(child, stack + sizeof stack, SIGCHLD, NULL);
    if (pid < 0) return 2;
    int st;
    waitpid(pid, &st, 0);
    for (int i = 0; i < 500; i++) frame(i);
    printf("done %d\n", WEXITSTATUS(st));
    return 0;
}
