// PIANO_FNS: work,child_work,try_exec
// The exec family ends a run, complete (exec.c): execl in a vfork child
// marks nothing (the run is its parent's, which goes on); execlp in a forked
// child ends the child's run; an execv that fails takes the mark back (errno
// kept) and the run goes on; execle ends it with its environment.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int sink;
static int work(int n) { for (int i = 0; i < n; i++) sink += i; return sink; }
static int child_work(int n) { return work(n) + 1; }
static int try_exec(void)
{
    char *argv[] = { "nothing-here", NULL };
    execv("/nonexistent/nothing-here", argv);
    return errno;
}
int main(void)
{
    for (int i = 0; i < 3; i++)
        work(i);
    int status;
    pid_t v = vfork();
    if (v == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    waitpid(v, &status, 0);
    for (int i = 0; i < 2; i++)
        work(i);
    fflush(stdout);
    pid_t f = fork();
    if (f == 0) {
        child_work(2);
        execlp("true", "true", (char *)NULL);
        _exit(127);
    }
    waitpid(f, &status, 0);
    int e = try_exec();
    work(1);
    printf("%s\n", e == ENOENT ? "ENOENT" : strerror(e));
    fflush(stdout);
    char *env[] = { "GREETING=done", NULL };
    execle("/bin/sh", "sh", "-c", "echo $GREETING", (char *)NULL, env);
    return 1;
}
