/*
 * cpu.c - CPU time (PIANO_CPU=1): per thread, how much of its wall time it
 * spent off the CPU, and how much of its CPU time was system time.
 *
 * Reading the thread's CPU clock costs a system call (~1.6 us on the VM
 * piano was measured on); cap_user_time is not set there, so the perf page
 * cannot give the time from user space. But the kernel rewrites a per-thread
 * task-clock perf page each time the thread is scheduled in, changing its
 * `lock` word, and leaves it alone while the thread stays on the CPU. So a
 * hook loads that word (one load) and compares it with the one seen at the
 * last reading: only when it changed (the thread was off the CPU since) does
 * it read the clocks again (cpu_resync), and add the wall time minus the CPU
 * time since then to the thread's off-CPU count. Every ~1 ms of calls without
 * a switch it also reads getrusage(RUSAGE_THREAD) for the user/system split.
 * What a reading finds happened while the innermost call in flight ran (no
 * hook ran meanwhile): it goes to that call's context, as self figures, and
 * inclusive ones are summed from the tree when the run is stored, like time.
 *
 * When PIANO_CPU is unset the hooks do the same work on a lock word that never
 * changes and a deadline that never comes: no branch on the mode.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

static const uint32_t cpu_lock_never;   /* the lock word of a state that measures nothing */
int g_cpu_mode;                         /* PIANO_CPU_*, decided at start */
static int cpu_pages_opened;            /* a thread of this process measures CPU time */

enum { CPU_RUSAGE_NS = 1000000 };   /* getrusage at most every ~1 ms of wall */

void cpu_mode_init(void)
{
    const char *v = getenv("PIANO_CPU");
    g_cpu_mode = v && *v && strcmp(v, "0") != 0 ? PIANO_CPU_PERF : PIANO_CPU_OFF;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* 1 when the calling thread may be under a seccomp filter: its `Seccomp:`
 * line in /proc/thread-self/status says 2 (filter), or the file cannot be
 * read (no /proc in a chroot, no descriptor left: not known, so not risked).
 * A filter may kill the thread on perf_event_open (systemd's
 * SystemCallFilter=@system-service does): it is never called under one.
 * open, read and close are what every filter allows; a kernel without
 * seccomp has no such line (0). */
static int seccomp_filtered(void)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    char buf[4096];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == sizeof buf - 1)
            break;
    }
    close(fd);
    if (n == 0)
        return 1;
    buf[n] = 0;
    const char *l = strstr(buf, "\nSeccomp:");
    if (!l)
        return 0;
    l += strlen("\nSeccomp:");
    while (*l == ' ' || *l == '\t')
        l++;
    return *l != '0';
}

/* Opens the calling thread's task-clock perf event and maps its page; the fd
 * is closed at once (the mapping keeps the event). NULL when refused
 * (perf_event_paranoid, no fd left), or not tried under a seccomp filter.
 * PIANO_TEST_NO_PERF=1 refuses, for the tests. */
static void *perf_page_open(void)
{
    const char *no = getenv("PIANO_TEST_NO_PERF");
    if (no && *no && strcmp(no, "0") != 0)
        return NULL;
    if (seccomp_filtered())
        return NULL;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    /* Only the page's lock word is read (it moves at every sched-in, whatever
     * is excluded); excluding the kernel is what perf_event_paranoid 2, the
     * usual setting, asks of an unprivileged user. */
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fd <= 2) {   /* the program closed a standard fd: never hold it, even briefly longer */
        int up = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        if (up < 0)
            return NULL;
        fd = up;
    }
    void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* About 1 ms in clock ticks, from the run's start pair (tick0, mono0) and the
 * pair (tick, mono) read together now: over the whole run, so a switch
 * between two readings does not skew it (a 50 us estimate made the
 * deadline come at every call). */
static uint64_t period_ticks(uint64_t tick, uint64_t mono)
{
    uint64_t dm = mono - g.run.mono0, dt = tick - g.run.tick0;
    if (mono > g.run.mono0 + CPU_RUSAGE_NS && tick > g.run.tick0)
        return (uint64_t)((double)dt / (double)dm * CPU_RUSAGE_NS);
    return g.run.clock == PIANO_CLOCK_MONO ? CPU_RUSAGE_NS : 3u * CPU_RUSAGE_NS;
}

/* Takes the anchor: the clocks now. */
static void cpu_anchor(struct piano_thread *ts)
{
    ts->cpu_lock = __atomic_load_n(ts->cpu_lockp, __ATOMIC_ACQUIRE);
    ts->cpu_mono = mono_ns();
    ts->cpu_tick = piano_now();
    ts->cpu_ns = thread_cpu_ns();
    ts->cpu_period = period_ticks(ts->cpu_tick, ts->cpu_mono);
    ts->cpu_deadline = ts->cpu_tick + ts->cpu_period;
}

static void rusage_read(struct piano_thread *ts, uint64_t *user_us, uint64_t *sys_us)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) {
        *user_us = ts->ru_user_us;
        *sys_us = ts->ru_sys_us;
        return;
    }
    *user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
    *sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
}

/* Makes ts measure CPU time or not. A thread's state opens its own perf page;
 * a signal handler's state (owner given) runs on the same thread and shares
 * its owner's. */
void cpu_state_init(struct piano_thread *ts, const struct piano_thread *owner)
{
    int saved = errno;
    ts->cpu_lockp = &cpu_lock_never;
    ts->cpu_deadline = UINT64_MAX;
    ts->cpu_page = NULL;
    ts->cpu_ok = 0;
    if (g_cpu_mode == PIANO_CPU_OFF || g.run.cpu_mode == PIANO_CPU_REFUSED) {
        errno = saved;
        return;
    }
    if (owner) {
        if (!owner->cpu_ok) {
            errno = saved;
            return;
        }
        ts->cpu_lockp = owner->cpu_lockp;
    } else {
        struct perf_event_mmap_page *p = perf_page_open();
        if (!p) {
            /* Said once in the run (runs.cpu_mode), never per thread: the
             * threads that have a page already keep measuring. */
            if (!__atomic_load_n(&cpu_pages_opened, __ATOMIC_RELAXED))
                g.run.cpu_mode = PIANO_CPU_REFUSED;
            errno = saved;
            return;
        }
        ts->cpu_page = p;
        ts->cpu_lockp = &p->lock;
        __atomic_store_n(&cpu_pages_opened, 1, __ATOMIC_RELAXED);
    }
    cpu_anchor(ts);
    ts->ru_mono = ts->cpu_mono;
    ts->ru_cpu_ns = ts->cpu_ns;
    rusage_read(ts, &ts->ru_user_us, &ts->ru_sys_us);
    ts->cpu_ok = 1;
    errno = saved;
}

/* Forgets ts's perf page without unmapping it. */
static void cpu_state_forget(struct piano_thread *ts)
{
    ts->cpu_page = NULL;
    ts->cpu_lockp = &cpu_lock_never;
    ts->cpu_deadline = UINT64_MAX;
}

/* The thread's state ends. */
void cpu_state_end(struct piano_thread *ts)
{
    if (ts->cpu_page)
        munmap(ts->cpu_page, 4096);
    cpu_state_forget(ts);
}

/* A forked child: its thread is new, the parent's perf page counts the
 * parent's (and is not in the child: the kernel does not copy a perf
 * mapping into a child). Counts start again
 * at the fork. */
void cpu_state_forked(struct piano_thread *ts)
{
    int was = ts->cpu_ok;
    cpu_state_forget(ts);
    ts->off_ns = ts->sys_ns = 0;
    ts->frame_off0 = 0;
    if (was)
        cpu_state_init(ts, NULL);
}

/* A hook saw the thread scheduled in since the anchor, or the deadline
 * passed: adds the off-CPU time since the anchor to `to` (and the thread), and every ~1 ms
 * the system share of the CPU time since the last getrusage; anchors again.
 * Runs inside a hook (hooks.c's in-hook bracket). */
void cpu_resync(struct piano_thread *ts, struct piano_node *to)
{
    if (!ts->cpu_ok)
        return;
    int saved = errno;
    uint64_t mono0 = ts->cpu_mono, cpu0 = ts->cpu_ns;
    /* getrusage first: a system call's return is where a pending preemption
     * happens, so the thread is often switched out right after one. */
    uint64_t user_us = 0, sys_us = 0;
    int split = mono_ns() - ts->ru_mono >= CPU_RUSAGE_NS;
    if (split)
        rusage_read(ts, &user_us, &sys_us);
    /* The anchor holds only if the thread was not switched out while it was
     * taken (the lock read first is the same after): else the off-CPU time
     * would fall after the reading and count for the next calls. */
    for (int tries = 0; tries < 8; tries++) {
        cpu_anchor(ts);
        if (__atomic_load_n(ts->cpu_lockp, __ATOMIC_ACQUIRE) == ts->cpu_lock)
            break;
    }
    uint64_t wall = ts->cpu_mono - mono0, cpu = ts->cpu_ns - cpu0;
    uint64_t off0 = ts->off_ns, sys0 = ts->sys_ns;
    if (wall > cpu && ts->cpu_ns >= cpu0)
        ts->off_ns += wall - cpu;
    if (split) {
        uint64_t du = user_us - ts->ru_user_us, ds = sys_us - ts->ru_sys_us;
        uint64_t spent = ts->cpu_ns - ts->ru_cpu_ns;
        ts->ru_mono = ts->cpu_mono;
        /* getrusage's split moves at the scheduler's ticks: while it has not
         * moved, the CPU time since the last split waits for the next one. */
        if (du + ds && ts->cpu_ns >= ts->ru_cpu_ns && user_us >= ts->ru_user_us && sys_us >= ts->ru_sys_us) {
            ts->sys_ns += (uint64_t)((double)spent * (double)ds / (double)(du + ds));
            ts->ru_cpu_ns = ts->cpu_ns;
            ts->ru_user_us = user_us;
            ts->ru_sys_us = sys_us;
        }
    }
    to->off += ts->off_ns - off0;
    to->sys += ts->sys_ns - sys0;
    errno = saved;
}

/* At the run's end: a thread's off-CPU time since its last reading goes to
 * its innermost call in flight (the calls still in flight end with the run).
 * A thread asleep in a call makes no hook that would read it: without this,
 * a daemon's idle threads showed their whole life as CPU time. Another
 * thread's CPU clock is read through its tid (the same process:
 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)); no user/system split for it. */
void cpu_settle(struct piano_thread *ts, int self)
{
    if (!ts->cpu_ok)
        return;
    struct piano_node *to = PIANO_NODES(ts) + PIANO_STACK(ts)[piano_depth(ts->depth)].node;
    if (self) {
        cpu_resync(ts, to);
        return;
    }
    int saved = errno;
    struct timespec c;
    clockid_t clock = (clockid_t)(~(uint32_t)ts->tid << 3 | 6);
    if (clock_gettime(clock, &c) == 0) {
        uint64_t cpu = (uint64_t)c.tv_sec * 1000000000ull + (uint64_t)c.tv_nsec, mono = mono_ns();
        uint64_t anchor_mono = ts->cpu_mono, anchor_cpu = ts->cpu_ns;
        if (mono > anchor_mono && cpu >= anchor_cpu && mono - anchor_mono > cpu - anchor_cpu) {
            uint64_t off = (mono - anchor_mono) - (cpu - anchor_cpu);
            ts->off_ns += off;
            to->off += off;
        }
    }
    errno = saved;
}
