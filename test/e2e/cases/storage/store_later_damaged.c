// PIANO_FNS: =main,work
// ENV: PIANO_STORE=later
// A run left in the spool by PIANO_STORE=later whose packed state (in the
// folder's ended file) is damaged afterwards: the check damages copies of it
// at several places; piano-db must store what it can, say so in one line,
// keep the folder as .damaged, and never crash or hang.
#include <stdio.h>
static volatile unsigned sink;
__attribute__((noinline)) void work(unsigned i) { sink += i; }
int main(void) {
    for (unsigned i = 0; i < 1000; i++)
        work(i);
    printf("done\n");
    return 0;
}
