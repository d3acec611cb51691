// PIANO_FNS: never_called,=forker_main
// a configure script's test program: instrumented, yet no instrumented call
// runs (issue 23). Given an argument, a parent that records nothing forks a
// child that does.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int never_called(int x)
{
    return x * 3 + 1;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        pid_t pid = fork();
        if (pid == 0) {
            printf("%d\n", never_called(argc));
            return 0;
        }
        int st;
        waitpid(pid, &st, 0);
        return 0;
    }
    if (argc > 5)
        printf("%d\n", never_called(argc));
    puts("ok");
    return 0;
}
