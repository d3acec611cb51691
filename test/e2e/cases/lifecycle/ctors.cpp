// PIANO_FNS: ctor_fn,dtor_fn,at_exit_fn,work,lib_work,lib_ctor,lib_dtor,Global
// SO: lib/ctor_lib.c
// Instrumented static constructors and destructors (C attributes, C++ globals,
// a library's) and atexit handlers run before main and after it: all counted.
#include <cstdio>
#include <cstdlib>
static volatile int sink;
void work(int i) { sink = sink + i; }
extern "C" void lib_work(int i);
struct Global {
    Global() { work(1); }
    ~Global() { work(2); }
};
static Global g1, g2;
void at_exit_fn() { work(3); }
__attribute__((constructor)) void ctor_fn() { work(4); std::atexit(at_exit_fn); }
__attribute__((destructor)) void dtor_fn() { work(5); }
int main() { work(0); lib_work(0); std::printf("main\n"); return 0; }
