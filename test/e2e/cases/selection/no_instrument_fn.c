// PIANO_FNS: *
// __attribute__((no_instrument_function)), which uftrace and
// -finstrument-functions users put on what must never be traced: quiet and
// deaf are never
// instrumented, even under a pattern that takes every function; loud, which
// calls them, is. deaf has the attribute on its declaration only.
#include <stdio.h>
static volatile unsigned sink;
__attribute__((no_instrument_function, noinline)) void quiet(unsigned i) { sink += i; }
void deaf(void) __attribute__((no_instrument_function));
__attribute__((noinline)) void deaf(void) { sink ^= 1; }
__attribute__((noinline)) void loud(void) {
    for (unsigned i = 0; i < 37; i++) quiet(i);
    deaf();
}
int main(void) {
    for (int i = 0; i < 3; i++) loud();
    printf("%u\n", sink);
    return 0;
}
