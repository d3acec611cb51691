// PIANO_FNS: never_called,=forker_main
// a configure script's test program: instrumented, yet no instrumented call
// runs (issue 23). Given an argument, a parent that records nothing forks a
// child that does; `killed`: both are killed (SIGKILL), the child after its
// call, the parent after its child; `alone`: killed without a child;
// `orphan FILE`: the parent is killed while its child, which recorded, waits
// (at most 20 s) for FILE to exist.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int never_called(int x)
{
    return x * 3 + 1;
}

int main(int argc, char **argv)
{
    int killed = argc > 1 && !strcmp(argv[1], "killed");
    if (argc > 1 && !strcmp(argv[1], "alone"))
        raise(SIGKILL);
    int orphan = argc > 2 && !strcmp(argv[1], "orphan");
    if (argc > 1) {
        pid_t pid = fork();
        if (pid == 0) {
            printf("%d\n", never_called(argc));
            fflush(stdout);
            for (int i = 0; orphan && i < 2000 && access(argv[2], F_OK) != 0; i++)
                usleep(10000);
            if (orphan)
                return 0;
            if (killed)
                raise(SIGKILL);
            return 0;
        }
        if (orphan)
            raise(SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        if (killed)
            raise(SIGKILL);
        return 0;
    }
    if (argc > 5)
        printf("%d\n", never_called(argc));
    puts("ok");
    return 0;
}
