// PIANO_FNS: frame,leaf
// A program that lowers its file-size limit below the size of piano's files
// before its first instrumented call: piano's writes must not raise SIGXFSZ
// (which would kill it); the program's output and status are its own.
#include <stdio.h>
#include <sys/resource.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    struct rlimit r = { 1 << 20, 1 << 20 };
    if (setrlimit(RLIMIT_FSIZE, &r) != 0) return 2;
    for (int i = 0; i < 1000; i++) frame(i);
    printf("done\n");
    return 0;
}
