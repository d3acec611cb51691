// PIANO_FNS: *
// SO: lib/select_early.c
// CFLAGS: -rdynamic
// Compile once, choose at run time: the binary is built with every function
// (*), and the check runs it again under several run-time PIANO_FNS. alpha and
// beta are also called from .preinit_array, before any constructor: their
// sites register lazily (beta's, unselected, must record nothing). A forked
// child keeps its parent's selection; a child that execs the program again
// with PIANO_FNS=gamma in its own environment gets that one.
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void alpha(void) { sink += 1; }
void beta(void) { sink += 2; }
void gamma_fn(void) { sink += 3; }
static void work(int a, int b, int c) {
    for (int i = 0; i < a; i++) alpha();
    for (int i = 0; i < b; i++) beta();
    for (int i = 0; i < c; i++) gamma_fn();
}
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        work(2, 2, 2);
        return 0;
    }
    work(3, 5, 7);
    pid_t p = fork();
    if (p == 0) {
        alpha();
        exit(0);
    }
    waitpid(p, NULL, 0);
    p = fork();
    if (p == 0) {
        setenv("PIANO_FNS", "gamma", 1);
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(p, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
