// A shared library for exceptions.cpp: throws across the library boundary,
// and lets the program's exceptions pass through its frames.
#include <stdexcept>
int lib_throw(int depth) {
    if (depth == 0) throw std::runtime_error("from the library");
    return lib_throw(depth - 1) + 1;
}
int lib_call(int (*f)(int), int x) { return f(x) + 1; }
