/*
 * internal.h - what the recorder's files share: the process-wide state g, the
 * clock, and the calls one part makes into another. Every cross-file call is
 * a slow path: the per-call path is hooks.c alone, inlined there.
 *
 *   runtime.c  start, thread states, the function registry
 *   hooks.c    __piano_enter/__piano_exit: shadow stack, contexts, histograms, frames
 *   budget.c   the frame budget: which frame records are kept
 *   messages.c   piano's messages and quiet writes
 *   run_folder.c the run's spool folder, its run header
 *   fns_file.c   the fns file
 *   slots.c      the states file: a slot per thread, mapped, released, reused
 *   frame_buffer.c a thread's frame buffer and its chunk files
 *   fork.c     a forked child's run
 *   finish.c   exit: the run imported from its own spool
 *   snap.c     snapshots over time (PIANO_INTERVAL): a background thread
 *   user.c     a program that changes its user: the run's files kept open
 *
 * Nothing here is exported from libpiano_rt.so (hidden).
 */
#ifndef PIANO_INTERNAL_H
#define PIANO_INTERNAL_H
#include "piano_abi.h"
#include "runtime.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PIANO_API __attribute__((visibility("default")))

#define PIANO_PATH_MAX 4096                    /* a path with its NUL (Linux PATH_MAX) */
#define PIANO_MSG_MAX (2 * PIANO_PATH_MAX + 208) /* a line of say(): two paths and the words */
#define PIANO_WHY_MAX 512                      /* what went wrong, as the store tells it */
#define PIANO_FNS_BATCH (1 << 14)              /* bytes of fns records written, or copied, at once */
#define PIANO_LOCK_MAP 4096                    /* bytes of the lock file mapped (a page): holds its flock */

/* Whether piano may record, kept apart from g's written fields: 1 until piano
 * starts (the first hook starts it), then !g.off. Also read at each hook call
 * compiled with PIANO_GUARD=1 (piano_abi.h). */
extern PIANO_API unsigned char __piano_on;

static inline int piano_on(void)
{
    return __atomic_load_n(&__piano_on, __ATOMIC_RELAXED);
}

#pragma GCC visibility push(hidden)

/* Process-wide state. Written during init, fork and exit; read on slow paths. */
struct piano_process {
    _Atomic int state;          /* 0 not started, 1 starting, 2 ready */
    int off;                    /* record nothing (disabled, or the spool could not be made) */
    int finished;
    int use_tsc;
    char db_path[PIANO_PATH_MAX];
    char dir[PIANO_PATH_MAX];   /* this run's spool folder */
    dev_t dir_dev;              /* ... and its identity: files are made only in that folder */
    ino_t dir_ino;
    void *lock_map;             /* the lock file, mapped: holds its flock (make_spool) */
    /* The run file, mapped: its header is saved with no open, which a program
     * that has since changed its user could no longer do (save_run_header). */
    void *run_map;
    uint32_t run_map_pid;       /* the process that mapped it: a forked child never writes its parent's */
    uid_t start_euid;           /* the user the spool was made by */
    dev_t root_dev;             /* the root folder at the start: a chroot's run is not stored in the jail */
    ino_t root_ino;
    int root_known;
    int store_later;            /* PIANO_STORE=later: the exit leaves the run to the next piano-db command */
    int took_spare;             /* the run's folder was a spare (spool.h): runs are being stored */
    /* The program entered a seccomp sandbox (sandbox.c): piano makes no
     * system call from then on, any one may be fatal. */
    _Atomic int sandboxed;
    double sandbox_overhead;    /* the hooks' cost, measured before it (the exit cannot) */
    struct piano_spool_run run;
    _Atomic uint32_t next_fn;
    _Atomic uint32_t next_thread;
    _Atomic uint32_t next_slot; /* slots of states made so far (a thread may take a reused one) */
    struct piano_select *frame_sel;   /* PIANO_FRAME, or NULL: frames are outermost calls */
    struct piano_select *sel;   /* the run-time PIANO_FNS, or NULL (unset: the compile-time selection) */
    const char *sel_spec;       /* ... as given (cut to the run header's room) */
    pthread_mutex_t threads_lock;
    struct piano_thread *threads;
    struct piano_thread *kept;  /* ended anonymous states whose files could not be written */
    pthread_key_t thread_key;
};
extern struct piano_process g;

extern __thread int tls_ended __attribute__((tls_model("initial-exec")));
/* This thread is starting piano or its own state: calls made meanwhile (a
 * program's own instrumented malloc, reached from libc) are not recorded. */
extern __thread int tls_starting __attribute__((tls_model("initial-exec")));

/* Hot-path copy of the clock choice. */
extern int g_tsc_fast;
/* The id of a site the run does not record (not selected by the run-time
 * PIANO_FNS): its hooks, if called, return at once. */
#define PIANO_FN_SKIP UINT32_MAX
/* Whether function id may open a frame (all when PIANO_FRAME is unset). */
extern unsigned char g_frame_fn[PIANO_FN_CAP];

/* ---------------------------------------------------------------- clock */

static inline uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline uint64_t piano_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (LIKELY(g_tsc_fast))
        return __rdtsc();
#endif
    return mono_ns();
}

/* The cycle counter is usable when it ticks at a constant rate in every
 * power state (CPUID "invariant TSC"); otherwise CLOCK_MONOTONIC. */
static inline int tsc_usable(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000007 &&
        __get_cpuid(0x80000007, &a, &b, &c, &d))
        return (d >> 8) & 1;
#endif
    return 0;
}

/* ---------------------------------------------------------------- signals */

/* Signal masks through the system calls themselves: these run in pthread key
 * destructors, where a sanitizer's interceptors may already have let the
 * thread go (TSan then aborts), and in signal handlers. */
static inline void mask_set(int how, const sigset_t *set, sigset_t *old)
{
    syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

/* Signals wait while piano changes a thread's bookkeeping (its state, the
 * list of threads): a handler's calls then find it whole. */
static inline void signals_hold(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    mask_set(SIG_SETMASK, &all, old);
}

static inline void signals_release(const sigset_t *old)
{
    mask_set(SIG_SETMASK, old, NULL);
}

/* ---------------------------------------------------------------- a thread's state */

/* The context hash's slots in use, minus 1 (a state never initialised, as
 * measure_overhead's scratch one, has the smallest table). */
static inline uint32_t hash_mask(const struct piano_thread *ts)
{
    return ts->hash_mask | (PIANO_HASH_MIN - 1);
}

/* ------------------------------------------- import_load.c / import_linked.c */

/* The import at exit (store/exit_import.h's piano_store_exit_import): loaded
 * from libpiano_import.so next to libpiano_rt.so, or linked in (unit tests).
 * import_locate, at start: what the load needs before the program can chdir. */
struct piano_import_mem;
void import_locate(void);
int rt_exit_import(const char *db_path, const char *dir, const struct piano_import_mem *mem, char *err, size_t errn);

/* ---------------------------------------------------------------- runtime.c */

struct piano_thread *thread_start(void);
int root_moved(void);
struct piano_thread *state_new(uint32_t n, const struct piano_thread *owner);
void refresh_name(struct piano_thread *ts, int self);
void state_release(struct piano_thread *ts);
struct fn_batch;
/* as_compiled: a site of a module built by another piano, whose layout past
 * id, line, name and file is unknown: recorded whatever the run-time PIANO_FNS. */
uint32_t register_site(struct piano_site *site, struct fn_batch *batch, int as_compiled);
/* Writes the run-time PIANO_FNS into a run header (make_spool). */
void run_selection(struct piano_spool_run *run);

/* ---------------------------------------------------------------- hooks.c */

void close_all(struct piano_thread *ts, uint64_t t);
uint32_t close_above(struct piano_thread *ts, uint32_t top, uint32_t keep, uint64_t t);

/* A hook's updates of ts are bracketed by the in-hook bit of its depth
 * (spool.h): a signal handler that runs meanwhile sees it and records its
 * calls in another state. The store of the new depth, last, commits the
 * update. Compiler fences only: a handler runs on this thread. */
static inline __attribute__((always_inline)) void hook_begin(struct piano_thread *ts, uint32_t d)
{
    __atomic_store_n(&ts->depth, d | PIANO_DEPTH_IN_HOOK, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline __attribute__((always_inline)) void hook_end(struct piano_thread *ts, uint32_t d)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ts->depth, d, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- contexts.c */

/* frame_depth while the call that opened the frame is parked with its
 * execution context: no frame opens, none closes (contexts.c). */
#define PIANO_FRAME_PARKED UINT32_MAX
uint64_t contexts_leave(const void *ucp, int by_swap);
void contexts_back(uint64_t token);
void contexts_thread_end(struct piano_thread *ts);
void contexts_finish(struct piano_thread *ts);
void contexts_forked(uint64_t now);

/* ---------------------------------------------------------------- budget.c */

void frames_budget_init(void);
void frames_budget_reset(struct piano_thread *ts);
uint32_t frame_keep(struct piano_thread *ts, uint64_t total);
/* frame_keep refreshes a thread's spike threshold every FRAME_SPIKE_REFRESH
 * frames; between, past the budget, frame_close skips it for a frame that is
 * neither a spike candidate nor in the sample. */
#define FRAME_SPIKE_REFRESH 4096u

/* ---------------------------------------------------------------- messages.c */

/* piano's own writes must not raise a signal the program did not ask for:
 * SIGPIPE (stderr is a pipe nobody reads) or SIGXFSZ (the program lowered
 * RLIMIT_FSIZE). Between quiet_begin and quiet_end both are blocked on this
 * thread, and one that piano's writes raised is taken back before the mask
 * is restored; the write itself fails with EPIPE or EFBIG. */
struct quiet {
    sigset_t old, pending;
};
void quiet_begin(struct quiet *q);
void quiet_end(struct quiet *q);

/* In a program built with -fsanitize=memory, MemorySanitizer's interceptors
 * check what piano's uninstrumented code hands to libc (piano's buffers, the
 * import's SQLite heap): memory it never saw written, reported as
 * uninitialized, and the first report ends the program (exit status 1, its
 * buffered output lost). Its checks are off on this thread between these two
 * (nested pairs count); weak references: nothing elsewhere. */
void __msan_scoped_disable_interceptor_checks(void) __attribute__((weak, visibility("default")));
void __msan_scoped_enable_interceptor_checks(void) __attribute__((weak, visibility("default")));
static inline void sanitizer_checks_off(void)
{
    if (__msan_scoped_disable_interceptor_checks)
        __msan_scoped_disable_interceptor_checks();
}
static inline void sanitizer_checks_on(void)
{
    if (__msan_scoped_enable_interceptor_checks)
        __msan_scoped_enable_interceptor_checks();
}
void say_init(void);
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...);
int write_all(int fd, const void *p, size_t n, off_t off);
/* The spool root made (make_spool): messages go to its log when the standard
 * error piano started with is gone. */
void say_log_root(dev_t dev, ino_t ino);

/* ---------------------------------------------------------------- run_folder.c */

int run_dir_open(void);
int spool_path(char out[PIANO_PATH_MAX], const char *dir, const char *name);
int run_open(const char *name, int flags);
int run_file_is(int fd, const char *name, int flags);
int fd_names_file(int fd, int at, const char *path, int flags);
int make_spool(const char *parent_key);
void save_run_header(void);
void refresh_command(void);
double exit_measures_early(void);   /* finish.c */

/* ---------------------------------------------------------------- fns_file.c */

void append_fns(const void *buf, size_t n);

/* Function records waiting to be appended to the fns file together: a
 * module's constructor registers all its functions at once, and one append
 * per function (open, write, close: the program may close any descriptor we
 * keep) made a 500-function program start 20 ms later. Before the run's first
 * call the modules' records wait together in one (fns_file.c); 16 KiB: an
 * append (10 syscalls) costs about what a first touch of a page does. */
struct fn_batch {
    size_t used;
    char buf[PIANO_FNS_BATCH];
};
void batch_flush(struct fn_batch *b);
struct fn_batch *batch_take(void);    /* the spare batch (with the records waiting), or a new one; NULL: none */
void batch_done(struct fn_batch *b);  /* a module's registration ended: appended, or kept until the first call */
void fns_settle(void);                /* the first call, a fork, the exit: the records waiting are appended */
int fns_settled(void);
void write_fn_record(struct fn_batch *b, uint32_t id, uint32_t line, const char *name, const char *file);

/* ---------------------------------------------------------------- slots.c */

/* Zeros written to reserve file blocks (slots.c, frame_buffer.c); never written to. */
extern unsigned char spool_zeros[64 << 10];
extern const unsigned char spool_pad_zeros[8];
#define CHUNK_ROOM_FIRST 4096u   /* bytes of a frame buffer reserved first: made with its slot */
/* Bytes of a frame buffer in use at most (of the PIANO_CHUNK_SIZE a slot
 * holds): a full one is stored as a chunk of this size. 1 MiB, not 4: a
 * buffer this size stays in a core's L2 cache between stores (where the frame
 * records are written, and read again by the store's copy) and takes 256 first
 * touches of a page, not 1,024 (~17 us each on the bench VM). Row (b) with
 * every frame kept: 0.52-0.87 of main's cost added over plain, e.g. 2.43x ->
 * 1.76x the floor (bench/README.md, "Frame buffers of 1 MiB"). Runtime only:
 * the import reads chunks of any size up to PIANO_CHUNK_SIZE. */
#define CHUNK_ROOM_MAX (1u << 20)
int states_extend(int fd, uint64_t end);
int states_keep_warm(int fd);
void states_warm_forget(void);
struct piano_thread *map_thread(uint32_t n, uint32_t reused_room, int *anon);
int slot_take(uint32_t *slot, uint32_t *room);
int slot_reuse(struct piano_thread *ts);
void slot_reuse_wait(void);
void slot_ended(uint32_t n);
void slot_release(struct piano_thread *ts, uint32_t n, uint64_t bytes_used);
void slots_forget(const struct piano_thread *keep);
#define PIANO_STATE_PARTS 9
void state_parts(const struct piano_thread *ts, struct piano_ended_part parts[PIANO_STATE_PARTS]);
int write_state(int fd, const struct piano_thread *ts, uint64_t base);
int pack_state(struct piano_thread *ts, int punch);
int dump_anon(struct piano_thread *ts);

/* ---------------------------------------------------------------- frame_buffer.c */

void chunk_finish(struct piano_thread *ts);
int frame_room(struct piano_thread *ts, int full, size_t need);

/* ---------------------------------------------------------------- cpu.c */

extern int g_cpu_mode;
void cpu_mode_init(void);
void cpu_state_init(struct piano_thread *ts, const struct piano_thread *owner);
void cpu_state_end(struct piano_thread *ts);
void cpu_state_forked(struct piano_thread *ts);
void cpu_resync(struct piano_thread *ts, struct piano_node *to);
void cpu_settle(struct piano_thread *ts, int self);
void cpu_inflight_add(const unsigned char *slot, uint64_t *out, uint32_t nfn, uint64_t now);

/* ---------------------------------------------------------------- fork.c */

void atfork_prepare(void);
void atfork_parent(void);
void atfork_child(void);

/* ---------------------------------------------------------------- snap.c */

void snap_init(void);
int snap_active(void);
void snap_start(void);
void snap_stop(void);
void snap_fork_child(void);
void snap_restart(void);
int snap_reuse_ok(void);
void snap_start_pause(void);
void snap_own_pause(const char *what, int fd);
void snap_hand_over(struct piano_thread *ts);
void snap_atfork_prepare(void);
void snap_atfork_parent(void);

/* ---------------------------------------------------------------- user.c */

int held_active(void);
int held_open(const char *name);
int held_is(int fd, const char *name);
void held_forget(void);
/* The most descriptors user.c keeps (held_fds). */
#define PIANO_HELD_MAX 8
int held_fds(int *out, int max);

/* ---------------------------------------------------------------- heap.c */

void heap_init(void);
void heap_finish(void);
int heap_keep_state(struct piano_thread *ts);
void heap_kept_trim(void);
struct piano_thread *heap_kept_states(void);
void heap_atfork_child(void);

/* ---------------------------------------------------------------- span.c */

/* The stack position of a span's frame (hooks.c span_push): outside every stack. */
#define PIANO_SPAN_SP UINTPTR_MAX
uint64_t span_push(struct piano_site *site);
void span_pop(struct piano_site *site, uint64_t t);
void spans_finish(uint64_t end);
/* Each span name's figures of PIANO_SPAN_FIGURES so far, for a snapshot (span.c). */
uint32_t spans_snap_read(uint64_t *out);
void spans_fork_child(uint64_t fork_tick);

/* ---------------------------------------------------------------- allocator.c */

/* Names into out an allocator piano's malloc does not see ("" when none). */
void allocator_detect(char *out, size_t n);

#pragma GCC visibility pop

#endif
