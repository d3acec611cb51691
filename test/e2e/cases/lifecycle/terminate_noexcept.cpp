// PIANO_FNS: thrower,middle,noexcept_fn,tick
// EXIT: 134
// An exception leaving a noexcept function: the frames below it are unwound
// (and closed), then std::terminate aborts with the noexcept function in flight.
#include <cstdio>
#include <stdexcept>
static volatile int sink;
void tick(int i) { sink = sink + i; }
int thrower(int depth) {
    if (depth == 0) throw std::runtime_error("nobody catches this");
    return thrower(depth - 1) + 1;
}
int middle() { return thrower(2) + 1; }
void noexcept_fn() noexcept { middle(); }
int main() {
    for (int i = 0; i < 3; i++) tick(i);
    std::printf("before\n");
    std::fflush(stdout);
    noexcept_fn();
    return 0;
}
