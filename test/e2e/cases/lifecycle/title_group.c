// PIANO_FNS: =work
// A daemon's title "PROGRAM: ROLE" (nginx's "nginx: worker process", sshd's,
// postgres's), written over argv[0] the way setproctitle does: runs --group
// command and report --command name the program without the colon ("prog"),
// as the runs of the same program started by hand ("prog -s quit") are named.
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
int main(int argc, char **argv) {
    (void)argc;
    char *end = argv[0] + strlen(argv[0]);   /* "./prog": room for "prog:" and a NUL */
    pid_t pid = fork();
    if (pid == 0) {
        memset(argv[0], 0, (size_t)(end - argv[0]));
        memcpy(argv[0], "prog:", 5);   /* the title "prog:" (a role would follow if there were room) */
        work(1);
        return 0;
    }
    int st = 0;
    waitpid(pid, &st, 0);
    work(2);
    printf("done %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
