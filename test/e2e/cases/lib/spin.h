// spin(ms): busy for ms of wall time, by CLOCK_MONOTONIC (coroutines.c,
// ucontext_link.c, coroutine_fork.c include it; a header, not a case). Not
// static: the cases select it by its name. Counts in the including case's
// `static volatile int sink`, declared before it.
#include <time.h>
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
void spin(double ms) {
    double end = now_ms() + ms;
    while (now_ms() < end) sink++;
}
