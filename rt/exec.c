/*
 * exec.c - a process that replaces its program (execve and the rest of the
 * exec family) ends its run there, as an exit would: just before the exec the
 * run is marked complete at that moment in its header (mapped: no write
 * needed), with what the exit would have measured (the hooks' cost, the
 * allocator, the command line), and the next piano-db command stores it from
 * the spool. It was left `recovered`, timed to the last moment it was seen
 * alive. An exec that fails takes the mark back and the run goes on.
 *
 * glibc's execl, execvp and the others reach the system call by its internal
 * names, not through execve: each is interposed. A vfork child (another
 * process, in its parent's memory) marks nothing: the run is the parent's;
 * nor does a process in a seccomp sandbox (sandbox.c), which cannot tell.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <unistd.h>

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvp_fn(const char *, char *const[]);
typedef int execvpe_fn(const char *, char *const[], char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);

static execve_fn *real_execve;
static execvp_fn *real_execv, *real_execvp;
static execvpe_fn *real_execvpe;
static fexecve_fn *real_fexecve;
static execveat_fn *real_execveat;

__attribute__((constructor(101))) static void exec_resolve(void)
{
    *(void **)&real_execve = piano_next_symbol("execve");
    *(void **)&real_execv = piano_next_symbol("execv");
    *(void **)&real_execvp = piano_next_symbol("execvp");
    *(void **)&real_execvpe = piano_next_symbol("execvpe");
    *(void **)&real_fexecve = piano_next_symbol("fexecve");
    *(void **)&real_execveat = piano_next_symbol("execveat");   /* glibc 2.34 */
}

/* Marks the run ended now, before an exec; 1 when marked. */
static int exec_mark(void)
{
    if (!real_execve)
        exec_resolve();   /* an exec before the constructors */
    if (atomic_load(&g.state) != 2 || g.off || g.finished || atomic_load(&g.sandboxed))
        return 0;
    int saved = errno;
    if ((uint32_t)getpid() != g.run.pid) {   /* a vfork child */
        errno = saved;
        return 0;
    }
    g.run.overhead_ticks = exit_measures_early();
    g.run.end_tick = piano_now();
    g.run.status = 1;
    save_run_header();
    errno = saved;
    return 1;
}

/* The exec failed (errno is its): the run goes on. */
static int exec_failed(int marked, int r)
{
    if (marked) {
        int saved = errno;
        g.run.status = 0;
        g.run.end_tick = 0;
        save_run_header();
        errno = saved;
    }
    return r;
}

static int missing(void)
{
    errno = ENOSYS;
    return -1;
}

PIANO_API int execve(const char *path, char *const argv[], char *const envp[])
{
    int m = exec_mark();
    return real_execve ? exec_failed(m, real_execve(path, argv, envp)) : exec_failed(m, missing());
}

PIANO_API int execv(const char *path, char *const argv[])
{
    int m = exec_mark();
    return real_execv ? exec_failed(m, real_execv(path, argv)) : exec_failed(m, missing());
}

PIANO_API int execvp(const char *file, char *const argv[])
{
    int m = exec_mark();
    return real_execvp ? exec_failed(m, real_execvp(file, argv)) : exec_failed(m, missing());
}

PIANO_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    int m = exec_mark();
    return real_execvpe ? exec_failed(m, real_execvpe(file, argv, envp)) : exec_failed(m, missing());
}

PIANO_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    int m = exec_mark();
    return real_fexecve ? exec_failed(m, real_fexecve(fd, argv, envp)) : exec_failed(m, missing());
}

PIANO_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    int m = exec_mark();
    return real_execveat ? exec_failed(m, real_execveat(dirfd, path, argv, envp, flags)) : exec_failed(m, missing());
}

/* The argument lists of execl, execlp and execle: arg, then the rest up to
 * NULL (and, with_env, the environment after it), as an array on the stack. */
#define LIST_ARGV(argv, arg, env, with_env)                              \
    size_t argc_ = 1;                                                    \
    va_list count_;                                                      \
    va_start(count_, arg);                                               \
    while (va_arg(count_, const char *))                                 \
        argc_++;                                                         \
    va_end(count_);                                                      \
    const char *argv[argc_ + 1];                                         \
    argv[0] = (arg);                                                     \
    va_list list_;                                                       \
    va_start(list_, arg);                                                \
    for (size_t i_ = 1; i_ <= argc_; i_++)   /* the last one: the NULL */ \
        argv[i_] = va_arg(list_, const char *);                          \
    if (with_env)                                                        \
        env = va_arg(list_, char *const *);                              \
    va_end(list_)

PIANO_API int execl(const char *path, const char *arg, ...)
{
    char *const *env = NULL;
    LIST_ARGV(argv, arg, env, 0);
    (void)env;
    return execv(path, (char *const *)argv);
}

PIANO_API int execlp(const char *file, const char *arg, ...)
{
    char *const *env = NULL;
    LIST_ARGV(argv, arg, env, 0);
    (void)env;
    return execvp(file, (char *const *)argv);
}

PIANO_API int execle(const char *path, const char *arg, ...)
{
    char *const *env = NULL;
    LIST_ARGV(argv, arg, env, 1);
    return execve(path, (char *const *)argv, env);
}
