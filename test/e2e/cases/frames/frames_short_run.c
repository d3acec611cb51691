// PIANO_FNS: frame,update,render
// A short game loop: 3,000 frames of two calls, every 100th frame ten times
// longer. Under the default budget the run is kept whole: every frame, each
// once, in order; the long ones marked as spikes.
#include <stdio.h>
static volatile unsigned sink;
__attribute__((noinline)) void update(int n) { for (int i = 0; i < n; i++) sink += (unsigned)i; }
__attribute__((noinline)) void render(int n) { for (int i = 0; i < n; i++) sink ^= (unsigned)i; }
__attribute__((noinline)) void frame(int i) {
    int n = i % 100 == 99 ? 20000 : 2000;
    update(n);
    render(n);
}
int main(void) {
    for (int i = 0; i < 3000; i++) frame(i);
    printf("%u\n", sink);
    return 0;
}
