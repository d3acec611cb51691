// PIANO_FNS: =tiny,work
// report's footer says when piano's hooks took a fifth of the run or more, and
// names the tiny functions that made most calls with the pattern that leaves
// them out (tools/db/report.c hooks_line). ./prog: tiny called 3,000,000
// times; ./prog work: work called once, ~50 ms of arithmetic, no hint.
#include <string.h>
static volatile unsigned sink;
__attribute__((noinline)) unsigned tiny(unsigned x) { return x * 3u + 1u; }
__attribute__((noinline)) void work(void) {
    unsigned v = 1;
    for (unsigned i = 0; i < 60000000u; i++) {
        v = v * 1664525u + 1013904223u;
        sink = v;
    }
}
int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "work")) {
        work();
        return 0;
    }
    unsigned v = 0;
    for (unsigned i = 0; i < 3000000u; i++)
        v = tiny(v);
    sink = v;
    return 0;
}
