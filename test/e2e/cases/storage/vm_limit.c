// PIANO_FNS: frame,leaf
// A program that limits its address space (ulimit -v 100000) before its
// first instrumented call: piano cannot map the thread's records. It says so
// in one line, and the run counts the calls it could not record.
#include <stdio.h>
#include <sys/resource.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    struct rlimit r = { 100000ul * 1024, 100000ul * 1024 };
    if (setrlimit(RLIMIT_AS, &r) != 0) return 2;
    for (int i = 0; i < 100; i++) frame(i);
    printf("done\n");
    return 0;
}
