// PIANO_FNS: step_
// A short process stores its run without a checkpoint while the database's
// write-ahead log is small (bench/README.md, row (f)); past 512 KiB its exit
// folds the log into the file and empties it, so the log stays bounded.
#include <stdio.h>
static volatile unsigned sink;
void step_a(int i) { sink += (unsigned)i; }
void step_b(int i) { sink ^= (unsigned)i * 3u; }
int main(void) {
    for (int i = 0; i < 5; i++) step_a(i);
    step_b(7);
    printf("%u\n", sink);
    return 0;
}
