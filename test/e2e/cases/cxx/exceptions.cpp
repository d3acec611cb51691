// PIANO_FNS: thrower,middle,catcher,rethrower,lib_throw,lib_call,callback,plain
// SO: lib/throw_lib.cpp
// C++ exceptions thrown through instrumented frames and caught above them,
// rethrown, and crossing a shared library's frames both ways: every unwound
// frame is closed once.
#include <cstdio>
#include <stdexcept>
int lib_throw(int depth);
int lib_call(int (*f)(int), int x);
static volatile int sink;
int plain(int x) { sink = sink + x; return x; }
int thrower(int depth) {
    plain(depth);
    if (depth == 0) throw std::runtime_error("boom");
    return thrower(depth - 1) + 1;
}
int middle(int depth) { return thrower(depth) + 1; }
int catcher(int depth) {
    try { return middle(depth); } catch (const std::exception &) { return -1; }
}
int rethrower(int depth) {
    try { return middle(depth); } catch (...) { plain(0); throw; }
}
int callback(int x) { if (x > 0) throw x; return x; }
int main() {
    int caught = 0;
    for (int i = 0; i < 10; i++) caught += catcher(3) == -1;        // 10 x (middle + 4 thrower)
    for (int i = 0; i < 5; i++)
        try { rethrower(2); } catch (const std::exception &) { caught++; }   // 5 x (middle + 3 thrower)
    for (int i = 0; i < 4; i++)
        try { lib_throw(3); } catch (const std::exception &) { caught++; }   // 4 x 4 lib_throw
    for (int i = 0; i < 6; i++)
        try { lib_call(callback, i % 2); } catch (int) { caught++; }          // 6 lib_call + 6 callback, 3 throw
    std::printf("caught %d\n", caught);
    return 0;
}
