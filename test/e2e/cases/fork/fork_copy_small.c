// A fork copies, in the parent, only what the child needs of the forking
// thread's state: not its histogram pages, which the child starts without
// (a redis BGSAVE fork took 200-450 ms instead of 12-30 ms: 5 MB of pages,
// of a 9 MB state, copied in the prepare handler, then zeroed by the child).
// 256 functions, each timed in ~12 octaves, make ~3 MB of pages; the parent's
// minor page faults across fork() (getrusage) count what was copied: a fault
// per 4 KB page of the copy (the check bounds them), load-independent. The
// child's histograms hold its own calls only: f100's 3, not the parent's 13.
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
static void spin(unsigned n) { for (unsigned i = 0; i < n; i++) sink += i; }
#define F(n) __attribute__((noinline)) void f##n(unsigned k) { spin(k); }
#define F8(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7)
#define F64(n) F8(n##0) F8(n##1) F8(n##2) F8(n##3) F8(n##4) F8(n##5) F8(n##6) F8(n##7)
F64(1) F64(2) F64(3) F64(4)
#define R(n) f##n,
#define R8(n) R(n##0) R(n##1) R(n##2) R(n##3) R(n##4) R(n##5) R(n##6) R(n##7)
#define R64(n) R8(n##0) R8(n##1) R8(n##2) R8(n##3) R8(n##4) R8(n##5) R8(n##6) R8(n##7)
static void (*const fns[])(unsigned) = { R64(1) R64(2) R64(3) R64(4) };
static long minflt(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}
int main(void) {
    size_t n = sizeof fns / sizeof *fns;
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 1; k < (1u << 13); k *= 2)
            fns[i](k);
    long before = minflt();
    pid_t p = fork();
    if (p < 0)
        return 1;
    if (p == 0) {
        for (int i = 0; i < 3; i++)
            f100(5);
        exit(0);
    }
    long after = minflt();
    int status;
    if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status))
        return 1;
    printf("%zu functions, fork faults %ld\n", n, after - before);
    return 0;
}
