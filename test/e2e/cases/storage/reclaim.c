// PIANO_FNS: frame,leaf
// piano-db rm and gc give the space of the runs they remove back to the file
// system (the check stores 5 runs of 50,000 frames, then removes 4).
#include <stdio.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    for (int i = 0; i < 50000; i++) frame(i);
    printf("done\n");
    return 0;
}
