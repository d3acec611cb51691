/*
 * sandbox.c - a program that locks itself into a seccomp sandbox (prctl
 * PR_SET_SECCOMP, or the seccomp system call through syscall(), which is how
 * libseccomp's seccomp_load makes it): from then on the filter may kill the
 * process for any system call piano makes (sshd's pre-authentication child
 * kills on anything it did not list; a test program here kills on open). A
 * program that used to end with status 0 was killed by SIGSYS at exit.
 *
 * So the two are interposed (as malloc is): what the exit needs from the
 * kernel is done just before the filter goes in (sandbox_prepare: the hooks'
 * cost, the allocator, the command line, the snapshot thread stopped), and
 * from the moment it is in, piano makes no system call: the exit ends the
 * run in memory (the run header is mapped) and the next piano-db command
 * stores it, complete, from the spool; a thread that starts after it gets a
 * slot of a group already mapped, as it is (no thread id, name, stack bounds
 * or CPU time); functions registered after it are not recorded; frames past
 * a thread's buffer are dropped; a child forked after it records nothing. A
 * filter installed without these functions (a raw system call) is not seen.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

typedef int prctl_fn(int, unsigned long, unsigned long, unsigned long, unsigned long);
typedef long syscall_fn(long, long, long, long, long, long, long);

static prctl_fn *real_prctl;
static syscall_fn *real_syscall;

/* At load, not at a first call: syscall() may first be called in a signal
 * handler, where dlsym is not safe. */
__attribute__((constructor(101))) static void sandbox_resolve(void)
{
    *(void **)&real_prctl = piano_next_symbol("prctl");
    *(void **)&real_syscall = piano_next_symbol("syscall");
}

/* Before the filter: each of these makes system calls. */
static void sandbox_prepare(void)
{
    if (atomic_load(&g.state) != 2 || g.off || g.finished || atomic_load(&g.sandboxed))
        return;
    int saved = errno;
    snap_stop();   /* its thread would be under the filter too with TSYNC */
    g.sandbox_overhead = exit_measures_early();
    save_run_header();
    errno = saved;
}

static void sandbox_entered(void)
{
    if (atomic_load(&g.state) == 2 && !g.off && !g.finished)
        atomic_store(&g.sandboxed, 1);
}

static int enters_sandbox_prctl(long option, long mode)
{
    return option == PR_SET_SECCOMP && (mode == SECCOMP_MODE_STRICT || mode == SECCOMP_MODE_FILTER);
}

PIANO_API int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
                  a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (!real_prctl)   /* called before the constructors (another library's) */
        sandbox_resolve();
    if (!real_prctl) {
        errno = ENOSYS;
        return -1;
    }
    int entering = enters_sandbox_prctl(option, (long)a2);
    if (entering)
        sandbox_prepare();
    int r = real_prctl(option, a2, a3, a4, a5);
    if (entering && r == 0)
        sandbox_entered();
    return r;
}

PIANO_API long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long), a4 = va_arg(ap, long),
         a5 = va_arg(ap, long), a6 = va_arg(ap, long);
    va_end(ap);
    if (!real_syscall)   /* called before the constructors (another library's) */
        sandbox_resolve();
    if (!real_syscall) {
        errno = ENOSYS;
        return -1;
    }
    int entering = 0;
#ifdef SYS_seccomp
    entering = number == SYS_seccomp && (a1 == SECCOMP_SET_MODE_STRICT || a1 == SECCOMP_SET_MODE_FILTER);
#endif
    entering = entering || (number == SYS_prctl && enters_sandbox_prctl(a1, a2));
    if (entering)
        sandbox_prepare();
    long r = real_syscall(number, a1, a2, a3, a4, a5, a6);
    if (entering && r == 0)
        sandbox_entered();
    return r;
}
