/* raw_seccomp.h - installs a seccomp filter on the calling thread by the
 * system call itself (x86-64 `syscall`), not through prctl or syscall(),
 * which piano sees (rt/sandbox.c: the program entering a sandbox). It
 * stands for a filter the environment set before the program started (a
 * container's profile, systemd's SystemCallFilter): piano does not know of
 * it and goes on as usual, which is what the cases including this test. */
#ifndef RAW_SECCOMP_H
#define RAW_SECCOMP_H
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

static long raw_syscall5(long n, long a, long b, long c, long d, long e)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return r;
}

/* 0, or -errno. */
static int raw_seccomp_filter(const struct sock_fprog *prog)
{
    long r = raw_syscall5(__NR_prctl, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0);
    if (r == 0)
        r = raw_syscall5(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)prog, 0, 0);
    return (int)r;
}
#endif
