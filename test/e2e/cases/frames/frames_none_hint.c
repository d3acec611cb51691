// A server-like program, every function instrumented: main never returns
// (cycle loops until process_events calls exit), so the run has no frame;
// report says so and how to get frames: PIANO_FRAME=process_events, the
// outermost call in flight at the end that was made more than once.
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
static int turns;
__attribute__((noinline)) void handle(int i) { sink += (unsigned)i; }
__attribute__((noinline)) void process_events(void) {
    for (int i = 0; i < 10; i++) handle(i);
    if (++turns == 300) {
        printf("%u\n", sink);
        exit(0);
    }
}
__attribute__((noinline)) void cycle(void) {
    for (;;) process_events();
}
int main(void) {
    cycle();
    return 1;
}
