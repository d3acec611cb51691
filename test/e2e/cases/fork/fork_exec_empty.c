// PIANO_FNS: =main,build,spawn,work
// A build tool: main -> build -> spawn forks and the child execs /bin/true at
// once, 50 times; then one child that calls work() before its exec. The 50
// children recorded nothing of their own (only the calls they were forked in)
// and store nothing; the one that worked is stored, linked to its parent.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
int spawn(int busy) {
    pid_t p = fork();
    if (p == 0) {
        for (int i = 0; i < busy; i++) work(i);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
int build(void) {
    int failed = 0;
    for (int i = 0; i < 50; i++) failed += spawn(0) != 0;
    failed += spawn(5) != 0;
    return failed;
}
int main(void) {
    printf("failed: %d\n", build());
    return 0;
}
