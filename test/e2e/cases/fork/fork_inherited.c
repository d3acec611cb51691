// PIANO_FNS: f,g,h
// A set of runs counts each call once: f() forks 3 children while in flight;
// each child calls g() twice and exits, so f is in flight in each child's run
// (a report of that run shows it 1*, with no self time), but in a set the
// call is the parent's: --all-runs shows f 1 call, g 6. A child forked
// outside any call, which exits inside its own h(), keeps h's call (1*).
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void g(int i) { sink += (unsigned)i; }
int f(void) {
    for (int k = 0; k < 3; k++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            g(k);
            g(k + 1);
            exit(0);
        }
        int status;
        if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status))
            return 1;
    }
    return 0;
}
void h(void) { exit(0); }
int main(void) {
    if (f())
        return 1;
    pid_t p = fork();
    if (p < 0)
        return 1;
    if (p == 0)
        h();
    int status;
    if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status))
        return 1;
    printf("done\n");
    return 0;
}
