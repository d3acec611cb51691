// PIANO_FNS: app::
// CFLAGS: -std=c++17
// report --group template: a function template's instantiations summed in
// one row (calls, self, histograms merged for p50/p99), with their number.
#include <cstdio>
#include <string>
namespace app {
template <typename T> std::string write(T v) { return std::to_string(v); }
int plain(int x) { return x + 1; }
}
int main() {
    std::size_t n = 0;
    for (int i = 0; i < 2; i++) n += app::write(i).size();
    for (int i = 0; i < 3; i++) n += app::write(1.5 * i).size();
    for (int i = 0; i < 4; i++) n += app::write((long)i).size();
    n += (std::size_t)app::plain(1);
    std::printf("%zu\n", n);
    return 0;
}
