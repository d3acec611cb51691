// PIANO_FNS: =frame,=work
// A live run in a test suite's sets (found on lz4's suite: its fuzzer, live,
// read `Empty 1` in `runs --group command` after millions of calls): the
// program makes 3 frames of 2 work calls each; with an argument it then waits,
// making no call, until that file exists (at most 20 s).
#include <time.h>
#include <unistd.h>

static volatile unsigned sink;

__attribute__((noinline)) void work(int i) { sink += (unsigned)i; }

__attribute__((noinline)) void frame(int i)
{
    work(i);
    work(i + 1);
}

int main(int argc, char **argv)
{
    for (int i = 0; i < 3; i++)
        frame(i);
    if (argc > 1) {
        time_t start = time(NULL);
        while (access(argv[1], F_OK) != 0 && time(NULL) - start < 20)
            usleep(10000);
    }
    return 0;
}
