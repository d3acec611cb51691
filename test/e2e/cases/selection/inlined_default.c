// BUILD_ENV: PIANO_AFTER_INLINING=
// PIANO_FNS unset instruments what survives inlining (as -pg and XRay do):
// at -O2 the one-line helper add1 is inlined into work and counted in it; at
// -O0 nothing is inlined and add1 is a function of the report. (PIANO_AFTER_
// INLINING set but empty: the default, as if unset.)
#include <stdio.h>
static volatile int sink;
static int add1(int x) { return x + 1; }
__attribute__((noinline)) int work(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) { s = add1(s); sink = s; }
    return s;
}
int main(void) {
    int s = 0;
    for (int i = 0; i < 50; i++) s += work(100);
    printf("%d\n", s);
    return 0;
}
