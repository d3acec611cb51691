/*
 * cpu.c - CPU time (PIANO_CPU=1): per thread, how much of its wall time it
 * spent off the CPU, and how much of its CPU time was user time.
 *
 * Reading the thread's CPU clock costs a system call (~1.6 us on the VM
 * piano was measured on); cap_user_time is not set there, so the perf page
 * cannot give the time from user space. But the kernel rewrites a per-thread
 * task-clock perf page each time the thread is scheduled in, changing its
 * `lock` word, and leaves it alone while the thread stays on the CPU. So a
 * hook loads that word (one load) and compares it with the one seen at the
 * last reading: only when it changed (the thread was off the CPU since) does
 * it read the clocks again (cpu_resync), and add the wall time minus the CPU
 * time since then to the thread's off-CPU count.
 *
 * The user/system split is sampled: the same event samples every
 * CPU_SAMPLE_NS of the thread's CPU time, user mode only (exclude_kernel,
 * what perf_event_paranoid 2 allows), into a one-page ring that nobody reads:
 * the kernel moves the page's data_head by a record per sample. A hook that
 * finds data_head moved (one more load) gives CPU_SAMPLE_NS of user time per
 * record to the innermost call in flight, which was running when the sample
 * was taken; no system call. A context's system time is its CPU time less
 * that. (getrusage's split, read every ~1 ms and given to the call in flight
 * then, was the split of whatever ran since, often another function's:
 * issue 25.)
 *
 * What a reading finds happened while the innermost call in flight ran (no
 * hook ran meanwhile): it goes to that call's context, as self figures, and
 * inclusive ones are summed from the tree when the run is stored, like time.
 *
 * When PIANO_CPU is unset the hooks do the same work on words that never
 * change: no branch on the mode.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const uint32_t cpu_lock_never;   /* the lock word of a state that measures nothing */
static const uint64_t cpu_head_never;   /* ... and its data_head */
int g_cpu_mode;                         /* PIANO_CPU_*, decided at start */
static int cpu_pages_opened;            /* a thread of this process measures CPU time */

/* A user-mode sample every 1 ms of the thread's CPU time (a kernel timer
 * while the thread runs; no signal): ~1,000 interrupts a second per running
 * thread. Each is a record of a bare header (sample_type 0) in the ring. */
enum { CPU_SAMPLE_NS = 1000000, CPU_RECORD = sizeof(struct perf_event_header) };
static size_t cpu_map_bytes;   /* the page and one page of ring */

void cpu_mode_init(void)
{
    const char *v = getenv("PIANO_CPU");
    g_cpu_mode = v && *v && strcmp(v, "0") != 0 ? PIANO_CPU_PERF : PIANO_CPU_OFF;
    long page = sysconf(_SC_PAGESIZE);
    cpu_map_bytes = 2 * (size_t)(page > 0 ? page : 4096);
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
    /* The page's lock word moves at every sched-in, whatever is excluded;
     * samples are taken in user mode only, which is also what
     * perf_event_paranoid 2, the usual setting, allows an unprivileged user. */
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.sample_period = CPU_SAMPLE_NS;
    a.sample_type = 0;
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
    /* Read-only: the ring is overwritten, never full; data_head counts every
     * byte written. Without the ring page no sample is written: a thread
     * that cannot map it (the locked-memory limit) is not measured. */
    void *p = mmap(NULL, cpu_map_bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* Takes the anchor: the clocks now. */
static void cpu_anchor(struct piano_thread *ts)
{
    ts->cpu_lock = __atomic_load_n(ts->cpu_lockp, __ATOMIC_ACQUIRE);
    ts->cpu_mono = mono_ns();
    ts->cpu_ns = thread_cpu_ns();
}

/* Makes ts measure CPU time or not. A thread's state opens its own perf page;
 * a signal handler's state (owner given) runs on the same thread and shares
 * its owner's. */
void cpu_state_init(struct piano_thread *ts, const struct piano_thread *owner)
{
    int saved = errno;
    ts->cpu_lockp = &cpu_lock_never;
    ts->cpu_headp = &cpu_head_never;
    ts->cpu_head = 0;
    ts->cpu_owner = NULL;
    ts->cpu_page = NULL;
    ts->cpu_ok = 0;
    if (g_cpu_mode == PIANO_CPU_OFF || g.run.cpu_mode == PIANO_CPU_REFUSED ||
        (!owner && atomic_load(&g.sandboxed))) {   /* perf_event_open: a system call (sandbox.c) */
        errno = saved;
        return;
    }
    if (owner) {
        if (!owner->cpu_ok) {
            errno = saved;
            return;
        }
        ts->cpu_lockp = owner->cpu_lockp;
        ts->cpu_headp = owner->cpu_headp;
        ts->cpu_owner = (struct piano_thread *)owner;
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
        ts->cpu_headp = (const volatile uint64_t *)&p->data_head;
        __atomic_store_n(&cpu_pages_opened, 1, __ATOMIC_RELAXED);
    }
    cpu_anchor(ts);
    ts->cpu_head = __atomic_load_n(ts->cpu_headp, __ATOMIC_ACQUIRE);
    ts->cpu_ok = 1;
    errno = saved;
}

/* Forgets ts's perf page without unmapping it. */
static void cpu_state_forget(struct piano_thread *ts)
{
    ts->cpu_page = NULL;
    ts->cpu_lockp = &cpu_lock_never;
    ts->cpu_headp = &cpu_head_never;
    ts->cpu_head = 0;
    ts->cpu_owner = NULL;
}

/* The thread's state ends. */
void cpu_state_end(struct piano_thread *ts)
{
    if (ts->cpu_page)
        munmap(ts->cpu_page, cpu_map_bytes);
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
    ts->off_ns = ts->user_ns = 0;
    ts->frame_off0 = 0;
    if (was)
        cpu_state_init(ts, NULL);
}

/* The user-mode samples taken since the thread's page was last looked at
 * (head: its data_head now) go to `to` (and the thread), CPU_SAMPLE_NS
 * each. k keeps the thread's anchor: ts, or the thread a signal handler's
 * state ts runs on (they share the page: what one counted, the other must
 * not count again). */
static void cpu_samples(struct piano_thread *ts, struct piano_thread *k, struct piano_node *to, uint64_t head)
{
    uint64_t user = (head - k->cpu_head) / CPU_RECORD * CPU_SAMPLE_NS;
    k->cpu_head = ts->cpu_head = head;
    k->user_ns += user;
    to->user += user;
}

/* A hook saw the thread scheduled in since the anchor, or a sample taken:
 * gives `to` (and the thread) the user-mode samples, and the off-CPU time
 * since the anchor if the thread was switched out meanwhile; anchors again.
 * Runs inside a hook (hooks.c's in-hook bracket). A signal handler's state
 * uses its thread's anchor. */
void cpu_resync(struct piano_thread *ts, struct piano_node *to)
{
    if (!ts->cpu_ok)
        return;
    struct piano_thread *k = ts->cpu_owner ? ts->cpu_owner : ts;
    if (__atomic_load_n(ts->cpu_lockp, __ATOMIC_ACQUIRE) == k->cpu_lock) {
        ts->cpu_lock = k->cpu_lock;
        cpu_samples(ts, k, to, __atomic_load_n(ts->cpu_headp, __ATOMIC_ACQUIRE));
        return;   /* no switch since the anchor: no clock to read */
    }
    int saved = errno;
    uint64_t mono0 = k->cpu_mono, cpu0 = k->cpu_ns;
    /* The anchor holds only if the thread was not switched out while it was
     * taken (the lock read first is the same after): else the off-CPU time
     * would fall after the reading and count for the next calls. */
    for (int tries = 0; tries < 8; tries++) {
        cpu_anchor(k);
        if (__atomic_load_n(ts->cpu_lockp, __ATOMIC_ACQUIRE) == k->cpu_lock)
            break;
    }
    ts->cpu_lock = k->cpu_lock;
    /* The samples after the clock reading's system call: a timer that
     * expired while the kernel ran with interrupts off (most of a system
     * call's entry and exit on a VM) fires at the first user instruction
     * after it, as a user-mode sample. Read before, they went to the call
     * that an entry hook was starting, whose CPU time the reading is not
     * part of: a pwrite-only function called after each switch showed 12
     * points more user share than back to back, under load (issue 25, item
     * 8; ~5 remain, not explained). */
    cpu_samples(ts, k, to, __atomic_load_n(ts->cpu_headp, __ATOMIC_ACQUIRE));
    uint64_t wall = k->cpu_mono - mono0, cpu = k->cpu_ns - cpu0;
    if (wall > cpu && k->cpu_ns >= cpu0) {
        k->off_ns += wall - cpu;   /* the thread's frame in flight holds it, */
        if (ts != k)
            ts->off_ns += wall - cpu;   /* and the handler's */
        to->off += wall - cpu;
    }
    errno = saved;
}

/* At the run's end: a thread's off-CPU time since its last reading goes to
 * its innermost call in flight (the calls still in flight end with the run).
 * A thread asleep in a call makes no hook that would read it: without this,
 * a daemon's idle threads showed their whole life as CPU time. Another
 * thread's CPU clock is read through its tid (the same process:
 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)); its samples are on its page,
 * mapped in this process. */
void cpu_settle(struct piano_thread *ts, int self)
{
    if (!ts->cpu_ok)
        return;
    struct piano_node *to = PIANO_NODES(ts) + PIANO_STACK(ts)[piano_depth(ts->depth)].node;
    if (self) {
        cpu_resync(ts, to);
        return;
    }
    struct piano_thread *k = ts->cpu_owner ? ts->cpu_owner : ts;   /* the anchor's keeper (cpu_resync) */
    cpu_samples(ts, k, to, __atomic_load_n(ts->cpu_headp, __ATOMIC_ACQUIRE));
    int saved = errno;
    struct timespec c;
    clockid_t clock = (clockid_t)(~(uint32_t)ts->tid << 3 | 6);
    if (clock_gettime(clock, &c) == 0) {
        uint64_t cpu = (uint64_t)c.tv_sec * 1000000000ull + (uint64_t)c.tv_nsec, mono = mono_ns();
        uint64_t anchor_mono = k->cpu_mono, anchor_cpu = k->cpu_ns;
        if (mono > anchor_mono && cpu >= anchor_cpu && mono - anchor_mono > cpu - anchor_cpu) {
            uint64_t off = (mono - anchor_mono) - (cpu - anchor_cpu);
            k->off_ns += off;
            to->off += off;
            /* counted once: the thread's other state settles from here on */
            k->cpu_mono = mono;
            k->cpu_ns = cpu;
        }
    }
    errno = saved;
}

/* The snapshot thread's (snap.c): the calls in flight on the state mapped at
 * slot, read while its thread runs. Their self time so far goes to cpu_self
 * in out (ticks, now: the snapshot's tick), and the innermost call's off-CPU
 * time since the thread's last reading (read through its CPU clock) to off:
 * without them a call burning a core showed no CPU until it returned, then
 * all of it in one window (issue 25). Only the innermost CPU_INFLIGHT_MAX
 * calls count (a deep recursion's outer frames wait for their returns). The
 * stack is read between two reads of the thread's depth: when a hook ran
 * meanwhile nothing is added (the next snapshot has it). Read after the
 * contexts (snap.c), so a call that ends meanwhile is missed, never counted
 * twice; the import keeps cumulative CPU from going down. */
enum { CPU_INFLIGHT_MAX = 4096 };
static uint32_t inflight_fn[CPU_INFLIGHT_MAX];
static uint64_t inflight_self[CPU_INFLIGHT_MAX];

void cpu_inflight_add(const unsigned char *slot, uint64_t *out, uint32_t nfn, uint64_t now)
{
    const struct piano_thread *h = (const void *)slot;
    const struct piano_slot *stack = (const void *)(slot + PIANO_OFF_STACK);
    uint32_t d0 = __atomic_load_n(&h->depth, __ATOMIC_ACQUIRE);
    if (d0 & PIANO_DEPTH_IN_HOOK || d0 == 0)
        return;
    if (d0 > PIANO_STACK_CAP)
        d0 = PIANO_STACK_CAP;
    uint32_t lo = d0 > CPU_INFLIGHT_MAX ? d0 - CPU_INFLIGHT_MAX + 1 : 1, n = 0;
    uint64_t end = now;   /* where the call above (or now) began */
    for (uint32_t k = d0; k >= lo; k--) {
        uint64_t t0 = __atomic_load_n(&stack[k].t0, __ATOMIC_RELAXED);
        uint64_t child = __atomic_load_n(&stack[k].child, __ATOMIC_RELAXED);
        uint32_t fn = __atomic_load_n(&stack[k].fn, __ATOMIC_RELAXED);
        uint64_t span = end > t0 ? end - t0 : 0;
        inflight_fn[n] = fn;
        inflight_self[n++] = span > child ? span - child : 0;
        end = t0 < end ? t0 : end;
    }
    uint64_t mono0 = __atomic_load_n(&h->cpu_mono, __ATOMIC_RELAXED);
    uint64_t cpu0 = __atomic_load_n(&h->cpu_ns, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&h->depth, __ATOMIC_RELAXED) != d0)
        return;
    for (uint32_t i = 0; i < n; i++)
        if (inflight_fn[i] && inflight_fn[i] < nfn)
            out[(size_t)inflight_fn[i] * PIANO_SNAP_N + PIANO_SNAP_cpu_self] += inflight_self[i];
    /* Off the CPU since the thread's last reading: wall less CPU since its
     * anchor (0 while it has run since). Its clock through its tid (same
     * process); a thread that ended has none. */
    uint32_t fn = inflight_fn[0];
    struct timespec c;
    clockid_t clock = (clockid_t)(~__atomic_load_n(&h->tid, __ATOMIC_RELAXED) << 3 | 6);
    if (!fn || fn >= nfn || clock_gettime(clock, &c) != 0)
        return;
    uint64_t cpu = (uint64_t)c.tv_sec * 1000000000ull + (uint64_t)c.tv_nsec, mono = mono_ns();
    if (mono > mono0 && cpu >= cpu0 && mono - mono0 > cpu - cpu0)
        out[(size_t)fn * PIANO_SNAP_N + PIANO_SNAP_off] += (mono - mono0) - (cpu - cpu0);
}
