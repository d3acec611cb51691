// PIANO_FNS: work,session,child_work
// sshd's way after the login: the monitor (root) forks the session child,
// which drops to the user (setgroups, setgid, setuid) and then forks the
// user's command. That grandchild, forked by a process that is no longer
// root, cannot make its run's folder in root's spool: it said
// "piano: cannot create ...; this run is not recorded" into the program's
// stderr (sshd's log). Now it records nothing, silently; the session child's
// run (complete, left in root's spool) and the monitor's are whole.
// Not root: nobody switches (the check skips).
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
int child_work(int n) { for (int i = 0; i < n; i++) work(i); return 3; }
int session(void)
{
    int switched = getuid() == 0 && setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
    for (int i = 0; i < 20; i++) work(i);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0)
        exit(child_work(5));
    int st = 0;
    waitpid(p, &st, 0);
    printf("session %s, command %d\n", switched ? "switched" : "not switched", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
int main(void)
{
    for (int i = 0; i < 10; i++) work(i);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0)
        return session();
    int st = 0;
    waitpid(p, &st, 0);
    printf("monitor %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
