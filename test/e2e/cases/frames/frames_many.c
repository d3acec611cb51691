// PIANO_FNS: frame,work
// ENV: PIANO_FRAMES=all
// 120,000 frames of two functions: more than two full frame buffers (4 MiB,
// 58,253 such frames each) are stored as chunk files, the rest is read
// from the buffer. Every frame is stored once.
#include <stdio.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
void frame(int i) { work(i); }
int main(void) {
    for (int i = 0; i < 120000; i++) frame(i);
    printf("%u\n", sink);
    return 0;
}
