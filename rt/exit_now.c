/*
 * exit_now.c - _exit and _Exit, interposed, so that a process ending without
 * exit (a forked child's usual end: Redis's BGSAVE and AOF children, a
 * daemon's helpers) leaves its spool with the title ps showed at its end. Its
 * run is stored by the next piano-db command (recovered), as any run whose
 * process ended without exit; without this, it kept the title of the parent
 * it was forked from (`redis-server *:6379` for `redis-rdb-bgsave`).
 *
 * _exit may be called from a signal handler or a vfork child: only
 * async-signal-safe work here (open, read, close, a copy into the mapped run
 * header), and nothing in a process whose run is not its own (a vfork child
 * shares its parent's memory and run).
 */
#define _GNU_SOURCE
#include "internal.h"
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PIANO_API __attribute__((visibility("default")))

static void (*real_exit_now)(int), (*real_Exit)(int);

/* At load, never in the signal handler or child that calls them. */
__attribute__((constructor)) static void resolve_exits(void)
{
    real_exit_now = (void (*)(int))piano_next_symbol("_exit");
    real_Exit = (void (*)(int))piano_next_symbol("_Exit");
}

static void note_title(void)
{
    /* In a seccomp sandbox: no system call (getpid, the title's open), which
     * the filter may kill (sshd's pre-authentication child ends so); the
     * title is the one noted before the filter went in (sandbox.c). */
    if (atomic_load(&g.sandboxed))
        return;
    if (!g.run_map || g.finished || g.run_map_pid != (uint32_t)getpid())
        return;
    refresh_command();
    struct piano_spool_run *mapped = g.run_map;
    memcpy(mapped->cmd, g.run.cmd, g.run.cmd_len + 1);
    mapped->cmd_len = g.run.cmd_len;
}

static _Noreturn void end_now(void (*real)(int), int status)
{
    note_title();
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

PIANO_API _Noreturn void _exit(int status) { end_now(real_exit_now, status); }
PIANO_API _Noreturn void _Exit(int status) { end_now(real_Exit ? real_Exit : real_exit_now, status); }
