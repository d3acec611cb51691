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
 * interval. It never keeps the process alive either: it is out of the C
 * library's count of threads (nthreads_forget), so the program's last
 * thread ends the process as it would have without piano. States held in
 * anonymous memory (a nearly full disk) are not in the file: their figures
 * appear at the end of the run only.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
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
    int uncounted;           /* under lock: the thread is out of the C library's count (nthreads_forget) */
    int ending;              /* under lock: the thread is ending (nthreads_forget too late) */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    /* The snapshot thread's own: PIANO_FN_CAP x PIANO_SNAP_N counters each. */
    uint64_t *sum, *prev;    /* this snapshot's figures, the previous one's */
    uint64_t *ended;         /* the figures of ended threads, read once */
    unsigned char *folded;   /* bit per slot: its thread ended and is in `ended` */
    unsigned char *rec;      /* the record being built */
    int failed;              /* the snaps file could not be written: no more snapshots */
    pid_t tid;               /* the thread's id (unshare waits until it is gone) */
    /* Made once (buffers_alloc), kept while the thread stops and starts again
     * (unshare): what ended threads counted lives here. Freed in a forked child. */
    int have_buffers;
    /* The snapshot thread's own read-only mapping of each slot below
     * SNAP_FOLD_CAP, kept from one snapshot to the next (mapping a slot and
     * faulting its pages in again every time cost more than summing it):
     * unmapped when its thread's figures are folded into `ended`. */
    unsigned char **maps;
    uint32_t maps_n;         /* slots below it may be mapped */
    /* Under fold_lock: the figures of threads whose slots were handed over for
     * reuse (snap_hand_over): `now` is added at the end of the snapshot being
     * taken (or the next one), `next` at the end of the one after (its thread
     * was already read, live, by the one being taken). cursor: the slots below
     * it have been read by the snapshot being taken; NO_PASS between them. */
    uint64_t *handed_now, *handed_next;
    uint32_t handed_nfn;     /* functions below it may be in handed_now or handed_next */
    uint32_t cursor;
    uint64_t now;            /* the tick of the snapshot being taken */
    /* Span names' figures (span_spool.h PIANO_SPAN_FIGURES), PIANO_SPAN_CAP x
     * PIANO_SPAN_F_N each: this snapshot's, the previous one's. */
    uint64_t *span_sum, *span_prev;
    uint32_t span_n;         /* names read by this snapshot */
} snap = { .lock = PTHREAD_MUTEX_INITIALIZER, .cursor = UINT32_MAX };
#define NO_PASS UINT32_MAX
/* Held while the snapshot thread reads one slot, and while an ending thread
 * hands its slot over for reuse: a slot is read whole as its thread's, or
 * not at all. */
static pthread_mutex_t fold_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------- the C library's count of threads */

/* glibc counts the threads it started and the main thread (__nptl_nthreads):
 * the thread whose end takes that count to 0 (main's pthread_exit, a
 * thread's return or pthread_exit) calls exit(0) there and then, with the
 * program's descriptor table, its buffered output flushed. The snapshot
 * thread, started with pthread_create, is in that count: the program's last
 * thread then ended alone and the process lived on with the snapshot thread,
 * whichever way it found out (the last thread's end seen by piano, or a
 * listing of the threads every SNAP_ALONE_CHECK_NS): two threads ending
 * together both saw the other, a thread piano never saw start ran no piano
 * code, and an exit(0) on the snapshot thread flushed stdout into a table
 * where it is not (own_table). So the snapshot thread is taken out of that
 * count while it runs: the program's threads end the process exactly as
 * without piano, on the same thread, at the same moment, with the same
 * status (exit(0) runs piano's end, which stops the snapshot thread).
 *
 * Taken out by its creator right after pthread_create (a thread the count
 * holds, running: the count never reaches 0 on the way), under snap.lock.
 * Put back by the snapshot thread itself just before it returns (the C
 * library takes it off again at its end), unless the count is 0: then the
 * last thread is in its exit(0) already, stopping this one, and the count
 * stays 0 (the decrement makes it wrap, no second exit). Every end of the
 * snapshot thread is a stop (snap_stop), asked by a thread in the count that
 * waits for it (a restart after a setuid, an unshare: the count is not 0
 * before the snapshot thread's own end), or by the exit: a snapshot thread
 * that fails (no table of its own, no snaps file) waits for that stop rather
 * than ending on its own. A fork's child has a count of 1 (the C library's)
 * and a snapshot thread of its own, taken out the same way.
 *
 * The count is the C library's private variable, found by name and version
 * (dlvsym, GLIBC_PRIVATE): where it is not found (another C library), the
 * snapshot thread stays in the count and shares the program's descriptor
 * table (own_table not made): it ends the process itself when it finds
 * itself alone (alone), with exit(0), on the program's table. */
static unsigned int *nthreads;

/* The address of glibc's thread count, or NULL (test/unit/test_snap_count.c
 * defines its own to test the other case). */
__attribute__((weak)) unsigned int *snap_nthreads_lookup(void)
{
    return dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");
}

/* The snapshot thread, just created, leaves the count: on its creator, under snap.lock. */
static void nthreads_forget(void)
{
    if (nthreads && !snap.ending && !snap.uncounted) {
        __atomic_fetch_sub(nthreads, 1u, __ATOMIC_SEQ_CST);
        snap.uncounted = 1;
    }
}

/* The snapshot thread, about to return, is put back in the count unless it
 * is 0 (the process is in its exit): under snap.lock. */
static void nthreads_restore(void)
{
    snap.ending = 1;
    if (!snap.uncounted)
        return;
    snap.uncounted = 0;
    unsigned int v = __atomic_load_n(nthreads, __ATOMIC_SEQ_CST);
    while (v != 0 && !__atomic_compare_exchange_n(nthreads, &v, v + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        ;
}

/* ---------------------------------------------------------------- piano's own descriptors */

/* The snapshot thread opens files while the program runs: a program may
 * close any descriptor (close_range(3, ~0U)) and open its own at the same
 * number the next moment, and any check-then-close of a number in a table
 * both share can close the program's file instead. So the snapshot thread
 * has a descriptor table of its own (own_table, at its start): nothing it
 * opens or closes is in the program's table, and the program's closes never
 * reach its files. Its table keeps no copy of the program's descriptors (a
 * copy of a pipe's end would delay its reader's end of file), only the
 * files piano kept on the program's thread (user.c held files): the thread
 * is started again after those are opened (snap_restart). That table is
 * made only out of the C library's count (nthreads): a counted snapshot
 * thread ends the process itself (exit(0)) and must flush its stdio into
 * the program's table: it shares it. For that thread, and as a second
 * guard for the other, each descriptor is moved to a high number, its
 * identity (device, inode) kept and checked before each read, write,
 * mapping or close. The descriptors open (and the slot mapped) are listed under
 * own_lock, held from each open to its listing: a fork takes that lock (a
 * system call's wait, never a snapshot's), and the child unmaps the slot
 * (snap_fork_child); its table is a copy of the forking thread's, which never
 * held the snapshot thread's descriptors. */
enum { OWN_TASKS, OWN_STAT, OWN_STATES, OWN_SNAPS, OWN_KEPT_TASKS, OWN_N };
static struct own_fd {
    int fd;
    dev_t dev;
    ino_t ino;
} own_fds[OWN_N] = { { -1, 0, 0 }, { -1, 0, 0 }, { -1, 0, 0 }, { -1, 0, 0 }, { -1, 0, 0 } };
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static void *own_map;   /* a slot mapped by the snapshot thread (sum_threads), or NULL */

/* The lowest number piano's descriptors are moved to: above what programs
 * usually hold, and within the limit (3/4 of it when it is low). */
static int own_floor(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur < 8)
        return 3;
    return r.rlim_cur > 1024 ? 1000 : (int)(r.rlim_cur * 3 / 4);
}

static int same_file(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Whether descriptor k is still the file piano opened. */
static int own_ok(int k)
{
    return same_file(own_fds[k].fd, own_fds[k].dev, own_fds[k].ino);
}

/* Begins an open of descriptor k: own_lock is held until own_take. */
static void own_begin(void)
{
    pthread_mutex_lock(&own_lock);
}

/* What an open of the snapshot thread meant: the run's file `run` (opened
 * by run_open), else `path` relative to `at`; with `flags`. */
struct own_want {
    const char *run;
    int at;
    const char *path;
    int flags;
};

/* Whether fd names the file w meant, open with its flags (access mode and
 * O_APPEND). Checked against w, never taken from fd itself: between the open
 * and this check the program may have closed the number (close_range) and
 * opened a file there, its own or one of piano's that piano opened on the
 * program's thread (a thread's frame buffer growing opens states read-write:
 * taken for the snaps file, it had a snapshot record written over the first
 * slot's header, e2e.snapshots_close_range). */
static int own_is(int fd, const struct own_want *w)
{
    if (fd < 0)
        return 0;
    return w->run ? run_file_is(fd, w->run, w->flags) : fd_names_file(fd, w->at, w->path, w->flags);
}

/* Nothing: a unit test's pause between an open of the snapshot thread and
 * its check (test/unit/test_snap_fds.c defines its own). */
__attribute__((weak)) void snap_own_pause(const char *what, int fd)
{
    (void)what;
    (void)fd;
}

/* Takes fd, just opened as w says (or -1), as descriptor k: when it still
 * names that file, moved high and its identity kept; else it is the
 * program's now, left alone (-1, errno EBADF: tried again later). Releases
 * own_lock. Returns the descriptor, or -1. */
static int own_take(int k, int fd, const struct own_want *w)
{
    int saved = errno;   /* an open's failure, for the caller */
    snap_own_pause(w->run ? w->run : w->path, fd);
    struct stat st;
    if (fd >= 0 && (!own_is(fd, w) || fstat(fd, &st) != 0)) {
        fd = -1;   /* closed by the program, maybe its number reused: nothing of piano's to close */
        saved = EBADF;
    }
    if (fd >= 0) {
        int hi = fd >= own_floor() ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, own_floor());
        if (hi >= 0 && same_file(hi, st.st_dev, st.st_ino) && own_is(hi, w)) {
            if (own_is(fd, w)) {
                snap_own_pause("close", fd);   /* a unit test's pause between the check and the close */
                close(fd);
            }
            fd = hi;
        } else if (hi >= 0) {
            close(hi);   /* the low number was the program's already: not piano's */
            fd = -1;
            saved = EBADF;
        }
    }
    own_fds[k] = (struct own_fd){ fd, fd >= 0 ? st.st_dev : 0, fd >= 0 ? st.st_ino : 0 };
    pthread_mutex_unlock(&own_lock);
    if (fd < 0 && saved != 0)
        errno = saved;
    return fd;
}

/* Closes descriptor k if it is still piano's. */
static void own_close(int k)
{
    pthread_mutex_lock(&own_lock);
    if (own_ok(k))
        close(own_fds[k].fd);
    own_fds[k].fd = -1;
    pthread_mutex_unlock(&own_lock);
}

#define SNAP_COUNTS_BYTES ((size_t)PIANO_FN_CAP * PIANO_SNAP_N * sizeof(uint64_t))
#define SNAP_SPAN_BYTES ((size_t)PIANO_SPAN_CAP * PIANO_SPAN_F_N * sizeof(uint64_t))
#define SNAP_REC_BYTES                                                                                               \
    (sizeof(struct piano_snap_hdr) + (size_t)PIANO_FN_CAP * PIANO_SNAP_ENTRY_MAX +                                   \
     (size_t)PIANO_SPAN_CAP * (1 + PIANO_SPAN_F_N) * 9 + PIANO_PV_SLACK)

/* Whether snapshots are taken (PIANO_INTERVAL, read once at the start). */
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
    nthreads = snap_nthreads_lookup();
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

/* Whether slot n's thread ended and its figures are in `ended` (set by the
 * snapshot thread, cleared by snap_hand_over, both under fold_lock; read
 * without it too: once seen clear, a slot is never seen set again but by
 * the snapshot thread's own fold). */
static int is_folded(uint32_t n)
{
    return n < SNAP_FOLD_CAP && (__atomic_load_n(&snap.folded[n >> 3], __ATOMIC_RELAXED) >> (n & 7) & 1);
}

static void set_folded(uint32_t n, int on)
{
    unsigned char *b = &snap.folded[n >> 3], bit = (unsigned char)(1u << (n & 7));
    __atomic_store_n(b, (unsigned char)(on ? __atomic_load_n(b, __ATOMIC_RELAXED) | bit
                                           : __atomic_load_n(b, __ATOMIC_RELAXED) & ~bit),
                     __ATOMIC_RELAXED);
}

/* Adds `from` (functions below nfn) to `to`. */
static void counts_add(uint64_t *to, const uint64_t *from, uint32_t nfn)
{
    for (size_t i = 0; i < (size_t)nfn * PIANO_SNAP_N; i++)
        to[i] += from[i];
}

/* Sums every thread's figures into snap.sum (functions below nfn): the slots
 * of states the file holds whole, each read through the snapshot thread's
 * own mapping of it. An ended thread's slot is read once more, into
 * snap.ended, and not again (its mapping dropped); a thread whose slot was
 * reused handed its figures over (snap_hand_over), added at the end.
 * Returns 0, or -1 when a slot could not be read (no descriptor left, no
 * address space): that snapshot is not taken, rather than one that shows
 * figures going down. */
static int sum_threads(uint32_t nfn)
{
    size_t bytes = (size_t)nfn * PIANO_SNAP_N * sizeof(uint64_t);
    memcpy(snap.sum, snap.ended, bytes);
    own_begin();
    const struct own_want want = { PIANO_SPOOL_STATES, AT_FDCWD, NULL, O_RDONLY };
    int fd = own_take(OWN_STATES, run_open(want.run, want.flags), &want);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        own_close(OWN_STATES);
        return -1;
    }
    int ok = 1;
    uint32_t nslots = atomic_load(&g.next_slot);
    pthread_mutex_lock(&fold_lock);
    snap.cursor = 0;
    pthread_mutex_unlock(&fold_lock);
    for (uint32_t n = 0; ok && n < nslots; n++) {
        uint64_t off = piano_slot_offset(n);
        if (off + PIANO_SLOT_SIZE > (uint64_t)st.st_size)
            continue;   /* a thread still making its slot (or one held in memory): the file ends before it */
        if (is_folded(n))
            continue;   /* read once more when its thread ended: not again */
        int kept = n < SNAP_FOLD_CAP;
        unsigned char *slot = kept ? snap.maps[n] : NULL;
        if (!slot && !is_folded(n)) {
            pthread_mutex_lock(&own_lock);
            slot = own_ok(OWN_STATES) ? mmap(NULL, PIANO_OFF_FNS, PROT_READ, MAP_SHARED, fd, (off_t)off) : MAP_FAILED;
            if (slot == MAP_FAILED)
                slot = NULL;
            else if (kept)
                snap.maps[n] = slot, snap.maps_n = n >= snap.maps_n ? n + 1 : snap.maps_n;
            else
                own_map = slot;
            pthread_mutex_unlock(&own_lock);
            if (!slot) {
                ok = 0;
                break;
            }
        }
        int drop = 0;
        pthread_mutex_lock(&fold_lock);
        snap.cursor = n;
        const struct piano_thread *h = (const void *)slot;
        if (slot && !is_folded(n) && __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == PIANO_SPOOL_MAGIC &&
            h->version == PIANO_SPOOL_VERSION) {
            /* dead is set after the thread's last call is closed (runtime.c state_end) */
            int ended = __atomic_load_n(&h->dead, __ATOMIC_ACQUIRE) != 0 && kept;
            /* A state that owns live blocks is read again each time (heap.c
             * keeps it mapped): other threads' frees of them go on reaching it. */
            if (slot_add(slot, snap.sum, nfn))
                ended = 0;
            if (ended) {
                slot_add(slot, snap.ended, nfn);
                set_folded(n, 1);
                drop = 1;
            }
        }
        snap.cursor = n + 1;
        pthread_mutex_unlock(&fold_lock);
        if (slot && (drop || !kept)) {
            pthread_mutex_lock(&own_lock);
            munmap(slot, PIANO_OFF_FNS);
            if (kept)
                snap.maps[n] = NULL;
            else
                own_map = NULL;
            pthread_mutex_unlock(&own_lock);
        }
    }
    own_close(OWN_STATES);
    /* Threads that handed their slots over before their reading in this
     * snapshot: in `ended` from now on; those handed over after it, in the next. */
    pthread_mutex_lock(&fold_lock);
    if (ok && snap.handed_nfn) {
        uint32_t hn = snap.handed_nfn;
        counts_add(snap.sum, snap.handed_now, hn < nfn ? hn : nfn);
        counts_add(snap.ended, snap.handed_now, hn);
        memset(snap.handed_now, 0, (size_t)hn * PIANO_SNAP_N * sizeof(uint64_t));
        uint64_t *t = snap.handed_now;
        snap.handed_now = snap.handed_next;
        snap.handed_next = t;
    } else if (!ok) {   /* not taken: what was handed over after its reading goes in the next, read again */
        counts_add(snap.handed_now, snap.handed_next, snap.handed_nfn);
        memset(snap.handed_next, 0, (size_t)snap.handed_nfn * PIANO_SNAP_N * sizeof(uint64_t));
    }
    snap.cursor = NO_PASS;
    pthread_mutex_unlock(&fold_lock);
    return ok ? 0 : -1;
}

/* Whether an ended thread's slot may be reused now (slots.c
 * slot_reuse_state): no snapshots are taken, or the snapshot thread's buffers
 * exist to take its figures (snap_hand_over). Not between the first
 * snap_start's claim (snap.started) and its buffers: the other threads that
 * started meanwhile went on without waiting, and one that ended in that
 * window had its slot's magic cleared with its figures counted nowhere (a
 * whole thread missing from every snapshot: unit.threads, 3 failures in 90
 * runs under load). Its slot is released instead, and the first snapshot
 * reads it dead. have_buffers only goes from 0 to 1 while threads run (a
 * forked child frees them before it has other threads), so a 1 seen here
 * still holds at the hand-over. */
int snap_reuse_ok(void)
{
    return !__atomic_load_n(&snap.interval_ns, __ATOMIC_RELAXED) ||
           __atomic_load_n(&snap.have_buffers, __ATOMIC_ACQUIRE);
}

/* The ended thread ts is about to have its slot zeroed and reused
 * (slots.c slot_reuse_state): its figures go to the snapshots' count of
 * ended threads, exactly once, and its slot is marked free (magic 0) in the
 * same step, so that a snapshot reads it as that thread's, or not at all. */
void snap_hand_over(struct piano_thread *ts)
{
    uint32_t n = ts->slot;
    pthread_mutex_lock(&fold_lock);
    if (snap.have_buffers) {
        if (is_folded(n)) {
            /* read dead by a snapshot already, and counted in `ended`: its
             * slot is read again once the next thread has it */
            set_folded(n, 0);
        } else {
            uint32_t nfn = atomic_load(&g.next_fn);
            if (nfn > PIANO_FN_CAP)
                nfn = PIANO_FN_CAP;
            slot_add((const unsigned char *)ts, snap.cursor != NO_PASS && n < snap.cursor ? snap.handed_next
                                                                                          : snap.handed_now,
                     nfn);
            if (nfn > snap.handed_nfn)
                snap.handed_nfn = nfn;
        }
    }
    __atomic_store_n(&ts->magic, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fold_lock);
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
    /* then the span names whose figures changed */
    uint32_t prev_k = 0, ns = 0;
    for (uint32_t k = 0; k < snap.span_n; k++) {
        const uint64_t *now = snap.span_sum + (size_t)k * PIANO_SPAN_F_N,
                       *was = snap.span_prev + (size_t)k * PIANO_SPAN_F_N;
        if (!memcmp(now, was, PIANO_SPAN_F_N * sizeof *now))
            continue;
        p = piano_pv_put(p, k + 1 - prev_k);
        prev_k = k + 1;
        for (int c = 0; c < PIANO_SPAN_F_N; c++)
            p = piano_pv_put(p, piano_zigzag((int64_t)(now[c] - was[c])));
        ns++;
    }
    struct piano_snap_hdr h = { PIANO_SNAP_MAGIC, (uint32_t)(p - snap.rec), tick, n, PIANO_SNAP_N, ns, PIANO_SPAN_F_N };
    memcpy(snap.rec, &h, sizeof h);
    return h.size;
}

/* Appends the record: one write. One that fails half-way is cut off again,
 * so the file never holds a record that is not whole but the last. Returns 0
 * or -1. */
static int append_record(size_t size)
{
    own_begin();
    const struct own_want want = { PIANO_SPOOL_SNAPS, AT_FDCWD, NULL, O_WRONLY | O_CREAT | O_APPEND };
    int fd = own_take(OWN_SNAPS, run_open(want.run, want.flags), &want);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        own_close(OWN_SNAPS);
        errno = e;
        /* No descriptor left now, or one the program took back: not the disk's fault, tried again next time */
        return e == EMFILE || e == ENFILE || e == EBADF || e == ENOMEM ? 1 : -1;
    }
    size_t done = 0;
    while (done < size) {
        if (!own_ok(OWN_SNAPS))
            break;   /* closed by the program, its number maybe reused: nothing written through it */
        ssize_t w = write(fd, snap.rec + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int e = errno;
    int lost = done != size && !own_ok(OWN_SNAPS);   /* the program took the descriptor back */
    int ok = done == size || lost || ftruncate(fd, st.st_size) == 0;
    own_close(OWN_SNAPS);
    errno = e;
    if (lost && done) {   /* part of a record written: cut off again through a descriptor of its own */
        own_begin();
        const struct own_want cut = { PIANO_SPOOL_SNAPS, AT_FDCWD, NULL, O_WRONLY };
        int again = own_take(OWN_SNAPS, run_open(cut.run, cut.flags), &cut);
        ok = again >= 0 && same_file(again, st.st_dev, st.st_ino) && ftruncate(again, st.st_size) == 0;
        own_close(OWN_SNAPS);
        errno = e;
    }
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
    snap.span_n = spans_snap_read(snap.span_sum);
    size_t size = encode_record(nfn, tick);
    int r = append_record(size);
    if (r < 0) {
        snap.failed = 1;
        if (root_moved())
            return;   /* a chroot: the spool is out of reach; the exit says where the run is */
        say("piano: cannot write %s/" PIANO_SPOOL_SNAPS ": %s; no more snapshots are taken", g.dir, strerror(errno));
        return;
    }
    if (r == 0) {   /* else (not written, cut off again) the next one holds these changes too */
        uint64_t *t = snap.prev;
        snap.prev = snap.sum;
        snap.sum = t;
        t = snap.span_prev;
        snap.span_prev = snap.span_sum;
        snap.span_sum = t;
    }
}

static void *map_zeroed(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void buffers_free(void)
{
    uint64_t **counts[] = { &snap.sum, &snap.prev, &snap.ended, &snap.handed_now, &snap.handed_next };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        if (*counts[i])
            munmap(*counts[i], SNAP_COUNTS_BYTES);
        *counts[i] = NULL;
    }
    if (snap.maps) {
        for (uint32_t n = 0; n < snap.maps_n; n++)
            if (snap.maps[n])
                munmap(snap.maps[n], PIANO_OFF_FNS);
        munmap(snap.maps, SNAP_FOLD_CAP * sizeof *snap.maps);
    }
    snap.maps = NULL;
    snap.maps_n = 0;
    if (snap.folded)
        munmap(snap.folded, SNAP_FOLD_CAP / 8);
    if (snap.rec)
        munmap(snap.rec, SNAP_REC_BYTES);
    uint64_t **spans[] = { &snap.span_sum, &snap.span_prev };
    for (size_t i = 0; i < 2; i++) {
        if (*spans[i])
            munmap(*spans[i], SNAP_SPAN_BYTES);
        *spans[i] = NULL;
    }
    snap.span_n = 0;
    snap.folded = snap.rec = NULL;
    snap.handed_nfn = 0;
    snap.have_buffers = 0;
}

/* The snapshot thread's buffers, made once: 0, or -1 (none made). */
static int buffers_alloc(void)
{
    if (snap.have_buffers)
        return 0;
    snap.sum = map_zeroed(SNAP_COUNTS_BYTES);
    snap.prev = map_zeroed(SNAP_COUNTS_BYTES);
    snap.ended = map_zeroed(SNAP_COUNTS_BYTES);
    snap.handed_now = map_zeroed(SNAP_COUNTS_BYTES);
    snap.handed_next = map_zeroed(SNAP_COUNTS_BYTES);
    snap.folded = map_zeroed(SNAP_FOLD_CAP / 8);
    snap.maps = map_zeroed(SNAP_FOLD_CAP * sizeof *snap.maps);
    snap.rec = map_zeroed(SNAP_REC_BYTES);
    snap.span_sum = map_zeroed(SNAP_SPAN_BYTES);
    snap.span_prev = map_zeroed(SNAP_SPAN_BYTES);
    if (!snap.sum || !snap.prev || !snap.ended || !snap.handed_now || !snap.handed_next || !snap.folded ||
        !snap.maps || !snap.rec || !snap.span_sum || !snap.span_prev) {
        buffers_free();
        return -1;
    }
    pthread_mutex_lock(&fold_lock);
    __atomic_store_n(&snap.have_buffers, 1, __ATOMIC_RELEASE);   /* read unlocked by snap_reuse_ok */
    pthread_mutex_unlock(&fold_lock);
    return 0;
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
 * ends). Read from /proc/self/task with a buffer on the stack: no malloc; or
 * through the listing kept open before a chroot (snap_chroot_prepare). 1 only on
 * positive evidence: the whole listing read, this thread in it, and each
 * other thread seen ended (its stat says Z or X, or it is gone: ENOENT,
 * ESRCH). Anything that cannot be read (no descriptor left at the limit, no
 * /proc, a descriptor the program closed) is 0: the program goes on. */
static int alone(void)
{
    int kept = own_fds[OWN_KEPT_TASKS].fd >= 0, fd;
    if (kept) {
        fd = own_fds[OWN_KEPT_TASKS].fd;
        if (!own_ok(OWN_KEPT_TASKS) || lseek(fd, 0, SEEK_SET) != 0)
            return 0;
    } else {
        own_begin();
        const struct own_want want = { NULL, AT_FDCWD, "/proc/self/task", O_RDONLY };
        fd = own_take(OWN_TASKS, open(want.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), &want);
        if (fd < 0)
            return 0;
    }
    int dir_k = kept ? OWN_KEPT_TASKS : OWN_TASKS;
    char buf[4096];
    pid_t others[2];
    int n = 0, many = 0, seen_self = 0;
    long got = -1;
    pid_t self = (pid_t)syscall(SYS_gettid);
    while (!many && own_ok(dir_k) && (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long at = 0; at + 19 < got;) {
            const char *name = buf + at + 19;   /* struct linux_dirent64: d_name after ino, off, reclen, type */
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            if (reclen < 20 || at + reclen > got)
                break;
            at += reclen;
            pid_t tid = (pid_t)atoi(name);
            if (tid == self)
                seen_self = 1;
            if (tid <= 0 || tid == self)
                continue;
            if (n == 2) {
                many = 1;
                break;
            }
            others[n++] = tid;
        }
    int read_whole = got == 0 && own_ok(dir_k);
    if (!kept)
        own_close(OWN_TASKS);
    if (many || !read_whole || !seen_self)
        return 0;
    for (int i = 0; i < n; i++) {
        char path[64], stat[512];
        snprintf(path, sizeof path, "%d/stat", (int)others[i]);
        int sfd = -1;
        if (kept && own_ok(OWN_KEPT_TASKS)) {
            own_begin();
            const struct own_want want = { NULL, fd, path, O_RDONLY };
            sfd = own_take(OWN_STAT, openat(fd, path, O_RDONLY | O_CLOEXEC), &want);
        } else if (!kept) {
            char full[96];
            snprintf(full, sizeof full, "/proc/self/task/%s", path);
            own_begin();
            const struct own_want want = { NULL, AT_FDCWD, full, O_RDONLY };
            sfd = own_take(OWN_STAT, open(full, O_RDONLY | O_CLOEXEC), &want);
        }
        if (sfd < 0) {
            if (errno == ENOENT || errno == ESRCH)
                continue;   /* gone */
            return 0;
        }
        ssize_t r = own_ok(OWN_STAT) ? read(sfd, stat, sizeof stat - 1) : -2;
        int e = errno;
        own_close(OWN_STAT);
        if (r == -1 && e == ESRCH)
            continue;   /* gone */
        if (r <= 0)
            return 0;
        stat[r] = 0;
        const char *paren = strrchr(stat, ')');
        if (!paren || paren[1] != ' ' || (paren[2] != 'Z' && paren[2] != 'X'))
            return 0;
    }
    return 1;
}

/* Waits until `next` or a stop; every SNAP_ALONE_CHECK_NS it checks that
 * some thread of the program is left, while it is in the C library's count
 * (nthreads: not found, or its creator has not taken it out yet). When none
 * is (the last one called pthread_exit), the process ends as it would have
 * without this thread: exit(0), which stores the run. Returns 1 when it is
 * time for a snapshot, 0 on a stop. */
static int wait_until(const struct timespec *next)
{
    for (;;) {
        struct timespec slice;
        clock_gettime(CLOCK_MONOTONIC, &slice);
        if (!before(&slice, next))
            return 1;
        add_ns(&slice, SNAP_ALONE_CHECK_NS);
        if (snap.uncounted || before(next, &slice))
            slice = *next;
        while (!snap.stop && pthread_cond_timedwait(&snap.wake, &snap.lock, &slice) != ETIMEDOUT)
            ;
        if (snap.stop)
            return 0;
        if (!snap.uncounted && alone()) {
            pthread_mutex_unlock(&snap.lock);
            exit(0);
        }
    }
}

/* Closes every descriptor from `lo` to `hi` (inclusive) of the calling
 * thread's own table. */
static void close_span(unsigned lo, unsigned hi)
{
    if (lo > hi)
        return;
    if (syscall(SYS_close_range, lo, hi, 0u) == 0)
        return;
    struct rlimit r;   /* no close_range (before Linux 5.9): one at a time, up to the limit */
    unsigned top = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < (rlim_t)hi ? (unsigned)r.rlim_cur : hi;
    for (unsigned fd = lo; fd <= top && fd >= lo; fd++)
        close((int)fd);
}

/* Gives the calling (snapshot) thread a descriptor table of its own: a copy
 * of the program's (unshare(CLONE_FILES), made directly: the interposer
 * below is the program's), of which every descriptor is closed but the
 * files piano kept there for this thread (user.c held files; the listing
 * of threads kept before a chroot is for a thread in the C library's count,
 * which has no table of its own). Its standard error is closed too: its
 * messages (say) go to the spool's log. Returns 0, or -1 (the table is the
 * program's still). */
static int own_table(void)
{
    if (syscall(SYS_unshare, (long)CLONE_FILES) != 0)
        return -1;
    int keep[PIANO_HELD_MAX];
    int n = held_fds(keep, PIANO_HELD_MAX);
    for (int i = 1; i < n; i++)   /* sorted: a handful */
        for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
            int t = keep[j];
            keep[j] = keep[j - 1];
            keep[j - 1] = t;
        }
    unsigned lo = 0;
    for (int i = 0; i < n; i++) {
        if ((unsigned)keep[i] > lo)
            close_span(lo, (unsigned)keep[i] - 1);
        lo = (unsigned)keep[i] + 1;
    }
    close_span(lo, ~0U);
    return 0;
}

static void *snap_main(void *arg)
{
    (void)arg;
    tls_starting = 1;   /* never recorded: an instrumented malloc it reached would be piano's own */
    __atomic_store_n(&snap.tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    /* Out of the C library's count only: else it shares the program's table (nthreads) */
    int failed = nthreads && own_table() != 0;
    if (failed)   /* its opens would share the program's table: none are made */
        say("piano: cannot give the snapshot thread a descriptor table of its own: %s; no snapshots are taken",
            strerror(errno));
    struct timespec next, now;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&snap.lock);
    if (failed)
        snap.failed = 1;
    while (!snap.stop && !snap.failed) {
        add_ns(&next, snap.interval_ns);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (before(&next, &now)) {   /* late (a stopped process, a loaded machine): the next one from now */
            next = now;
            add_ns(&next, snap.interval_ns);
        }
        if (!wait_until(&next))
            break;
        snap_take();   /* under the lock: a stop waits for it; a fork does not (own_lock) */
    }
    /* Out of the count, it ends on a stop only (nthreads): a failure waits for it */
    while (nthreads && !snap.stop)
        pthread_cond_wait(&snap.wake, &snap.lock);
    if (nthreads)
        nthreads_restore();
    pthread_mutex_unlock(&snap.lock);
    return NULL;   /* the buffers stay: a thread started again goes on from them */
}

/* Nothing: a unit test's pause between the first snap_start's claim and its
 * buffers (test/unit/test_snap_start.c defines its own). */
__attribute__((weak)) void snap_start_pause(void)
{
}

/* Starts the snapshot thread when PIANO_INTERVAL asks for one and it is not
 * running. Other threads do not wait for it: they may end before its
 * buffers exist (snap_reuse_ok). */
void snap_start(void)
{
    if (!snap.interval_ns || g.off || __atomic_exchange_n(&snap.started, 1, __ATOMIC_ACQ_REL))
        return;
    snap_start_pause();
    if (buffers_alloc() != 0) {
        say("piano: no memory for snapshots; none are taken");
        __atomic_store_n(&snap.interval_ns, 0, __ATOMIC_RELAXED);   /* read unlocked by snap_reuse_ok */
        return;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&snap.wake, &ca);
    pthread_condattr_destroy(&ca);
    snap.stop = 0;
    snap.failed = 0;
    snap.uncounted = snap.ending = 0;   /* no snapshot thread now: the last one was joined */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    sigset_t old;
    signals_hold(&old);   /* the thread inherits the mask: no signal of the program is ever run on it */
    __atomic_store_n(&snap.tid, 0, __ATOMIC_RELEASE);   /* until it runs (without_snap_thread waits for it to be gone) */
    int e = pthread_create(&snap.thread, &attr, snap_main, NULL);
    signals_release(&old);
    pthread_attr_destroy(&attr);
    if (e) {
        __atomic_store_n(&snap.started, 0, __ATOMIC_RELEASE);
        say("piano: cannot start the snapshot thread: %s; no snapshots are taken", strerror(e));
        return;
    }
    pthread_mutex_lock(&snap.lock);
    nthreads_forget();   /* on this thread, in the count and running: it never reaches 0 here */
    pthread_mutex_unlock(&snap.lock);
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

/* A fork does not wait for a snapshot being taken (with 300 threads of 430
 * contexts a pass takes ~100 ms): it waits only while the snapshot thread
 * opens or closes a descriptor or maps a slot (own_lock), so that the child
 * knows what it had open: snap_fork_child closes it there. */
void snap_atfork_prepare(void)
{
    pthread_mutex_lock(&own_lock);
}

void snap_atfork_parent(void)
{
    pthread_mutex_unlock(&own_lock);
}

/* In a forked child, first: the parent's snapshot thread is not here (its
 * buffers are copies, its mapping listed in own_map, which the fork held
 * still: unmapped here). Out of the C library's count (nthreads), its
 * descriptors were in its own table, never in this child's (a copy of the
 * forking thread's): their numbers are the program's here, left alone, and
 * forgotten. Counted, it shared the program's table: what it had open is
 * closed here, each descriptor only if it is still that file (the listing
 * kept before a chroot too). The child's own thread is started by
 * snap_start once the child's spool is made. */
void snap_fork_child(void)
{
    for (int k = 0; k < OWN_N; k++) {
        if (!nthreads && own_ok(k))
            close(own_fds[k].fd);
        own_fds[k].fd = -1;
    }
    if (own_map)
        munmap(own_map, PIANO_OFF_FNS);
    own_map = NULL;
    pthread_mutex_init(&own_lock, NULL);
    pthread_mutex_init(&fold_lock, NULL);
    pthread_mutex_init(&snap.lock, NULL);
    snap.cursor = NO_PASS;
    snap.started = 0;
    snap.uncounted = snap.ending = 0;   /* the C library's count is 1 here: this thread */
    buffers_free();
    if (!SNAP_IN_CHILDREN)
        snap.interval_ns = 0;
}

/* ---------------------------------------------------------------- unshare, setns, chroot */

/* unshare(CLONE_NEWUSER), as setns into a user namespace, needs a process of
 * one thread: the snapshot thread made every such call of a single-threaded
 * program fail with EINVAL (a container launcher's fork, then unshare, in the
 * child). When the call fails so while the snapshot thread runs, it is
 * stopped (its snapshot finished), the call made again once the kernel has
 * let the thread go, and the thread started again, whatever the result: a
 * program with threads of its own gets its EINVAL as before. */
static int snap_running(void)
{
    return __atomic_load_n(&snap.started, __ATOMIC_ACQUIRE) != 0;
}

/* Starts the snapshot thread again, when it runs: its new table is a copy
 * of the program's now, with the files piano kept since on the program's
 * thread (user.c held_take, chroot below). Waits for a snapshot being
 * taken, at most. */
void snap_restart(void)
{
    if (!snap_running())
        return;
    snap_stop();
    snap_start();
}

static long without_snap_thread(long nr, long a, long b)
{
    snap_stop();
    /* Its id read once it has ended: a thread stopped before it first ran
     * (a forked child's, started a moment ago) wrote it only then, and read
     * before, the call was made without waiting (e2e snapshots_unshare failed
     * so once in CI). pthread_join returns when the thread's id word is
     * cleared, a moment before the kernel takes it out of the thread group. */
    pid_t tid = __atomic_load_n(&snap.tid, __ATOMIC_ACQUIRE);
    for (int i = 0; tid > 0 && i < 20000 && syscall(SYS_tgkill, getpid(), tid, 0) == 0; i++) {
        struct timespec d = { 0, 50000 };
        nanosleep(&d, NULL);
    }
    long r = syscall(nr, a, b);
    int e = errno;
    snap_start();
    errno = e;
    return r;
}

#define SINGLE_THREADED_ONLY (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

PIANO_API int unshare(int flags)
{
    long r = syscall(SYS_unshare, (long)flags);
    if (r != 0 && errno == EINVAL && (flags & SINGLE_THREADED_ONLY) && snap_running())
        r = without_snap_thread(SYS_unshare, (long)flags, 0);
    return (int)r;
}

PIANO_API int setns(int fd, int nstype)
{
    long r = syscall(SYS_setns, (long)fd, (long)nstype);
    if (r != 0 && errno == EINVAL && (nstype == 0 || (nstype & CLONE_NEWUSER)) && snap_running())
        r = without_snap_thread(SYS_setns, (long)fd, (long)nstype);
    return (int)r;
}

/* A chroot into a folder without /proc would leave a snapshot thread in the
 * C library's count (nthreads: another C library) unable to see that the
 * program's last thread has ended (main called pthread_exit): the process
 * lived on, every signal blocked. So the listing of this process's threads
 * is opened before the root changes and kept (a high, close-on-exec
 * descriptor, checked by identity before each use). Out of the count, the
 * snapshot thread needs no listing: none is opened. */
PIANO_API int chroot(const char *path)
{
    int kept_now = 0;
    if (snap_running() && !nthreads && own_fds[OWN_KEPT_TASKS].fd < 0) {
        own_begin();
        const struct own_want want = { NULL, AT_FDCWD, "/proc/self/task", O_RDONLY };
        kept_now = own_take(OWN_KEPT_TASKS, open(want.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), &want) >= 0;
    }
    long r = syscall(SYS_chroot, path);
    int e = errno;
    if (r != 0 && kept_now)
        own_close(OWN_KEPT_TASKS);
    else if (kept_now)
        snap_restart();   /* the listing, opened here, is in its table from now on */
    errno = e;
    return (int)r;
}
