// PIANO_FNS: =work,=helper
// A test suite's runs: the program runs once here (argv: none, 3 calls of work) and
// the check runs it again with other counts (./prog N), then sums the runs with
// piano-db report SET / --command and compares each figure with the runs' own reports.
#include <stdlib.h>
#include <string.h>

static volatile unsigned sink;
static char *volatile seen; /* the block escapes: malloc is not elided at -O2 */

__attribute__((noinline)) void helper(int i)
{
    char *p = malloc(16 + (size_t)i);
    memset(p, i, 16);
    seen = p;
    sink += (unsigned)seen[3];
    free(seen);
}

__attribute__((noinline)) void work(int n)
{
    for (int i = 0; i < n; i++)
        helper(i);
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 3;
    for (int i = 0; i < calls; i++)
        work(10);
    return 0;
}
