// frames_none_hint's server in C++: the turn is a member of a class template
// in an anonymous namespace. The hint names it as a PIANO_FRAME pattern that
// selects it (Loop::turn: no parameters, no template arguments, no
// "(anonymous namespace)", which has a space), and that pattern gives a frame
// per turn. It printed the full name, which selected nothing.
#include <cstdio>
#include <cstdlib>
static volatile unsigned sink;
namespace {
template <typename T> struct Loop {
    int turns = 0;
    __attribute__((noinline)) void handle(T i) { sink += (unsigned)i; }
    __attribute__((noinline)) void turn(int n) {
        for (int i = 0; i < n; i++)
            handle((T)i);
        if (++turns == 200) {
            std::printf("%u\n", sink);
            std::exit(0);
        }
    }
    __attribute__((noinline)) void run() {
        for (;;)
            turn(10);
    }
};
}   // namespace
int main() {
    Loop<int> loop;
    loop.run();
    return 1;
}
