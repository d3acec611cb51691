// PIANO_FNS: frame
// ENV: PIANO_FRAMES=all
// 50,000 tiny frames: PIANO_FRAMES=all keeps every one; the default keeps the
// first 8,000, the longest and a sample.
#include <stdio.h>
static volatile unsigned sink;
__attribute__((noinline)) void frame(int i) { for (int k = 0; k < 20; k++) sink += (unsigned)(i + k); }
int main(void) {
    for (int i = 0; i < 50000; i++) frame(i);
    printf("%u\n", sink);
    return 0;
}
