/*
 * finish.c - the end of a run: at exit the process imports its own spool into
 * the database (store/exit_import.h, the recorder's one call into store/), or
 * leaves it for the next piano-db command.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "exit_import.h"   /* the one call into store/: the import at exit (rt_exit_import) */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The k-th smallest of v[0..n) (v is reordered): Hoare's selection, linear
 * on average. Not qsort: that may call malloc, and a program's own malloc may
 * be instrumented; an insertion sort of the 501 measurements took ~0.1 ms of
 * every exit. */
static int64_t select_i64(int64_t *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t pivot = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                int64_t t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;   /* v[j+1..i-1] all equal the pivot, k among them */
    }
    return v[k];
}

/* Measures what one instrumented call adds to its caller's time beyond its own
 * measured time (the hooks' work before the entry tick and after the exit
 * tick), on a scratch state so that nothing is recorded. piano-db subtracts it
 * from self times. Returns ticks per call. */
static __attribute__((noinline)) double measure_overhead(void)
{
    struct piano_thread *real = piano_tls;
    struct piano_thread *scratch = mmap(NULL, PIANO_THREAD_FILE_SIZE, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (scratch == MAP_FAILED)
        return 0;
    scratch->epoch = 1;
    scratch->n_nodes = 1;
    scratch->n_pages = 1;
    scratch->frame_depth = UINT32_MAX;   /* never opens a frame */
    scratch->busy = 1;
    cpu_state_end(scratch);   /* measures nothing: the hooks' CPU checks never fire */
    PIANO_STACK(scratch)[0].sp = UINTPTR_MAX;
    static uint8_t on = 1;
    struct piano_site site = { .id = PIANO_FN_OVERFLOW, .name = "", .file = "", .on = &on };
    /* The median of many single measurements: a mean would carry every
     * interrupt and cache miss of the loop into each corrected call. 501 of
     * them: the median moves by under 1% from 2,001, and every process pays
     * this at exit (0.45 ms with 2,001 in a short process). */
    enum { N = 501 };
    int64_t cost[N];
    uint64_t *inside = &PIANO_NODES(scratch)[1].self;   /* the one context, no children: self = total */
    piano_tls = scratch;
    for (int i = 0; i < N; i++) {
        uint64_t before = *inside;
        uint64_t a = piano_now();
        __piano_enter(&site);
        __piano_exit(&site);
        uint64_t b = piano_now();
        uint64_t c = piano_now();
        uint64_t d = piano_now();
        cost[i] = (int64_t)(b - a) - (int64_t)(d - c) - (int64_t)(*inside - before);
    }
    piano_tls = real;
    munmap(scratch, PIANO_THREAD_FILE_SIZE);
    double per_call = (double)select_i64(cost, N, N / 2);
    return per_call > 0 ? per_call : 0;
}

/* Writes an anonymous state's frame buffer, as it is now, into its slot of
 * states for the import (the thread may go on recording in it: the buffer
 * stays mapped). */
static void snapshot_anon_buffer(struct piano_thread *ts)
{
    struct piano_chunk_hdr *h = (struct piano_chunk_hdr *)ts->chunk;
    if (!h)
        return;
    piano_spool_name name = piano_spool_slot_name(ts->thread);
    int fd = run_open(PIANO_SPOOL_STATES, O_WRONLY);
    size_t used = __atomic_load_n(&h->used, __ATOMIC_ACQUIRE);
    struct piano_chunk_hdr copy = { h->magic, used, __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE) };
    off_t at = (off_t)(piano_slot_offset(ts->slot) + PIANO_SLOT_BUF);
    int ok = fd >= 0 && write_all(fd, &copy, sizeof copy, at) == 0 &&
             write_all(fd, ts->chunk + sizeof copy, used, at + (off_t)sizeof copy) == 0;
    if (!ok) {
        ts->frames_dropped += ts->chunk_frames;
        say("piano: cannot write the frame buffer of %s: %s; its frames are counted as dropped", name.s,
            strerror(errno));
    }
    if (fd >= 0)
        close(fd);
}

/* Calls a state recorded (its contexts' calls, and calls too deep for its
 * shadow stack). */
static uint64_t state_calls(const struct piano_thread *ts)
{
    const struct piano_node *nodes = PIANO_NODES(ts);
    uint64_t calls = ts->deep_calls;
    for (uint32_t i = 1; i < ts->n_nodes && i < PIANO_NODE_CAP; i++)
        calls += nodes[i].calls;
    uint32_t nfn = atomic_load(&g.next_fn);
    for (uint32_t i = 0; ts->contexts_truncated && i < nfn && i < PIANO_FN_CAP; i++)
        calls += nodes[PIANO_NODE_CAP + i].calls;
    return calls;
}

/* Stores this run: called once, at exit (a library destructor runs after the
 * program's own atexit handlers and static destructors). Other threads may
 * still be recording: their states and buffers stay mapped, and the import
 * reads a copy of what they hold now. */
/* A PIANO_STORE=later run that took a spare folder follows a store of the
 * runs before it (a piano-db command between runs): few runs wait. Its
 * states are left as they are when small (PIANO_SPARE_WARM_MAX): packing
 * and punching them cost a short run about a millisecond (bench/README.md,
 * "Storing runs later without packing"), and piano-db's store then keeps
 * them warm for the next run (spool.h). Runs that find no spare pile up (a
 * test suite with no piano-db between its runs): they pack. */
static int leave_unpacked(void)
{
    if (!g.took_spare)
        return 0;
    int fd = run_open(PIANO_SPOOL_STATES, O_RDONLY);
    struct stat st;
    int small = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_blocks * 512 <= PIANO_SPARE_WARM_MAX;
    if (fd >= 0)
        close(fd);
    return small;
}

/* What the exit takes from the kernel, taken early because the exit will not
 * be able to (an exec, a seccomp sandbox): the allocator, the command line,
 * and the hooks' cost (returned). piano's own allocations meanwhile are not
 * the program's (a child that exec'd recording nothing of its own stays no
 * run: store/import.c). */
double exit_measures_early(void)
{
    struct piano_thread *ts = piano_tls;
    uint32_t busy = ts ? ts->busy : 0;
    if (ts)
        ts->busy = 1;
    double overhead = measure_overhead();
    allocator_detect(g.run.allocator, sizeof g.run.allocator);
    refresh_command();
    if (ts)
        ts->busy = busy;
    return overhead;
}

/* The exit of a run whose program entered a seccomp sandbox (sandbox.c), in
 * memory only: the next piano-db command stores the run, complete. */
static void sandbox_finish(void)
{
    /* No system call from here (sandbox.c): what piano_finish does with
     * them was done before the filter, or is left to the next piano-db command. */
    struct piano_thread *self = piano_tls;
    contexts_finish(self);   /* its parked contexts' calls are in flight at the end too */
    if (self)
        self->busy = 1;
    g.run.end_tick = piano_now();
    spans_finish(g.run.end_tick);
    g.run.overhead_ticks = g.sandbox_overhead;
    g.run.status = 1;
    __atomic_store_n(&g.finished, 1, __ATOMIC_SEQ_CST);
    piano_tls = NULL;
    tls_ended = 1;
    if (g.run_map && g.run_map_pid == g.run.pid)   /* mapped: no write (a forked child's is its own) */
        memcpy(g.run_map, &g.run, sizeof g.run);
    if (self)
        self->busy = 0;
}

static void piano_finish(void)
{
    if (atomic_load(&g.state) != 2 || g.off || g.finished)
        return;
    if (atomic_load(&g.sandboxed)) {
        sandbox_finish();
        return;
    }
    int saved = errno;
    if ((uint32_t)getpid() != g.run.pid) {
        /* A child made without fork's handlers (a raw clone): the spool is
         * its parent's, still live. */
        g.finished = 1;
        errno = saved;
        return;
    }
    sanitizer_checks_off();
    fns_settle();   /* a run without calls: its spool names what it registered, as any run's */
    snap_stop();   /* before the end: no snapshot after it */
    struct quiet q;
    quiet_begin(&q);
    struct piano_thread *self = piano_tls;
    contexts_finish(self);   /* its parked contexts' calls are in flight at the end too */
    if (self)
        self->busy = 1;
    g.run.end_tick = piano_now();
    spans_finish(g.run.end_tick);   /* spans still open: counted, unfinished */
    g.run.overhead_ticks = measure_overhead();
    g.run.status = 1;
    __atomic_store_n(&g.finished, 1, __ATOMIC_SEQ_CST);
    slot_reuse_wait();   /* a thread ending now zeroes no slot the store reads */
    /* From here this thread records nothing: the import must not count its
     * own calls (a program's instrumented malloc, used by SQLite). */
    piano_tls = NULL;
    tls_ended = 1;
    tls_storing = 1;   /* the process is ending: never reset */
    heap_finish();
    /* Anonymous states (and their buffers) are read from memory; they go to
     * files only when the run cannot be stored now. Ended ones were kept
     * (state_end); live ones stay mapped while their threads go on. */
    struct piano_import_mem mem = { NULL, 0 };
    size_t cap = 0;
    pthread_mutex_lock(&g.threads_lock);
    for (struct piano_thread *t = g.threads; t; t = t->next) {
        refresh_name(t, t == self);
        cpu_settle(t, t == self);
        cap += 2;
    }
    for (struct piano_thread *t = g.kept; t; t = t->next)
        cap++;
    const struct piano_thread **states =
        cap ? mmap(NULL, cap * sizeof *states, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
    if (states == MAP_FAILED)
        states = NULL;
    for (int list = 0; states && list < 2; list++)
        for (struct piano_thread *t = list ? g.kept : g.threads; t; t = t->next)
            for (struct piano_thread *s = t; s; s = s == t && !list ? t->sig : NULL)
                if (s->anon && mem.n < cap)
                    states[mem.n++] = s;
    mem.states = states;
    pthread_mutex_unlock(&g.threads_lock);
    allocator_detect(g.run.allocator, sizeof g.run.allocator);
    refresh_command();   /* its title at the end, as ps showed it */
    save_run_header();
    char err[PIANO_WHY_MAX] = "";
    /* A program that changed its user (a daemon's worker that dropped root)
     * can open neither the database nor the spool folder of the user that
     * started it: the run, complete, stays in the spool (written through the
     * files kept open, user.c), and the next piano-db command of that user
     * stores it. Nothing is lost: nothing is said. */
    int moved = geteuid() != g.start_euid;
    /* PIANO_STORE=later: the same, asked for. The exit loads no SQLite and
     * opens no database (what that saves: bench/README.md, "Storing runs
     * later"); the run, complete, is stored by the next piano-db command. */
    int later = g.store_later;
    /* Its states packed into the ended file (where the user is still the
     * spool's: else they stay as they are, written through the open files),
     * unless runs are being stored as they come (below). */
    int pack = later && !moved && !leave_unpacked();
    /* After a chroot, the database's path names a file in the jail: the run
     * is not stored there, nor anywhere; its spool (outside, written through
     * what was opened before) is stored by the next piano-db command. */
    int jailed = !moved && !later && root_moved();
    /* A database another process holds locked delays the exit by at most
     * PIANO_EXIT_WAIT_MS: the run then stays in the spool.
     * exit() from a signal handler that interrupted this thread's malloc or
     * free: SQLite's allocations would find the allocator halfway through a
     * change (glibc's thread cache: a crash; its arena lock: a hang). */
    int r = PIANO_EXIT_NOT_OPENED;
    if (tls_in_alloc)
        snprintf(err, sizeof err, "exit was called inside an allocation (from a signal handler), where storing "
                                  "could break the program's allocator");
    else if (!moved && !jailed && !later)
        r = rt_exit_import(g.db_path, g.dir, &mem, err, sizeof err);
    if (jailed) {
        say("piano: the program changed its root folder (chroot); the run is not stored inside it: it stays in %s "
            "and the next piano-db command stores it", g.dir);
    } else if (r == PIANO_EXIT_NOT_OPENED && !moved && !later) {
        say("piano: %s; the run stays in %s and the next piano-db command stores it", err, g.dir);
    } else if (r == PIANO_EXIT_NOT_STORED) {
        say("piano: cannot store the run: %s; it stays in %s and the next piano-db command stores it", err, g.dir);
    } else if (r == PIANO_EXIT_STORED && err[0]) {
        say("piano: the run is stored, but %s", err);
    }
    int stored = r >= PIANO_EXIT_NOTHING;
    int lost = 0;
    /* Left for the next piano-db command: this thread's state (in states:
     * most of a short run's) packed into the ended file, its slot given back;
     * other threads' states in states stay as they are (they may go on). */
    int packed_self = !stored && pack && self && !self->anon && pack_state(self, 1) == 0;
    for (size_t i = 0; !stored && i < mem.n; i++) {
        struct piano_thread *t = (struct piano_thread *)mem.states[i];
        /* Left for the next piano-db command: packed (its zeros counted), in
         * the ended file; else written whole into its slot. */
        if (pack && pack_state(t, 0) == 0)
            continue;
        snapshot_anon_buffer(t);
        if (dump_anon(t) != 0) {
            /* Its records are gone with the process: the run says how many calls. */
            g.run.calls_unrecorded += state_calls(t);
            g.run.threads_unrecorded++;
            lost = 1;
        }
    }
    if (lost)
        save_run_header();
    if (states)
        munmap(states, cap * sizeof *states);
    if (self && !packed_self)   /* its slot is a hole now: not written again */
        self->busy = 0;
    quiet_end(&q);
    sanitizer_checks_on();
    errno = saved;
}

__attribute__((destructor(101))) static void piano_destructor(void)
{
    piano_finish();
}
