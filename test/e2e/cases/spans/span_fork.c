// PIANO_FNS: work
// fork with open spans: one entered at the fork, one open and not entered.
// The parent's run counts both as it closes them; the child's run counts its
// copies from the fork (their figures before it are the parent's), and a
// span the child opens itself. Nothing is said.
#include <piano/span.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void work(void)
{
    struct timespec t = {0, 2000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}
int main(void)
{
    piano_span *entered = piano_span_open("entered");
    piano_span *waiting = piano_span_open("waiting");
    piano_span_enter(entered);
    work();
    pid_t pid = fork();
    if (pid == 0) {
        work();
        piano_span_exit(entered);
        piano_span_close(entered);
        piano_span_enter(waiting);
        work();
        piano_span_exit(waiting);
        piano_span_close(waiting);
        piano_span *own = piano_span_open("child");
        piano_span_close(own);
        return 0;   /* exit: the child stores its run */
    }
    int st;
    waitpid(pid, &st, 0);
    piano_span_exit(entered);
    piano_span_close(entered);
    piano_span_close(waiting);
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
