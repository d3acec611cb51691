// PIANO_FNS: work
// A test driver as leveldb's env_posix_test is one: the driver calls no
// instrumented function; it forks children that exec the program itself as a
// helper (`prog helper`), and the helpers record nothing either. Nothing was
// recorded, so no run is stored: the exec'd children's folders, ended and
// empty, are no children that keep the driver (they were taken for runs, and
// the driver was stored as an empty run). `prog work`: the children call
// work() before their exec; each is a run of its own, linked to the driver,
// which is stored for them.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "helper")) {
        puts("helper");
        return 0;
    }
    int busy = argc > 1 && !strcmp(argv[1], "work");
    int failed = 0;
    for (int i = 0; i < 3; i++) {
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) {
            for (int k = 0; k < busy * 5; k++)
                work(k);
            execl("/proc/self/exe", "prog", "helper", (char *)NULL);
            _exit(127);
        }
        int st = 0;
        waitpid(p, &st, 0);
        failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    printf("failed: %d\n", failed);
    return 0;
}
