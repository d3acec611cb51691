// PIANO_FNS: =leaf
// A piano-db that opened a run folder before another stored it and retired
// it as a spare (spool.h) leaves it alone once it gets its lock: stored
// again (a no-op, its key is there), its retirement would empty the spare,
// and a spare that cannot be used is removed by the start that finds it,
// not given back. ./prog N: leaf called N times (default 7).
#include <stdlib.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 7;
    for (int i = 0; i < n; i++) leaf(i);
    return 0;
}
