/*
 * snap.c - snapshots over time (PIANO_INTERVAL=SECS): every SECS seconds a
 * background thread, "piano-snap", sums each function's figures over every
 * thread's contexts and appends a record of those that changed to the snaps
 * file of the spool (spool.h: piano_snap_read).
 *
 * Nothing is added to the per-call path: the thread reads what the hooks
 * already keep in the states file, through a mapping of its own. Those
 * counters are written by their threads while it reads them, without a lock;
 * that is fine because each is an aligned 64-bit word written by one thread
 * only, which a load reads whole (never torn on a 64-bit target), and only
 * ever grows: a snapshot may miss the calls that end while it reads (a
 * call's count and its self time are two stores), never counts one twice,
 * and the next snapshot has them. The loads are relaxed atomics. TSan sees
 * no shared address here: the reader's mapping is not the writers'.
 *
 * The thread starts on the process's first instrumented call (runtime.c
 * thread_start), again in a forked child (fork.c), holds every signal
 * blocked, records nothing, and is stopped before the exit's import
 * (finish.c): a wait on a condition variable, so an exit never waits an
 * interval. It never keeps the process alive either: when the program's
 * last thread is gone (main called pthread_exit), it calls exit(0) as that
 * thread's end would have. States held in anonymous memory (a nearly full disk) are not in
 * the file: their figures appear at the end of the run only.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The shortest interval taken: below it the summing itself, about 1 us per
 * context and thread, would use a real share of a core. */
#define SNAP_MIN_NS 10000000ull          /* 0.01 s */
#define SNAP_MAX_NS (86400ull * 1000000000ull)
#define SNAP_FOLD_CAP (1u << 20)         /* ended threads' slots folded into `ended` (beyond: read each time) */
#define SNAP_ALONE_CHECK_NS 100000000ull /* how often it checks that the program has a thread left */

/* ThreadSanitizer kills a child that starts a thread after a fork of a
 * process with threads: a TSan build takes no snapshots in forked children. */
#if defined(__SANITIZE_THREAD__)
#define SNAP_IN_CHILDREN 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SNAP_IN_CHILDREN 0
#endif
#endif
#ifndef SNAP_IN_CHILDREN
#define SNAP_IN_CHILDREN 1
#endif

static struct {
    uint64_t interval_ns;    /* 0: no snapshots */
    int started;             /* the thread was created */
    int stop;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    /* The snapshot thread's own: PIANO_FN_CAP x PIANO_SNAP_N counters each. */
    uint64_t *sum, *prev;    /* this snapshot's figures, the previous one's */
    uint64_t *ended;         /* the figures of ended threads, read once */
    unsigned char *folded;   /* bit per slot: its thread ended and is in `ended` */
    unsigned char *rec;      /* the record being built */
    int failed;              /* the snaps file could not be written: no more snapshots */
    uint64_t now;            /* the tick of the snapshot being taken */
} snap = { .lock = PTHREAD_MUTEX_INITIALIZER };

#define SNAP_COUNTS_BYTES ((size_t)PIANO_FN_CAP * PIANO_SNAP_N * sizeof(uint64_t))
#define SNAP_REC_BYTES (sizeof(struct piano_snap_hdr) + (size_t)PIANO_FN_CAP * PIANO_SNAP_ENTRY_MAX + PIANO_PV_SLACK)

/* PIANO_INTERVAL, read once at the start. */
/* Whether snapshots are taken: they read ended threads' slots by number
 * (sum_threads), so slots are not reused meanwhile (record.c slot_reuse). */
int snap_active(void)
{
    return snap.interval_ns != 0;
}

void snap_init(void)
{
    const char *v = getenv("PIANO_INTERVAL");
    snap.interval_ns = 0;
    if (!v || !*v)
        return;
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    double ns = s * 1e9;
    if (errno || end == v || *end || !isfinite(s) || ns < (double)SNAP_MIN_NS || ns > (double)SNAP_MAX_NS) {
        say("piano: PIANO_INTERVAL='%s' is not a number of seconds from 0.01 to 86400; no snapshots are taken", v);
        return;
    }
    snap.interval_ns = (uint64_t)ns;
}

/* Adds a context's figures but its calls (which also count as its parent's
 * child calls) to its function's sums o. Returns whether the context owns
 * live blocks (PIANO_HEAP). */
static int node_add(uint64_t *o, const struct piano_node *x, int cpu)
{
    uint64_t self = __atomic_load_n(&x->self, __ATOMIC_RELAXED);
    o[PIANO_SNAP_self] += self;
    /* Frees before allocations: a block is counted allocated (alloc.c) before
     * any thread can free it, so frees read first never exceed them. */
    uint64_t freed = 0, freed_bytes = 0;
    if (g_heap_on) {
        freed = __atomic_load_n(&x->own_frees, __ATOMIC_RELAXED) + __atomic_load_n(&x->owned_frees, __ATOMIC_RELAXED);
        freed_bytes = __atomic_load_n(&x->own_free_bytes, __ATOMIC_RELAXED) +
                      __atomic_load_n(&x->owned_free_bytes, __ATOMIC_RELAXED);
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint64_t allocs = __atomic_load_n(&x->allocs, __ATOMIC_RELAXED);
    uint64_t alloc_bytes = __atomic_load_n(&x->alloc_bytes, __ATOMIC_RELAXED);
    o[PIANO_SNAP_allocs] += allocs;
    o[PIANO_SNAP_alloc_bytes] += alloc_bytes;
    if (cpu) {
        o[PIANO_SNAP_cpu_self] += self;
        o[PIANO_SNAP_off] += __atomic_load_n(&x->off, __ATOMIC_RELAXED);
    }
    if (!g_heap_on)
        return 0;
    /* In use as the import counts it (import_state.c): per context, at least 0. */
    uint64_t in_obj = allocs > freed ? allocs - freed : 0;
    o[PIANO_SNAP_inuse_objects] += in_obj;
    o[PIANO_SNAP_inuse_bytes] += alloc_bytes > freed_bytes ? alloc_bytes - freed_bytes : 0;
    return in_obj != 0;
}

/* Adds the CPU of the calls in flight on the state mapped at slot to out
 * (cpu.c), after its contexts; returns live. Not for the figures of ended
 * threads (none in flight). */
static int inflight_add(const unsigned char *slot, uint64_t *out, uint32_t nfn, int cpu, int live)
{
    if (cpu && out == snap.sum)
        cpu_inflight_add(slot, out, nfn, snap.now);
    return live;
}

/* Adds the figures of the state mapped at slot (its contexts, then its
 * orphan contexts, then the CPU of its calls in flight) to out, for
 * functions below nfn. Returns whether its
 * contexts own live blocks: other threads' frees still change its figures. */
static int slot_add(const unsigned char *slot, uint64_t *out, uint32_t nfn)
{
    const struct piano_thread *h = (const void *)slot;
    const struct piano_node *nodes = (const void *)(slot + PIANO_OFF_NODES);
    int cpu = __atomic_load_n(&h->cpu_ok, __ATOMIC_RELAXED) != 0;
    uint32_t n = __atomic_load_n(&h->n_nodes, __ATOMIC_ACQUIRE);
    int live = 0;
    if (n > PIANO_NODE_CAP)
        n = PIANO_NODE_CAP;
    for (uint32_t i = 1; i < n; i++) {
        const struct piano_node *x = &nodes[i];
        uint32_t fn = __atomic_load_n(&x->fn, __ATOMIC_RELAXED), up = __atomic_load_n(&x->parent, __ATOMIC_RELAXED);
        if (!fn || fn >= nfn)
            continue;
        uint64_t calls = __atomic_load_n(&x->calls, __ATOMIC_RELAXED);
        uint64_t *o = out + (size_t)fn * PIANO_SNAP_N;
        o[PIANO_SNAP_calls] += calls;
        live |= node_add(o, x, cpu);
        uint32_t pfn = up && up < i ? __atomic_load_n(&nodes[up].fn, __ATOMIC_RELAXED) : 0;
        if (pfn && pfn < nfn)
            out[(size_t)pfn * PIANO_SNAP_N + PIANO_SNAP_child_calls] += calls;
    }
    if (!__atomic_load_n(&h->contexts_truncated, __ATOMIC_RELAXED))
        return inflight_add(slot, out, nfn, cpu, live);
    for (uint32_t fn = 2; fn < nfn; fn++) {   /* contexts past PIANO_NODE_CAP: one per function */
        const struct piano_node *x = &nodes[PIANO_NODE_CAP + fn];
        if (__atomic_load_n(&x->fn, __ATOMIC_RELAXED) != fn)
            continue;
        uint64_t *o = out + (size_t)fn * PIANO_SNAP_N;
        o[PIANO_SNAP_calls] += __atomic_load_n(&x->calls, __ATOMIC_RELAXED);
        live |= node_add(o, x, cpu);
    }
    return inflight_add(slot, out, nfn, cpu, live);
}

/* Sums every thread's figures into snap.sum (functions below nfn): the slots
 * of states the file holds whole, each mapped read-only while it is read. An
 * ended thread's slot is read once more, into snap.ended, and not again.
 * Returns 0, or -1 when a slot could not be read (no descriptor left, no
 * address space): that snapshot is not taken, rather than one that shows
 * figures going down. */
static int sum_threads(uint32_t nfn)
{
    size_t bytes = (size_t)nfn * PIANO_SNAP_N * sizeof(uint64_t);
    memcpy(snap.sum, snap.ended, bytes);
    int fd = run_open(PIANO_SPOOL_STATES, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uint32_t nslots = atomic_load(&g.next_slot);   /* each one thread's: no reuse meanwhile */
    for (uint32_t n = 0; n < nslots; n++) {
        if (n < SNAP_FOLD_CAP && (snap.folded[n >> 3] >> (n & 7) & 1))
            continue;
        uint64_t off = piano_slot_offset(n);
        if (off + PIANO_SLOT_SIZE > (uint64_t)st.st_size)
            continue;   /* a thread still making its slot (or one held in memory): the file ends before it */
        unsigned char *slot = mmap(NULL, PIANO_OFF_FNS, PROT_READ, MAP_SHARED, fd, (off_t)off);
        if (slot == MAP_FAILED) {
            close(fd);
            return -1;
        }
        const struct piano_thread *h = (const void *)slot;
        if (h->magic == PIANO_SPOOL_MAGIC && h->version == PIANO_SPOOL_VERSION) {
            /* dead is set after the thread's last call is closed (runtime.c state_end) */
            int ended = __atomic_load_n(&h->dead, __ATOMIC_ACQUIRE) != 0 && n < SNAP_FOLD_CAP;
            /* A state that owns live blocks is read again each time (heap.c
             * keeps it mapped): other threads' frees of them go on reaching it. */
            if (slot_add(slot, snap.sum, nfn))
                ended = 0;
            if (ended) {
                slot_add(slot, snap.ended, nfn);
                snap.folded[n >> 3] |= (unsigned char)(1u << (n & 7));
            }
        }
        munmap(slot, PIANO_OFF_FNS);
    }
    close(fd);
    return 0;
}

/* Encodes the functions whose figures changed since the previous snapshot
 * into snap.rec; returns the record's size. */
static size_t encode_record(uint32_t nfn, uint64_t tick)
{
    unsigned char *p = snap.rec + sizeof(struct piano_snap_hdr);
    uint32_t prev_id = 0, n = 0;
    for (uint32_t fn = 1; fn < nfn; fn++) {
        const uint64_t *now = snap.sum + (size_t)fn * PIANO_SNAP_N, *was = snap.prev + (size_t)fn * PIANO_SNAP_N;
        if (!memcmp(now, was, PIANO_SNAP_N * sizeof *now))
            continue;
        p = piano_pv_put(p, fn - prev_id);
        prev_id = fn;
        for (int c = 0; c < PIANO_SNAP_N; c++)
            p = piano_pv_put(p, piano_zigzag((int64_t)(now[c] - was[c])));
        n++;
    }
    struct piano_snap_hdr h = { PIANO_SNAP_MAGIC, (uint32_t)(p - snap.rec), tick, n, PIANO_SNAP_N };
    memcpy(snap.rec, &h, sizeof h);
    return h.size;
}

/* Appends the record: one write. One that fails half-way is cut off again,
 * so the file never holds a record that is not whole but the last. Returns 0
 * or -1. */
static int append_record(size_t size)
{
    int fd = run_open(PIANO_SPOOL_SNAPS, O_WRONLY | O_CREAT | O_APPEND);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, snap.rec + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int ok = done == size || ftruncate(fd, st.st_size) == 0;
    close(fd);
    return done == size ? 0 : ok ? 1 : -1;
}

static void snap_take(void)
{
    uint32_t nfn = atomic_load(&g.next_fn);
    if (nfn > PIANO_FN_CAP)
        nfn = PIANO_FN_CAP;
    uint64_t tick = piano_now();
    snap.now = tick;
    if (sum_threads(nfn) != 0)
        return;   /* the next one has these changes too */
    size_t size = encode_record(nfn, tick);
    int r = append_record(size);
    if (r < 0) {
        snap.failed = 1;
        say("piano: cannot write %s/" PIANO_SPOOL_SNAPS ": %s; no more snapshots are taken", g.dir, strerror(errno));
        return;
    }
    if (r == 0) {   /* else (not written, cut off again) the next one holds these changes too */
        uint64_t *t = snap.prev;
        snap.prev = snap.sum;
        snap.sum = t;
    }
}

static void *map_zeroed(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void buffers_free(void)
{
    if (snap.sum)
        munmap(snap.sum, SNAP_COUNTS_BYTES);
    if (snap.prev)
        munmap(snap.prev, SNAP_COUNTS_BYTES);
    if (snap.ended)
        munmap(snap.ended, SNAP_COUNTS_BYTES);
    if (snap.folded)
        munmap(snap.folded, SNAP_FOLD_CAP / 8);
    if (snap.rec)
        munmap(snap.rec, SNAP_REC_BYTES);
    snap.sum = snap.prev = snap.ended = NULL;
    snap.folded = snap.rec = NULL;
}

static void add_ns(struct timespec *t, uint64_t ns)
{
    uint64_t v = (uint64_t)t->tv_nsec + ns % 1000000000ull;
    t->tv_sec += (time_t)(ns / 1000000000ull + v / 1000000000ull);
    t->tv_nsec = (long)(v % 1000000000ull);
}

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Whether this thread is the process's last: the others have ended (a main
 * thread that called pthread_exit stays listed, a zombie, until the process
 * ends). Read from /proc/self/task with a buffer on the stack: no malloc. */
static int alone(void)
{
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[4096];
    pid_t others[2];
    int n = 0, many = 0;
    long got;
    pid_t self = (pid_t)syscall(SYS_gettid);
    while (!many && (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long at = 0; at < got;) {
            const char *name = buf + at + 19;   /* struct linux_dirent64: d_name after ino, off, reclen, type */
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            at += reclen;
            pid_t tid = (pid_t)atoi(name);
            if (tid <= 0 || tid == self)
                continue;
            if (n == 2) {
                many = 1;
                break;
            }
            others[n++] = tid;
        }
    close(fd);
    if (many)
        return 0;
    for (int i = 0; i < n; i++) {
        char path[64], stat[512];
        snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)others[i]);
        int sfd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t r = sfd >= 0 ? read(sfd, stat, sizeof stat - 1) : -1;
        if (sfd >= 0)
            close(sfd);
        if (r <= 0)
            continue;   /* gone */
        stat[r] = 0;
        const char *paren = strrchr(stat, ')');
        if (paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X')
            return 0;
    }
    return 1;
}

/* Waits until `next` or a stop; every SNAP_ALONE_CHECK_NS it checks that
 * some thread of the program is left. When none is (the last one called
 * pthread_exit), the process ends as it would have without this thread: exit(0),
 * which stores the run. Returns 1 when it is time for a snapshot, 0 on a stop. */
static int wait_until(const struct timespec *next)
{
    for (;;) {
        struct timespec slice;
        clock_gettime(CLOCK_MONOTONIC, &slice);
        if (!before(&slice, next))
            return 1;
        add_ns(&slice, SNAP_ALONE_CHECK_NS);
        if (before(next, &slice))
            slice = *next;
        while (!snap.stop && pthread_cond_timedwait(&snap.wake, &snap.lock, &slice) != ETIMEDOUT)
            ;
        if (snap.stop)
            return 0;
        if (alone()) {
            pthread_mutex_unlock(&snap.lock);
            exit(0);
        }
    }
}

static void *snap_main(void *arg)
{
    (void)arg;
    tls_starting = 1;   /* never recorded: an instrumented malloc it reached would be piano's own */
    snap.sum = map_zeroed(SNAP_COUNTS_BYTES);
    snap.prev = map_zeroed(SNAP_COUNTS_BYTES);
    snap.ended = map_zeroed(SNAP_COUNTS_BYTES);
    snap.folded = map_zeroed(SNAP_FOLD_CAP / 8);
    snap.rec = map_zeroed(SNAP_REC_BYTES);
    if (!snap.sum || !snap.prev || !snap.ended || !snap.folded || !snap.rec) {
        say("piano: no memory for snapshots; none are taken");
        buffers_free();
        return NULL;
    }
    struct timespec next, now;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&snap.lock);
    while (!snap.stop && !snap.failed) {
        add_ns(&next, snap.interval_ns);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (before(&next, &now)) {   /* late (a stopped process, a loaded machine): the next one from now */
            next = now;
            add_ns(&next, snap.interval_ns);
        }
        if (!wait_until(&next))
            break;
        snap_take();   /* under the lock: a fork waits for it (snap_atfork_prepare) */
    }
    pthread_mutex_unlock(&snap.lock);
    buffers_free();
    return NULL;
}

/* Starts the snapshot thread when PIANO_INTERVAL asks for one and it is not
 * running. */
void snap_start(void)
{
    if (!snap.interval_ns || g.off || __atomic_exchange_n(&snap.started, 1, __ATOMIC_ACQ_REL))
        return;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&snap.wake, &ca);
    pthread_condattr_destroy(&ca);
    snap.stop = 0;
    snap.failed = 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    sigset_t old;
    signals_hold(&old);   /* the thread inherits the mask: no signal of the program is ever run on it */
    int e = pthread_create(&snap.thread, &attr, snap_main, NULL);
    signals_release(&old);
    pthread_attr_destroy(&attr);
    if (e) {
        __atomic_store_n(&snap.started, 0, __ATOMIC_RELEASE);
        say("piano: cannot start the snapshot thread: %s; no snapshots are taken", strerror(e));
        return;
    }
    /* Named here rather than by itself: it is named once it exists (top -H, /proc). */
    pthread_setname_np(snap.thread, "piano-snap");
}

/* Stops the snapshot thread and waits for it (at most one snapshot's sum);
 * on the snapshot thread itself (its exit(0) above), only stops it. */
void snap_stop(void)
{
    if (!snap.started)
        return;
    pthread_mutex_lock(&snap.lock);
    snap.stop = 1;
    pthread_cond_signal(&snap.wake);
    pthread_mutex_unlock(&snap.lock);
    if (!pthread_equal(pthread_self(), snap.thread))
        pthread_join(snap.thread, NULL);
    snap.started = 0;
}

/* A fork waits for a snapshot being taken: the descriptors it has open would
 * otherwise stay open in the child, whose program never opened them. */
void snap_atfork_prepare(void)
{
    pthread_mutex_lock(&snap.lock);
}

void snap_atfork_parent(void)
{
    pthread_mutex_unlock(&snap.lock);
}

/* In a forked child, first: the parent's snapshot thread is not here (the
 * fork held its lock, its buffers are copies). The child's own is started
 * by snap_start once the child's spool is made. */
void snap_fork_child(void)
{
    pthread_mutex_init(&snap.lock, NULL);
    snap.started = 0;
    buffers_free();
    if (!SNAP_IN_CHILDREN)
        snap.interval_ns = 0;
}
