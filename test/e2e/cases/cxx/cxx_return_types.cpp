// PIANO_FNS: app::
// CFLAGS: -std=c++17
// A template function's demangled name carries its return type
// (`char const* app::skip<char>(char const*)`): stored whole, shown without it
// in tables, flame graphs and pprof's function names (pprof's system_name keeps it).
#include <cstdio>
#include <string>
namespace app {
// skip spins ~0.5 ms a call: wide enough in the flame graph (boxes under 0.1 px
// are left out) even when a show() call is preempted for seconds under load.
template <typename Char> const Char *skip(const Char *p) {
    for (volatile int k = 0; k < 300000; k = k + 1) {}
    return p + 1;
}
template <typename T> std::string show(T v) { return std::to_string(v); }
struct Conv {
    operator const char *() const { return "c"; }
};
}
int main() {
    const char *s = "abc";
    for (int i = 0; i < 3; i++) s = app::skip(s) - 1;
    std::size_t n = 0;
    for (int i = 0; i < 4; i++) n += app::show(i).size();
    n += app::show(2.5).size();
    app::Conv c;
    const char *t = c;
    std::printf("%zu %s%s\n", n, s, t);
    return 0;
}
