// PIANO_FNS: fns_
// SO: lib/fns_a.c lib/fns_b.c lib/fns_c.c
// EXIT: 137
// Four modules (three libraries and the program) register their functions
// before main: their names are written to the spool once, at the first call,
// not once per module (10 system calls each: bench/README.md, issue 23). The
// writes before the first call are read from /proc/self/io. A fork before the
// first call gives the child every name; a kill right after the first calls
// loses none.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
void fns_a(int), fns_b(int), fns_c(int);
static volatile unsigned sink;
void fns_main(int i) { sink += (unsigned)i; }
static long writes(void) {
    char buf[512] = "";
    FILE *f = fopen("/proc/self/io", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    const char *w = strstr(buf, "syscw: ");
    return w ? atol(w + 7) : -1;
}

int main(void) {
    long before = writes();
    pid_t child = fork();
    if (child == 0) {
        fns_a(1);
        fns_b(2);
        return 0;
    }
    int status;
    waitpid(child, &status, 0);
    printf("writes before the first call %ld\nchild %d\n", before, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fflush(stdout);
    fns_main(1);
    fns_a(1);
    fns_b(2);
    fns_c(3);
    kill(getpid(), SIGKILL);
    return 1;
}
