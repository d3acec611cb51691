// PIANO_FNS: leaf
// EXIT: 137
// The import reads a histogram counter's carry (spool version 20: counters of 32
// bits, a wrap adds 1 to the word's place in the carry, spool.h piano_hist_inc).
// 40 calls (past the 31 a function's first samples' page holds: it has a page
// table, spool version 21), then SIGKILL; the check writes a carry of 1 beside each counter
// the calls made, flags the thread's header, and the next piano-db stores each
// of those buckets 2^32 higher. (2^32 real calls would take minutes; the carry
// path itself is driven by unit.hist.)
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(unsigned k) { for (unsigned i = 0; i < k; i++) sink += i; }
int main(void) {
    for (int i = 0; i < 38; i++)
        leaf(1);
    leaf(1000);
    leaf(1000000);
    printf("called\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 1;
}
