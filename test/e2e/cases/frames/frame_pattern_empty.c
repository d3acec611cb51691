// PIANO_FNS: frame,leaf
// ENV: PIANO_FRAME=,,,
// A malformed PIANO_FRAME (an empty item: it takes PIANO_FNS's patterns): one
// line says so, and frames are the outermost calls, as without it.
#include <stdio.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    for (int i = 0; i < 100; i++) frame(i);
    printf("done\n");
    return 0;
}
