// PIANO_FNS: thrower,middle,no_handler,tick
// EXIT: 134
// An exception nothing catches: std::terminate (abort) before any unwinding,
// so every frame is still in flight.
#include <cstdio>
#include <stdexcept>
static volatile int sink;
void tick(int i) { sink = sink + i; }
int thrower(int depth) {
    if (depth == 0) throw std::runtime_error("nobody catches this");
    return thrower(depth - 1) + 1;
}
int middle() { return thrower(2) + 1; }
void no_handler() { middle(); }
int main() {
    for (int i = 0; i < 3; i++) tick(i);
    std::printf("before\n");
    std::fflush(stdout);
    no_handler();
    return 0;
}
