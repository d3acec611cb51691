// PIANO_FNS: =work
// exit_title: children that end with _exit or _Exit, as Redis's BGSAVE
// children do, are stored under the title they set (over argv[0], as
// setproctitle does), not their parent's. One child renames itself and
// calls _exit(3), another _Exit(4), a third from a signal handler (_exit(5)
// in SIGUSR1's handler); each called work() first. The parent waits for them
// and prints their exit statuses: piano changes none of them.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../lib/proc_title.h"
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
static void on_usr1(int sig) { (void)sig; _exit(5); }
static pid_t child(const char *title, int how) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0) return pid;
    title_set(title);
    work(how);
    if (how == 0) _exit(3);
    if (how == 1) _Exit(4);
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    return 0;   /* not reached */
}
int main(int argc, char **argv) {
    title_init(argc, argv);
    work(1);
    pid_t kids[3] = {child("saver a", 0), child("saver b", 1), child("saver c", 2)};
    for (int i = 0; i < 3; i++) {
        int st = 0;
        waitpid(kids[i], &st, 0);
        printf("%d ", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    printf("done\n");
    return 0;
}
