// PIANO_FNS: Parser::parse
// C++ functions are reported by their full demangled signature.
#include <cstdio>
namespace app {
struct Parser {
    int parse(int x) { return x * 2; }
    double parse(double x) { return x / 2; }
};
}
int main() {
    app::Parser p;
    volatile int s = 0;
    for (int i = 0; i < 3; i++) s = s + p.parse(i);
    for (int i = 0; i < 5; i++) s = s + (int)p.parse(1.0 * i);
    std::printf("%d\n", (int)s);
    return 0;
}
