// PIANO_FNS: *
// ENV: PIANO_FRAME=app::Server::handle_*,!handle_idle,poll<int
// PIANO_FRAME takes PIANO_FNS's patterns: a glob on a qualified name
// (app::Server::handle_get and handle_put, not Server::handle_idle: excluded),
// and a template pattern ('<': matched with template arguments: poll<int>,
// not poll<long>). Before, a substring of the display name only: the glob
// matched nothing and the run had no frame.
#include <cstdio>
static volatile unsigned sink;
namespace app {
struct Server {
    void work(int n) { for (int i = 0; i < n; i++) sink += (unsigned)i; }
    void handle_get(int i) { work(10 + i); }
    void handle_put(int i) { work(20 + i); }
    void handle_idle() { work(1); }
    void serve(int rounds) {
        for (int i = 0; i < rounds; i++) {
            handle_get(i);
            handle_put(i);
            handle_idle();
        }
    }
};
template <typename T> void poll(T n) { sink += (unsigned)n; }
}   // namespace app
int main() {
    app::Server s;
    s.serve(25);
    for (int i = 0; i < 7; i++) {
        app::poll<int>(i);
        app::poll<long>(i);
    }
    std::printf("done\n");
    return 0;
}
