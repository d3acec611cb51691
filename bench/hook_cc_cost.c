/*
 * hook_cc_cost.c - what a preserve_most hook costs a runtime built with GCC
 * (bench/README.md, "Where a compile with piano spends its time", sixth
 * session). GCC 12 has no preserve_most, so such a hook is an assembly stub
 * that saves the eight registers a C function may clobber (all but r11),
 * calls the C hook and restores them. f_c calls a C hook twice (entry, exit),
 * f_pm the same hook through the stub: compare instructions per call
 * (valgrind --tool=callgrind ./hcc 100000; callgrind_annotate --inclusive=yes)
 * or time per call (./hcc, alternating rounds).
 *   clang -O2 bench/hook_cc_cost.c -o /tmp/hcc   (x86-64 only)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static __thread struct {
    uintptr_t t[1024];
    unsigned i;
} ring __attribute__((tls_model("initial-exec")));

__attribute__((noinline, used)) void hook_c(void *site) { ring.t[ring.i++ & 1023] = (uintptr_t)site; }

__asm__(".text\n.globl hook_pm\n.type hook_pm,@function\nhook_pm:\n"
        "push %rax\npush %rcx\npush %rdx\npush %rsi\npush %rdi\npush %r8\npush %r9\npush %r10\n"
        "sub $8, %rsp\ncall hook_c\nadd $8, %rsp\n"
        "pop %r10\npop %r9\npop %r8\npop %rdi\npop %rsi\npop %rdx\npop %rcx\npop %rax\nret\n"
        ".size hook_pm, .-hook_pm\n");
void hook_pm(void *) __attribute__((preserve_most));

static char site;
__attribute__((noinline)) long f_c(long n)
{
    hook_c(&site);
    long x = n * 3 + 1;
    __asm__ volatile("" : "+r"(x));
    hook_c(&site);
    return x;
}
__attribute__((noinline)) long f_pm(long n)
{
    hook_pm(&site);
    long x = n * 3 + 1;
    __asm__ volatile("" : "+r"(x));
    hook_pm(&site);
    return x;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50000000, s = 0;
    for (int round = 0; round < 5; round++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            s += f_c(i);
        double t1 = now_ns();
        for (long i = 0; i < n; i++)
            s += f_pm(i);
        double t2 = now_ns();
        printf("C hooks %.2f ns/call, preserve_most stub %.2f ns/call\n", (t1 - t0) / n, (t2 - t1) / n);
    }
    return (int)(s & 1);
}
