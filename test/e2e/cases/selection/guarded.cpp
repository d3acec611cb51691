// PIANO_FNS: fib,parse,setup,main
// BUILD_ENV: PIANO_GUARD=1
// Hooks behind each function's byte (always, since ABI 3; PIANO_GUARD=1 is
// ignored): a call from a constructor before the runtime has started (the
// bytes start set, the first hook starts piano),
// recursion, and exceptions unwinding through guarded functions are counted
// exactly; with PIANO_DISABLE=1 the guards skip every hook and nothing is stored.
#include <cstdio>
#include <stdexcept>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int parse(int i) {
    if (i % 4 == 3) throw std::runtime_error("bad");
    return i;
}
int setup() { return fib(5); }
static int early = setup();
int main() {
    int ok = 0, bad = 0;
    for (int i = 0; i < 20; i++) {
        try { ok += parse(i); } catch (const std::exception &) { bad++; }
    }
    std::printf("%d %d %d %d\n", early, fib(15), ok, bad);
    return 0;
}
