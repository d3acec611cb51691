/*
 * runtime.c - piano's recorder: the hooks PianoPass calls (__piano_enter,
 * __piano_exit, __piano_register), per-thread state, frames, fork and exit.
 *
 * Per call, __piano_enter pushes a slot on the thread's shadow stack and finds
 * the calling context; __piano_exit pops it and adds its ticks to the context,
 * to the function's two histograms (self and inclusive) and to the frame. No
 * lock, no syscall, no allocation on that path: everything lives in one
 * memory-mapped file per thread (spool.h), so a crash loses only calls in flight.
 * At exit the process imports its spool into SQLite (import.c).
 */
#define _GNU_SOURCE
#include "hist.h"
#include "import.h"
#include "piano_abi.h"
#include "runtime.h"
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PIANO_API __attribute__((visibility("default")))
/* How long an exiting program waits for a database another process holds. */
#define PIANO_EXIT_WAIT_MS 1000
#define PIANO_PATH_MAX 4096

__thread struct piano_thread *piano_tls __attribute__((tls_model("initial-exec")));
static __thread int tls_ended __attribute__((tls_model("initial-exec")));
/* This thread is starting piano or its own state: calls made meanwhile (a
 * program's own instrumented malloc, reached from libc) are not recorded. */
static __thread int tls_starting __attribute__((tls_model("initial-exec")));

/* Process-wide state. Written during init, fork and exit; read on slow paths. */
static struct {
    _Atomic int state;          /* 0 not started, 1 starting, 2 ready */
    int off;                    /* record nothing (disabled, or the spool could not be made) */
    int finished;
    int use_tsc;
    char db_path[PIANO_PATH_MAX];
    char dir[PIANO_PATH_MAX];   /* this run's spool folder */
    dev_t dir_dev;              /* ... and its identity: files are made only in that folder */
    ino_t dir_ino;
    void *lock_map;             /* the lock file, mapped: holds its flock (make_spool) */
    struct piano_spool_run run;
    _Atomic uint32_t next_fn;
    _Atomic uint32_t next_thread;
    const char *frame_pattern;  /* PIANO_FRAME, or NULL: frames are outermost calls */
    pthread_mutex_t threads_lock;
    struct piano_thread *threads;
    struct piano_thread *kept;  /* ended anonymous states whose files could not be written */
    pthread_key_t thread_key;
} g = { .threads_lock = PTHREAD_MUTEX_INITIALIZER };

/* Whether piano may record, kept apart from g's written fields: 1 until piano
 * starts (the first hook starts it), then !g.off. Also read at each hook call
 * compiled with PIANO_GUARD=1 (piano_abi.h). */
PIANO_API unsigned char __piano_on = 1;

static inline int piano_on(void)
{
    return __atomic_load_n(&__piano_on, __ATOMIC_RELAXED);
}

static void set_off(void)
{
    g.off = 1;
    __atomic_store_n(&__piano_on, 0, __ATOMIC_RELAXED);
}

/* Hot-path copy of the clock choice. */
static int g_tsc_fast = 1;
/* Whether function id may open a frame (all when PIANO_FRAME is unset). */
static unsigned char g_frame_fn[PIANO_FN_CAP];

/* ---------------------------------------------------------------- clock */

static uint64_t mono_ns(void)
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
static int tsc_usable(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000007 &&
        __get_cpuid(0x80000007, &a, &b, &c, &d))
        return (d >> 8) & 1;
#endif
    return 0;
}

/* ---------------------------------------------------------------- helpers */

/* piano's own writes must not raise a signal the program did not ask for:
 * SIGPIPE (stderr is a pipe nobody reads) or SIGXFSZ (the program lowered
 * RLIMIT_FSIZE). Between quiet_begin and quiet_end both are blocked on this
 * thread, and one that piano's writes raised is taken back before the mask
 * is restored; the write itself fails with EPIPE or EFBIG. */
struct quiet {
    sigset_t old, pending;
};

/* Signal masks through the system calls themselves: these run in pthread key
 * destructors, where a sanitizer's interceptors may already have let the
 * thread go (TSan then aborts), and in signal handlers. */
static void mask_set(int how, const sigset_t *set, sigset_t *old)
{
    syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

static void pending_get(sigset_t *set)
{
    sigemptyset(set);
    syscall(SYS_rt_sigpending, set, _NSIG / 8);
}

static void quiet_begin(struct quiet *q)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    sigaddset(&s, SIGXFSZ);
    mask_set(SIG_BLOCK, &s, &q->old);
    pending_get(&q->pending);
}

static void quiet_end(struct quiet *q)
{
    static const int raised[] = { SIGPIPE, SIGXFSZ };
    sigset_t now;
    pending_get(&now);
    for (size_t i = 0; i < sizeof raised / sizeof raised[0]; i++) {
        if (!sigismember(&now, raised[i]) || sigismember(&q->pending, raised[i]))
            continue;
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, raised[i]);
        struct timespec zero = { 0, 0 };
        syscall(SYS_rt_sigtimedwait, &one, NULL, &zero, _NSIG / 8);
    }
    mask_set(SIG_SETMASK, &q->old, NULL);
}

/* Prints one line on stderr, the first time only: whatever goes wrong, a
 * program run under piano gets at most one line from it. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    static _Atomic int said;
    if (atomic_exchange(&said, 1))
        return;
    char line[8400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    struct quiet q;
    quiet_begin(&q);
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
    quiet_end(&q);
}

static int write_all(int fd, const void *p, size_t n, off_t off)
{
    const char *c = p;
    while (n) {
        ssize_t w = pwrite(fd, c, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w, n -= (size_t)w, off += w;
    }
    return 0;
}

/* Opens this run's spool folder, checked to be the one this process made:
 * a folder renamed away or put in its place is not written into. Returns a
 * descriptor, or -1 with errno set. */
static int run_dir_open(void)
{
    int dfd = open(g.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (dfd >= 0 && (fstat(dfd, &st) != 0 || st.st_dev != g.dir_dev || st.st_ino != g.dir_ino)) {
        close(dfd);
        errno = ESTALE;
        return -1;
    }
    return dfd;
}

/* Opens file `name` of this run's spool folder (never through a symbolic
 * link; made 0600). Not kept open: a program may close any descriptor it did
 * not open, or reuse its number. Returns a descriptor, or -1 with errno set. */
static int run_open(const char *name, int flags)
{
    int dfd = run_dir_open();
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
    int e = errno;
    close(dfd);
    errno = e;
    return fd;
}

static void save_run_header(void)
{
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open("run", O_WRONLY | O_CREAT);
    if (fd >= 0) {
        write_all(fd, &g.run, sizeof g.run, 0);
        close(fd);
    }
    quiet_end(&q);
}

static void read_command(char *out, uint32_t *len, size_t cap)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, cap - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0)
        n = 0;
    while (n > 0 && out[n - 1] == 0)
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == 0)
            out[i] = ' ';
    out[n] = 0;
    *len = (uint32_t)n;
}

/* Appends to this run's fns file. Opened for each append rather than kept
 * open: a program that closes descriptors it did not open, then reuses the
 * number, must never get piano's records in its own files. */
static void append_fns(const void *buf, size_t n)
{
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open("fns", O_WRONLY | O_CREAT | O_APPEND);
    if (fd >= 0) {
        ssize_t w = write(fd, buf, n);
        (void)w;
        close(fd);
    }
    quiet_end(&q);
}

/* Function records waiting to be appended to the fns file together: a
 * module's constructor registers all its functions at once, and one append
 * per function (open, write, close: the program may close any descriptor we
 * keep) made a 500-function program start 20 ms later. */
struct fn_batch {
    size_t used;
    char buf[1 << 16];
};

static void batch_flush(struct fn_batch *b)
{
    if (b->used)
        append_fns(b->buf, b->used);
    b->used = 0;
}

/* Records a function name in the fns file, now (b NULL: one append, atomic
 * for the reader) or with the batch's next flush. */
static void write_fn_record(struct fn_batch *b, uint32_t id, uint32_t line, const char *name, const char *file)
{
    char one[8192];
    struct piano_spool_fn r = { id, line, (uint32_t)strlen(name), (uint32_t)strlen(file) };
    if (r.name_len > 4000)
        r.name_len = 4000;
    if (r.file_len > 4000)
        r.file_len = 4000;
    size_t n = sizeof r + r.name_len + r.file_len;
    if (b && b->used + n > sizeof b->buf)
        batch_flush(b);
    char *buf = b ? b->buf + b->used : one;
    memcpy(buf, &r, sizeof r);
    memcpy(buf + sizeof r, name, r.name_len);
    memcpy(buf + sizeof r + r.name_len, file, r.file_len);
    if (b)
        b->used += n;
    else
        append_fns(buf, n);
}

/* PIANO_FRAME matching: comma-separated names; `=name` exact, otherwise a
 * substring of the qualified name without parameters. */
static int frame_pattern_matches(const char *name)
{
    if (!g.frame_pattern)
        return 1;
    char bare[4096];
    snprintf(bare, sizeof bare, "%s", name);
    for (char *p = bare; *p; p++) {
        if (*p == '(' && strncmp(p, "(anonymous namespace)", 21) != 0) {
            *p = 0;
            break;
        }
    }
    const char *p = g.frame_pattern;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char pat[512];
        if (n >= sizeof pat)
            n = sizeof pat - 1;
        memcpy(pat, p, n);
        pat[n] = 0;
        if (pat[0] == '=' ? strcmp(bare, pat + 1) == 0 : (pat[0] && strstr(bare, pat) != NULL))
            return 1;
        p += n + (e ? 1 : 0);
    }
    return 0;
}

/* ---------------------------------------------------------------- spool */

/* Makes this run's spool folder: built under a dot name with its lock held,
 * its run header and fns file written, then renamed, so a recovering piano-db
 * never sees it half made. The lock is held through a mapping of the lock
 * file, not a descriptor: a program that closes every descriptor, or dup2s
 * onto one, cannot release it; exit and exec do (spool.h). The spool root
 * must be a folder of this user that nobody else can write. Returns 0, or -1
 * after one line on stderr. */
static int make_spool(const char *parent_key)
{
    char root[PIANO_PATH_MAX], tmp[PIANO_PATH_MAX];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    memset(&g.run, 0, sizeof g.run);
    g.run.magic = PIANO_SPOOL_MAGIC;
    g.run.version = PIANO_SPOOL_VERSION;
    g.run.pid = (uint32_t)getpid();
    g.run.start_real_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
    snprintf(g.run.key, sizeof g.run.key, "%u-%llu", g.run.pid, (unsigned long long)g.run.start_real_ns);
    if (parent_key)
        snprintf(g.run.parent_key, sizeof g.run.parent_key, "%s", parent_key);
    g.run.clock = g.use_tsc ? PIANO_CLOCK_TSC : PIANO_CLOCK_MONO;
    g.run.mono0 = mono_ns();
    g.run.tick0 = piano_now();
    read_command(g.run.cmd, &g.run.cmd_len, sizeof g.run.cmd);

    if ((size_t)snprintf(root, sizeof root, "%s.spool", g.db_path) >= sizeof root ||
        (size_t)snprintf(tmp, sizeof tmp, "%s/.%s", root, g.run.key) >= sizeof tmp ||
        (size_t)snprintf(g.dir, sizeof g.dir, "%s/%s", root, g.run.key) >= sizeof g.dir) {
        say("piano: the path of %s is too long; this run is not recorded", g.db_path);
        return -1;
    }
    char why[512];
    if (piano_store_make_parent(g.db_path, why, sizeof why) != 0) {
        say("piano: %s; this run is not recorded", why);
        return -1;
    }
    if (mkdir(root, 0700) != 0 && errno != EEXIST) {
        say("piano: cannot create %s: %s; this run is not recorded", root, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(root, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
        say("piano: %s is not a folder of this user that only it can write; this run is not recorded", root);
        return -1;
    }
    if (mkdir(tmp, 0700) != 0) {
        say("piano: cannot create %s: %s; this run is not recorded", tmp, strerror(errno));
        return -1;
    }
    int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int lock = dfd >= 0 ? openat(dfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    void *map = MAP_FAILED;
    int ok = lock >= 0 && fstat(dfd, &st) == 0 && flock(lock, LOCK_EX) == 0 &&
             (map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, lock, 0)) != MAP_FAILED;
    if (lock >= 0)
        close(lock);
    int fns = ok ? openat(dfd, "fns", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    int run = fns >= 0 ? openat(dfd, "run", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    ok = run >= 0 && write_all(run, &g.run, sizeof g.run, 0) == 0 && rename(tmp, g.dir) == 0;
    int e = errno;
    if (fns >= 0)
        close(fns);
    if (run >= 0)
        close(run);
    if (dfd >= 0)
        close(dfd);
    if (!ok) {
        if (map != MAP_FAILED)
            munmap(map, 4096);
        say("piano: cannot prepare %s: %s; this run is not recorded", tmp, strerror(e));
        return -1;
    }
    g.dir_dev = st.st_dev;
    g.dir_ino = st.st_ino;
    g.lock_map = map;
    return 0;
}

static void frames_budget_init(void);
static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);
static void thread_ended(void *arg);

static void piano_start(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&g.state, &expected, 1)) {
        if (tls_starting)
            return;   /* reentered from inside piano_start on this thread */
        while (atomic_load(&g.state) != 2)
            ;
        return;
    }
    int was_starting = tls_starting;
    tls_starting = 1;
    int saved = errno;
    const char *disable = getenv("PIANO_DISABLE");
    /* setuid/setgid programs must not let the environment choose files. */
    if (getauxval(AT_SECURE) || (disable && *disable && strcmp(disable, "0") != 0))
        g.off = 1;
    g.use_tsc = tsc_usable();
    g_tsc_fast = g.use_tsc;
    atomic_store(&g.next_fn, 2);
    /* Resolved once: a program that later chdirs keeps its database. */
    char why[512];
    if (!g.off && piano_store_resolve_path(NULL, g.db_path, sizeof g.db_path, why, sizeof why) != 0) {
        say("piano: %s; this run is not recorded", why);
        g.off = 1;
    }
    const char *frame = getenv("PIANO_FRAME");
    g.frame_pattern = frame && *frame ? frame : NULL;
    if (g.frame_pattern && !g.off && strspn(g.frame_pattern, ", =") == strlen(g.frame_pattern)) {
        say("piano: PIANO_FRAME='%s' names no function; frames are the outermost calls", g.frame_pattern);
        g.frame_pattern = NULL;
    }
    if (!g.off)
        frames_budget_init();
    if (!g.off && make_spool(NULL) != 0)
        g.off = 1;
    if (!g.off) {
        write_fn_record(NULL, PIANO_FN_OVERFLOW, 0, "(functions past piano's limit)", "");
        pthread_key_create(&g.thread_key, thread_ended);
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    }
    __atomic_store_n(&__piano_on, (unsigned char)!g.off, __ATOMIC_RELAXED);
    errno = saved;
    tls_starting = was_starting;
    atomic_store(&g.state, 2);
}

__attribute__((constructor(101))) static void piano_constructor(void)
{
    piano_start();
}

/* ---------------------------------------------------------------- threads */

static void stack_bounds(struct piano_thread *ts)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        ts->stack_lo = (uintptr_t)addr;
        ts->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/* Maps a fresh state file for thread number n. Falls back to anonymous memory
 * (written out at thread or process end) when the disk is nearly full, since a
 * write to a sparse mapping that the disk cannot back would raise SIGBUS, and
 * when the program's file-size limit is below the file's size. */
static struct piano_thread *map_thread(uint32_t n, int *anon)
{
    char name[32];
    snprintf(name, sizeof name, "t%u", n);
    struct statvfs vfs;
    struct rlimit fsize;
    *anon = 1;
    if (statvfs(g.dir, &vfs) == 0 &&
        (uint64_t)vfs.f_bavail * vfs.f_frsize > PIANO_THREAD_FILE_SIZE + (1ull << 30) &&
        getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur >= PIANO_THREAD_FILE_SIZE) {
        int fd = run_open(name, O_RDWR | O_CREAT | O_TRUNC);
        if (fd >= 0 && ftruncate(fd, (off_t)PIANO_THREAD_FILE_SIZE) == 0) {
            void *p = mmap(NULL, PIANO_THREAD_FILE_SIZE, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_NORESERVE, fd, 0);
            close(fd);
            if (p != MAP_FAILED) {
                /* Faults on this sparse file must not read ahead: it is all holes. */
                madvise(p, PIANO_THREAD_FILE_SIZE, MADV_RANDOM);
                *anon = 0;
                return p;
            }
        } else if (fd >= 0) {
            close(fd);
        }
    }
    void *p = mmap(NULL, PIANO_THREAD_FILE_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Makes the state of thread number n: mapped, its header filled in. Stack
 * bounds come from `owner` when given (a signal handler's state: no
 * pthread_getattr_np, which may allocate, in a handler). NULL if it cannot be
 * mapped. */
static struct piano_thread *state_new(uint32_t n, const struct piano_thread *owner)
{
    int anon;
    struct piano_thread *ts = map_thread(n, &anon);
    if (!ts)
        return NULL;
    ts->magic = PIANO_SPOOL_MAGIC;
    ts->version = PIANO_SPOOL_VERSION;
    ts->thread = n;
    ts->tid = (uint32_t)syscall(SYS_gettid);
    prctl(PR_GET_NAME, ts->name, 0, 0, 0);
    ts->name[sizeof ts->name - 1] = 0;
    ts->anon = (uint32_t)anon;
    ts->epoch = 1;
    ts->n_nodes = 1;   /* node 0: the root, parent of outermost calls */
    ts->n_pages = 1;   /* page 0: swallows samples when pages run out */
    PIANO_STACK(ts)[0].sp = UINTPTR_MAX;  /* the sentinel is above every frame */
    if (owner) {
        ts->stack_lo = owner->stack_lo;
        ts->stack_hi = owner->stack_hi;
    } else {
        stack_bounds(ts);
    }
    return ts;
}

/* Signals wait while piano changes a thread's bookkeeping (its state, the
 * list of threads): a handler's calls then find it whole. */
static void signals_hold(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    mask_set(SIG_SETMASK, &all, old);
}

static void signals_release(const sigset_t *old)
{
    mask_set(SIG_SETMASK, old, NULL);
}

/* The calling thread has no state (its first call, or piano could not make
 * one): makes it. NULL when the thread records nothing. */
static struct piano_thread *thread_start(void)
{
    if (tls_starting)
        return NULL;
    if (tls_ended) {
        /* A call piano cannot record (no state could be made for the thread,
         * or it came after the thread's end): counted, unless the run is stored. */
        if (!g.finished)
            __atomic_fetch_add(&g.run.calls_unrecorded, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    tls_starting = 1;
    if (atomic_load(&g.state) != 2)
        piano_start();
    if (g.off || g.finished) {
        tls_starting = 0;
        return NULL;
    }
    int saved = errno;
    sigset_t old;
    signals_hold(&old);
    struct piano_thread *ts = state_new(atomic_fetch_add(&g.next_thread, 1), NULL);
    if (ts) {
        pthread_mutex_lock(&g.threads_lock);
        ts->next = g.threads;
        g.threads = ts;
        pthread_mutex_unlock(&g.threads_lock);
        pthread_setspecific(g.thread_key, ts);
        piano_tls = ts;
    } else {
        tls_ended = 2;
        __atomic_fetch_add(&g.run.threads_unrecorded, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&g.run.calls_unrecorded, 1, __ATOMIC_RELAXED);
        say("piano: cannot map a thread's records (%s: an address-space limit?); its calls are counted, "
            "not recorded", strerror(errno));
    }
    signals_release(&old);
    errno = saved;
    tls_starting = 0;
    return ts;
}

static struct piano_thread *signal_state(struct piano_thread *ts)
{
    struct piano_thread *sig = __atomic_load_n(&ts->sig, __ATOMIC_ACQUIRE);
    if (sig || g.finished)
        return sig;
    int saved = errno;
    sigset_t old;
    signals_hold(&old);
    sig = state_new(atomic_fetch_add(&g.next_thread, 1), ts);
    if (sig) {
        sig->signal_of = ts->thread + 1;
        memcpy(sig->name, ts->name, sizeof sig->name);
        __atomic_store_n(&ts->sig, sig, __ATOMIC_RELEASE);
    }
    signals_release(&old);
    errno = saved;
    return sig;
}

static void chunk_finish(struct piano_thread *ts);
static int dump_anon(struct piano_thread *ts);
static void close_all(struct piano_thread *ts, uint64_t t);

/* Reads the thread's name again: it may have been set after its first call. */
static void refresh_name(struct piano_thread *ts, int self)
{
    char name[sizeof ts->name] = "";
    if (self) {
        prctl(PR_GET_NAME, name, 0, 0, 0);
    } else {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%u/comm", ts->tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, name, sizeof name - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (n <= 0)
            return;
        name[n] = 0;
        name[strcspn(name, "\n")] = 0;
    }
    name[sizeof name - 1] = 0;
    if (name[0])
        memcpy(ts->name, name, sizeof name);
}

/* The end of one state (a thread's, or its signal handlers'): calls still
 * in flight (left by pthread_exit, cancellation, or a longjmp nothing
 * reconciled) end now, its frames and an anonymous state go to files. */
static void state_end(struct piano_thread *ts)
{
    close_all(ts, piano_now());
    ts->dead = 1;
    chunk_finish(ts);
    if (ts->anon && dump_anon(ts) != 0) {
        /* Kept for the import at exit, which reads it from memory. */
        pthread_mutex_lock(&g.threads_lock);
        ts->next = g.kept;
        g.kept = ts;
        pthread_mutex_unlock(&g.threads_lock);
        return;
    }
    munmap(ts, PIANO_THREAD_FILE_SIZE);
}

static __thread unsigned tls_end_rounds __attribute__((tls_model("initial-exec")));

/* ThreadSanitizer lets a thread go in the last round of its own key
 * destructor: instrumented code run after that aborts, so a TSan build ends a
 * thread's records in the first round. */
#if defined(__SANITIZE_THREAD__)
#define PIANO_END_ROUND 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PIANO_END_ROUND 1
#endif
#endif
#ifndef PIANO_END_ROUND
#define PIANO_END_ROUND PTHREAD_DESTRUCTOR_ITERATIONS
#endif

/* pthread key destructor: the thread is ending. Other keys' destructors may
 * still call instrumented functions after this one: glibc runs destructors
 * again, up to PTHREAD_DESTRUCTOR_ITERATIONS rounds, while one sets its key,
 * so this one sets its own and ends the thread's records in the last round. */
static void thread_ended(void *arg)
{
    struct piano_thread *ts = arg;
    if (!ts)
        return;
    if (++tls_end_rounds < PIANO_END_ROUND && pthread_setspecific(g.thread_key, ts) == 0)
        return;
    int saved = errno;
    sigset_t old;
    signals_hold(&old);
    piano_tls = NULL;
    tls_ended = 1;
    pthread_mutex_lock(&g.threads_lock);
    for (struct piano_thread **p = &g.threads; *p; p = &(*p)->next)
        if (*p == ts) {
            *p = ts->next;
            break;
        }
    pthread_mutex_unlock(&g.threads_lock);
    if (!g.finished) {   /* else the run is stored: the process is exiting */
        refresh_name(ts, 1);
        if (ts->sig)
            state_end(ts->sig);
        state_end(ts);
    }
    signals_release(&old);
    errno = saved;
}

/* ---------------------------------------------------------------- registry */

static uint32_t register_site(struct piano_site *site, struct fn_batch *batch)
{
    if (atomic_load(&g.state) != 2)
        piano_start();
    uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (id)
        return id;
    int saved = errno;
    uint32_t fresh = atomic_fetch_add(&g.next_fn, 1);
    if (fresh >= PIANO_FN_CAP)
        fresh = PIANO_FN_OVERFLOW;
    const char *name = site->name ? site->name : "?";
    /* Set before the id is published: a thread that sees the id (acquire, in
     * __piano_enter) sees whether it opens frames. */
    if (fresh != PIANO_FN_OVERFLOW)
        g_frame_fn[fresh] = (unsigned char)frame_pattern_matches(name);
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&site->id, &expected, fresh, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        errno = saved;
        return expected;   /* another thread registered it first */
    }
    if (fresh != PIANO_FN_OVERFLOW) {
        if (!g.off)
            write_fn_record(batch, fresh, site->line, name, site->file ? site->file : "");
    }
    errno = saved;
    return fresh;
}

PIANO_API int __piano_register(struct piano_site *const *sites, uint32_t count, uint32_t abi_version)
{
    static int warned;
    if (atomic_load(&g.state) != 2)
        piano_start();
    if (abi_version != PIANO_ABI_VERSION) {
        /* The hooks' argument is the same in every version; only this list
         * changed. Leave it alone: sites register when first called. */
        if (!warned) {
            warned = 1;
            say("piano: a module was built by another piano (runtime ABI %s, this one %s); rebuild it",
                abi_version > PIANO_ABI_VERSION ? "newer" : "older", "differs");
        }
        return piano_on();
    }
    if (piano_on()) {
        /* Not on the stack: a dlopen may run this on a thread with a small one. */
        struct fn_batch *batch = mmap(NULL, sizeof *batch, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (batch == MAP_FAILED)
            batch = NULL;   /* one append per function */
        for (uint32_t i = 0; i < count; i++)
            if (!sites[i]->id)
                register_site(sites[i], batch);
        if (batch) {
            batch_flush(batch);   /* before any of these functions can run */
            munmap(batch, sizeof *batch);
        }
    }
    return piano_on();
}

/* ---------------------------------------------------------------- contexts, pages */

/* The context hash's slots in use, minus 1 (a state never initialised, as
 * measure_overhead's scratch one, has the smallest table). */
static inline uint32_t hash_mask(const struct piano_thread *ts)
{
    return ts->hash_mask | (PIANO_HASH_MIN - 1);
}

static inline uint32_t context_hash(uint32_t parent, uint32_t fn, uint32_t mask)
{
    return (parent * 0x9e3779b1u ^ fn * 0x85ebca6bu) & mask;
}

/* Doubles the context hash: it starts at one page and grows with the
 * contexts, so a thread with few of them does not fault in the whole 512 KiB
 * (its slots are spread at random). Every node but the root is in it. */
static __attribute__((noinline)) void grow_hash(struct piano_thread *ts)
{
    uint32_t mask = hash_mask(ts) * 2 + 1;
    uint32_t *hash = PIANO_HASH(ts);
    struct piano_node *nodes = PIANO_NODES(ts);
    memset(hash, 0, ((size_t)mask + 1) * sizeof *hash);
    for (uint32_t n = 1; n < ts->n_nodes; n++) {
        uint32_t h = context_hash(nodes[n].parent, nodes[n].fn, mask);
        while (hash[h])
            h = (h + 1) & mask;
        hash[h] = n;
    }
    ts->hash_mask = mask;
}

/* Finds or makes the context (parent, fn). Beyond PIANO_NODE_CAP contexts a
 * function's new contexts share one orphan node, so per-function sums stay exact. */
static __attribute__((noinline)) uint32_t context_of(struct piano_thread *ts, struct piano_fnrec *fr,
                                                    uint32_t parent, uint32_t fn)
{
    struct piano_node *nodes = PIANO_NODES(ts);
    struct piano_node *up = &nodes[parent];
    uint32_t n = up->cache_child;
    if (n && up->cache_fn == fn)
        goto found;
    uint32_t *hash = PIANO_HASH(ts);
    uint32_t mask = hash_mask(ts);
    uint32_t h = context_hash(parent, fn, mask);
    while ((n = hash[h]) != 0) {
        if (nodes[n].parent == parent && nodes[n].fn == fn)
            goto found;
        h = (h + 1) & mask;
    }
    if (ts->n_nodes < PIANO_NODE_CAP) {
        if (2 * ts->n_nodes >= mask + 1 && mask + 1 < PIANO_HASH_CAP) {
            grow_hash(ts);
            mask = ts->hash_mask;
            for (h = context_hash(parent, fn, mask); hash[h]; h = (h + 1) & mask)
                ;
        }
        n = ts->n_nodes;
        nodes[n].parent = parent;
        nodes[n].fn = fn;
        hash[h] = n;
        ts->n_nodes = n + 1;
    } else {
        n = PIANO_NODE_CAP + fn;
        nodes[n].parent = 0;
        nodes[n].fn = fn;
        ts->contexts_truncated++;
    }
found:
    up->cache_fn = fn;
    up->cache_child = n;
    fr->last_parent = parent + 1;
    fr->last_node = n;
    return n;
}

static __attribute__((noinline)) uint32_t hist_page(struct piano_thread *ts, struct piano_fnrec *fr,
                                                   unsigned octave)
{
    if (ts->n_pages >= PIANO_PAGE_CAP) {
        ts->hist_dropped++;
        return 0;
    }
    uint32_t p = ts->n_pages++;
    fr->page[octave] = (uint16_t)p;
    return p;
}

/* Counts one call's self and total ticks in the function's histograms. */
static inline void hist_add(struct piano_thread *ts, struct piano_fnrec *fr, uint64_t self, uint64_t total)
{
    unsigned bs = piano_hist_bucket(self), bt = piano_hist_bucket(total);
    uint32_t ps = fr->page[bs >> 6];
    if (UNLIKELY(!ps))
        ps = hist_page(ts, fr, bs >> 6);
    PIANO_PAGES(ts)[(size_t)ps * PIANO_PAGE_WORDS + (bs & 63) * 2]++;
    uint32_t pt = fr->page[bt >> 6];
    if (UNLIKELY(!pt))
        pt = hist_page(ts, fr, bt >> 6);
    PIANO_PAGES(ts)[(size_t)pt * PIANO_PAGE_WORDS + (bt & 63) * 2 + 1]++;
}

/* ---------------------------------------------------------------- frames */

/* Frames are written into one buffer of PIANO_CHUNK_SIZE bytes per thread,
 * mapped once: the file f<N>.w (MAP_SHARED, so a crash keeps it), or anonymous
 * memory for an anonymous thread. A full buffer is copied into the next chunk
 * file f<N>.<K> by one write and reused. Mapping a fresh file per chunk instead
 * took a page fault per 4 KiB written: 4x the CPU time (bench/README.md). */

/* Maps the thread's frame buffer. Returns 0, or -1 with errno set (frames
 * are dropped). */
static int buffer_open(struct piano_thread *ts)
{
    void *p = MAP_FAILED;
    if (!ts->anon) {
        char name[32];
        snprintf(name, sizeof name, "f%u.w", ts->thread);
        struct quiet q;
        quiet_begin(&q);
        int fd = run_open(name, O_RDWR | O_CREAT | O_TRUNC);
        /* Reserve the blocks now: a full disk then fails here, not as SIGBUS later. */
        int e = fd < 0 ? errno : posix_fallocate(fd, 0, PIANO_CHUNK_SIZE);
        if (!e)
            p = mmap(NULL, PIANO_CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        else
            errno = e;
        /* A fault must not read ahead: the kernel would zero-fill up to the
         * whole 4 MiB at the first record (most of a short thread's start). */
        if (p != MAP_FAILED)
            madvise(p, PIANO_CHUNK_SIZE, MADV_RANDOM);
        e = errno;
        if (fd >= 0)
            close(fd);
        quiet_end(&q);
        errno = e;
    } else {
        p = mmap(NULL, PIANO_CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (p == MAP_FAILED)
        return -1;
    struct piano_chunk_hdr *h = p;
    h->magic = PIANO_SPOOL_MAGIC;
    h->used = 0;
    h->seq = ts->chunks;
    ts->chunk = p;
    ts->chunk_used = 0;
    ts->chunk_frames = 0;
    return 0;
}

/* Stores the buffer's records as chunk file number ts->chunks and empties it.
 * The file appears whole or not at all (rename); the import reads the buffer
 * only while no file has its number, so a crash at any point neither loses
 * nor repeats a frame. Returns 0, or -1 with errno set (the buffer is left as
 * it was). */
static int buffer_flush(struct piano_thread *ts)
{
    struct piano_chunk_hdr *h = (struct piano_chunk_hdr *)ts->chunk;
    if (!h || !ts->chunk_used)
        return 0;
    char name[32], tmp[40];
    snprintf(name, sizeof name, "f%u.%u", ts->thread, ts->chunks);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    struct quiet q;
    quiet_begin(&q);
    int dfd = run_dir_open();
    int fd = dfd >= 0 ? openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    int ok = fd >= 0 && write_all(fd, ts->chunk, sizeof *h + ts->chunk_used, 0) == 0;
    if (fd >= 0)
        close(fd);
    ok = ok && renameat(dfd, tmp, dfd, name) == 0;
    int e = errno;
    if (!ok && dfd >= 0)
        unlinkat(dfd, tmp, 0);
    if (dfd >= 0)
        close(dfd);
    quiet_end(&q);
    if (!ok) {
        errno = e;
        return -1;
    }
    /* A live buffer is read as a seqlock (spool.h): the new seq is seen
     * before any record written after it. */
    __atomic_store_n(&h->used, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&h->seq, ts->chunks + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    ts->chunks++;
    ts->chunk_used = 0;
    ts->chunk_frames = 0;
    return 0;
}

/* The thread is done with its buffer: an anonymous one is stored now (a file
 * one stays for the import to read). */
static void chunk_finish(struct piano_thread *ts)
{
    if (!ts->chunk)
        return;
    if (ts->anon && buffer_flush(ts) != 0) {
        ts->frames_dropped += ts->chunk_frames;
        say("piano: cannot store frames in %s: %s; they are counted as dropped", g.dir, strerror(errno));
    }
    munmap(ts->chunk, PIANO_CHUNK_SIZE);
    ts->chunk = NULL;
}

/* Makes room for a frame record: maps the buffer, or stores a full one.
 * After a failure (a full disk) it tries again only every 4,096 frames, each
 * dropped meanwhile. Returns 0, or -1 (the frame is dropped). */
static __attribute__((noinline)) int frame_room(struct piano_thread *ts, int full)
{
    if (g.finished)
        return -1;   /* the run is stored: frames that end after it are not part of it */
    if (ts->room_backoff) {
        ts->room_backoff--;
        return -1;
    }
    if ((full ? buffer_flush(ts) : buffer_open(ts)) == 0)
        return 0;
    ts->room_backoff = 4096;
    say("piano: cannot store frames in %s: %s; they are counted as dropped", g.dir, strerror(errno));
    return -1;
}

/* ---------------------------------------------------------------- the frame budget */

/* PIANO_FRAMES=all|N|off (default PIANO_FRAMES_DEFAULT). Every completed frame
 * is counted and put in its thread's frame histogram, so the count and the
 * distribution (p50, p99, the spike threshold) are exact whatever is kept.
 * Records are kept for the run's first N frames (threads take leases of the
 * budget: one atomic add per lease, none per frame), then for every spike
 * (longer than 2x the thread's running median, read from its histogram every
 * 4,096 frames) up to N of them, and for frames whose number on their
 * thread is a multiple of K, a power of two that doubles whenever the run's
 * sample reaches N/4 records: the import keeps those of the final K, a
 * uniform 1-in-K sample (spool.h PIANO_KEPT_*). */
#define PIANO_FRAMES_DEFAULT 1000000ull
#define FRAME_LEASE_MIN 16u
#define FRAME_LEASE_MAX 4096u
#define FRAME_SPIKE_REFRESH 4096u
static uint64_t g_frames_budget = PIANO_FRAMES_DEFAULT;   /* UINT64_MAX: all; 0: off */
static uint64_t g_frames_leased;    /* budget given out (atomic) */
static uint64_t g_frames_sampled;   /* sample records at the current K, about (atomic) */
static uint64_t g_spikes_kept;      /* spike records (atomic) */
static uint32_t g_sample_shift;     /* log2 K (atomic) */

static void frames_budget_init(void)
{
    const char *v = getenv("PIANO_FRAMES");
    if (!v || !*v)
        return;
    if (!strcmp(v, "all")) {
        g_frames_budget = UINT64_MAX;
        return;
    }
    if (!strcmp(v, "off")) {
        g_frames_budget = 0;
        return;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] >= '0' && v[0] <= '9' && !*end && !errno) {
        g_frames_budget = n;   /* 0: as off */
        return;
    }
    say("piano: PIANO_FRAMES='%s' is not all, off or a number; keeping the first %llu frames, spikes "
        "and a sample", v, PIANO_FRAMES_DEFAULT);
}

/* A forked child is a run of its own, with a budget of its own. */
static void frames_budget_reset(struct piano_thread *ts)
{
    __atomic_store_n(&g_frames_leased, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_frames_sampled, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_spikes_kept, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_sample_shift, 0, __ATOMIC_RELAXED);
    ts->frames_all = ts->spike_ticks = ts->spikes_unkept = ts->chunk_last_n = 0;
    ts->keep_left = ts->lease = ts->sample_shift = 0;
    memset(ts->frame_pages, 0, sizeof ts->frame_pages);
}

/* Counts a frame's total ticks in the thread's frame histogram (the 'total'
 * words of pages of the histogram pool; no page left: the sample is lost,
 * which the import sees as a histogram short of the count). */
static inline void frame_hist_add(struct piano_thread *ts, uint64_t total)
{
    unsigned b = piano_hist_bucket(total);
    uint32_t pg = ts->frame_pages[b >> 6];
    if (UNLIKELY(!pg)) {
        if (ts->n_pages >= PIANO_PAGE_CAP)
            return;
        pg = ts->n_pages++;
        ts->frame_pages[b >> 6] = (uint16_t)pg;
    }
    PIANO_PAGES(ts)[(size_t)pg * PIANO_PAGE_WORDS + (b & 63) * 2 + 1]++;
}

/* 2x the median of the thread's frames so far, from its histogram. */
static uint64_t frame_spike_ticks(const struct piano_thread *ts)
{
    uint64_t n = 0, seen = 0;
    const uint64_t *pages = PIANO_PAGES(ts);
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++)
        if (ts->frame_pages[o])
            for (unsigned b = 0; b < 64; b++)
                n += pages[(size_t)ts->frame_pages[o] * PIANO_PAGE_WORDS + b * 2 + 1];
    uint64_t rank = (n + 1) / 2;
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES && n; o++)
        if (ts->frame_pages[o])
            for (unsigned b = 0; b < 64; b++)
                if ((seen += pages[(size_t)ts->frame_pages[o] * PIANO_PAGE_WORDS + b * 2 + 1]) >= rank)
                    return 2 * piano_hist_value(o * 64 + b);
    return UINT64_MAX;
}

/* Whether to keep a record of the frame that just ended, numbered
 * ts->frames_all on its thread: 1 + PIANO_KEPT_*, or 0. Called when the
 * thread's lease of the budget is used up. */
static __attribute__((noinline)) uint32_t frame_keep(struct piano_thread *ts, uint64_t total)
{
    uint64_t budget = g_frames_budget;
    if (!budget)
        return 0;
    if (__atomic_load_n(&g_frames_leased, __ATOMIC_RELAXED) < budget) {
        uint32_t want = ts->lease < FRAME_LEASE_MIN ? FRAME_LEASE_MIN : ts->lease;
        uint64_t old = __atomic_fetch_add(&g_frames_leased, want, __ATOMIC_RELAXED);
        if (old < budget) {
            uint64_t got = budget - old < want ? budget - old : want;
            ts->lease = want < FRAME_LEASE_MAX ? want * 2 : FRAME_LEASE_MAX;
            ts->keep_left = (uint32_t)got - 1;
            return 1 + PIANO_KEPT_BUDGET;
        }
    }
    uint64_t n = ts->frames_all;
    if (UNLIKELY(!ts->spike_ticks) || n % FRAME_SPIKE_REFRESH == 0)
        ts->spike_ticks = frame_spike_ticks(ts);
    uint64_t quarter = budget / 4 ? budget / 4 : 1;
    if (total > ts->spike_ticks) {
        if (__atomic_fetch_add(&g_spikes_kept, 1, __ATOMIC_RELAXED) < budget)
            return 1 + PIANO_KEPT_SPIKE;
        ts->spikes_unkept++;
    }
    uint32_t shift = __atomic_load_n(&g_sample_shift, __ATOMIC_RELAXED);
    if (shift > ts->sample_shift)
        ts->sample_shift = shift;
    if (n & ((1ull << shift) - 1))
        return 0;
    /* About half of the sample survives each doubling of K. */
    if (__atomic_add_fetch(&g_frames_sampled, 1, __ATOMIC_RELAXED) >= quarter && shift < 63) {
        uint32_t seen = shift;
        if (__atomic_compare_exchange_n(&g_sample_shift, &seen, shift + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            __atomic_store_n(&g_frames_sampled, quarter / 2, __ATOMIC_RELAXED);
    }
    return 1 + PIANO_KEPT_SAMPLE;
}

static __attribute__((noinline)) void frame_open(struct piano_thread *ts, uint32_t depth)
{
    ts->frame_depth = depth;
    ts->epoch++;
    ts->n_touched = 0;
    ts->frame_allocs = ts->allocs;
    ts->frame_alloc_bytes = ts->alloc_bytes;
    ts->frame_frees = ts->frees;
    ts->frame_free_bytes = ts->free_bytes;
}

static __attribute__((noinline)) void frame_close(struct piano_thread *ts, uint64_t t0, uint64_t t)
{
    size_t need = PIANO_FRAME_HEAD_MAX + (size_t)ts->n_touched * PIANO_FRAME_FN_MAX + PIANO_PV_SLACK;
    ts->frame_depth = 0;
    ts->last_tick = t;
    uint64_t n = ++ts->frames_all;
    frame_hist_add(ts, t - t0);
    uint32_t kept = PIANO_KEPT_BUDGET;
    if (LIKELY(ts->keep_left))
        ts->keep_left--;
    else if (!(kept = frame_keep(ts, t - t0))) {
        ts->epoch++;   /* counted, not kept */
        ts->n_touched = 0;
        return;
    } else {
        kept--;
    }
    if (need > PIANO_CHUNK_SIZE - sizeof(struct piano_chunk_hdr)) {
        ts->frames_dropped++;
        return;
    }
    int full = ts->chunk && sizeof(struct piano_chunk_hdr) + ts->chunk_used + need > PIANO_CHUNK_SIZE;
    if (UNLIKELY(!ts->chunk || full) && frame_room(ts, full) != 0) {
        ts->frames_dropped++;
        return;
    }
    unsigned char *start = ts->chunk + sizeof(struct piano_chunk_hdr) + ts->chunk_used, *p = start;
    uint64_t base = ts->chunk_used ? ts->chunk_last_end : 0, base_n = ts->chunk_used ? ts->chunk_last_n : 0;
    p = piano_pv_put(p, piano_zigzag((int64_t)(t0 - base)));
    p = piano_pv_put(p, t - t0);
    p = piano_pv_put(p, ts->allocs - ts->frame_allocs);
    p = piano_pv_put(p, ts->alloc_bytes - ts->frame_alloc_bytes);
    p = piano_pv_put(p, ts->frees - ts->frame_frees);
    p = piano_pv_put(p, ts->free_bytes - ts->frame_free_bytes);
    p = piano_pv_put(p, ts->n_touched);
    p = piano_pv_put(p, (n - base_n) << 2 | kept);
    const uint32_t *touched = PIANO_TOUCHED(ts);
    struct piano_fnrec *fns = PIANO_FNS(ts);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < ts->n_touched; i++) {
        uint32_t fn = touched[i];
        uint64_t next = fn == prev + 1, v = fns[fn].frame_self << 1 | next;
        p = piano_pv_put(p, v);
        if (UNLIKELY(!next))
            p = piano_pv_put(p, piano_zigzag((int64_t)fn - (int64_t)prev));
        prev = fn;
    }
    ts->chunk_used += (uint32_t)(p - start);
    ts->chunk_frames++;
    ts->chunk_last_end = t;
    ts->chunk_last_n = n;
    /* Publish the record only once it is whole. */
    __atomic_store_n(&((struct piano_chunk_hdr *)ts->chunk)->used, ts->chunk_used, __ATOMIC_RELEASE);
    ts->frames++;
    ts->epoch++;   /* later calls outside a frame must not count towards this one */
    ts->n_touched = 0;
}

/* ---------------------------------------------------------------- the hooks */

/* Closes the call in slot d at tick t; the caller then lowers the depth.
 * Inlined into __piano_exit: this is the per-call path. */
static inline __attribute__((always_inline)) void close_slot(struct piano_thread *ts, struct piano_slot *stack, uint32_t d, uint64_t t)
{
    struct piano_slot *s = &stack[d];
    uint64_t t0 = s->t0;
    uint64_t total = t - t0;
    uint64_t self = total > s->child ? total - s->child : 0;
    /* A closed slot keeps its end: the slot above the top then holds the
     * thread's latest exit, which bounds a run that dies (import.c). */
    s->t0 = t;
    stack[d - 1].child += total;
    struct piano_node *n = PIANO_NODES(ts) + s->node;
    n->calls++;
    n->self += self;   /* contexts' inclusive times are summed from the tree when stored */
    struct piano_fnrec *fr = PIANO_FNS(ts) + s->fn;
    /* The histograms take the previous call's sample: its bucket arithmetic
     * does not wait for this call's clock read, so the two overlap. This
     * call's sample waits in pend_* for the next exit (or for the import).
     * Function id 0 is never used: the first, empty sample goes there. */
    hist_add(ts, PIANO_FNS(ts) + ts->pend_fn, ts->pend_self, ts->pend_total);
    ts->pend_fn = s->fn;
    ts->pend_self = self;
    ts->pend_total = total;
    if (UNLIKELY(fr->epoch != ts->epoch)) {
        fr->epoch = ts->epoch;
        fr->frame_self = 0;
        PIANO_TOUCHED(ts)[ts->n_touched++] = s->fn;
    }
    fr->frame_self += self;
    if (UNLIKELY(d == ts->frame_depth))
        frame_close(ts, t0, t);
}

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

/* Stack positions a and b belong to the same stack: both on the thread's own
 * stack or both elsewhere (a signal stack, a coroutine's). Only then does an
 * address order say which call is deeper. */
static inline int same_stack(const struct piano_thread *ts, uintptr_t a, uintptr_t b)
{
    int in_a = a >= ts->stack_lo && a < ts->stack_hi;
    int in_b = b >= ts->stack_lo && b < ts->stack_hi;
    return in_a == in_b;
}

/* A new call of fn at stack position sp whose caller's slot is not above it:
 * the slots below sp (or fn's own at sp) were left by longjmp, or by an
 * exception through code without unwind tables. Close them now. Returns the
 * new depth. */
static __attribute__((noinline)) uint32_t drop_abandoned(struct piano_thread *ts, uintptr_t sp, uint32_t fn,
                                                         uint32_t d)
{
    struct piano_slot *stack = PIANO_STACK(ts);
    uint64_t t = piano_now();
    while (d > 0 && (stack[d].sp < sp || (stack[d].sp == sp && stack[d].fn == fn)) &&
           same_stack(ts, stack[d].sp, sp)) {
        close_slot(ts, stack, d, t);
        d--;
    }
    return d;
}

/* Closes the calls in slots keep+1..top of ts, all ending at tick t.
 * Returns the new top. */
static uint32_t close_above(struct piano_thread *ts, uint32_t top, uint32_t keep, uint64_t t)
{
    struct piano_slot *stack = PIANO_STACK(ts);
    for (; top > keep; top--)
        close_slot(ts, stack, top, t);
    return top;
}

void piano_jumped_to(uint32_t depth)
{
    struct piano_thread *ts = piano_tls;
    if (!ts || ts->busy)
        return;
    /* A jump out of a signal handler that interrupted a hook abandons that
     * hook's update: its state is as before it (depth is its commit). */
    uint32_t d = ts->depth & ~PIANO_DEPTH_IN_HOOK;
    if (d > PIANO_STACK_CAP) {
        ts->depth = d;
        return;   /* untimed deep calls: the next hooks sort them out */
    }
    hook_begin(ts, d);
    d = close_above(ts, d, depth, piano_now());
    hook_end(ts, d);
}

/* Closes slot k, below the top: its call ended while the calls above it go on
 * elsewhere (another context's stack). They move down one slot. */
static void close_below_top(struct piano_thread *ts, struct piano_slot *stack, uint32_t k, uint32_t d,
                            uint64_t t)
{
    struct piano_slot s = stack[k];
    memmove(&stack[k], &stack[k + 1], (size_t)(d - k) * sizeof *stack);
    stack[d] = s;
    if (ts->frame_depth == k)
        ts->frame_depth = d;
    else if (ts->frame_depth > k)
        ts->frame_depth--;
    /* close_slot charges the slot below the top as the caller: charge the real one. */
    uint64_t total = t - s.t0;
    uint64_t child = stack[d - 1].child;
    close_slot(ts, stack, d, t);
    stack[d - 1].child = child;
    stack[k - 1].child += total;
}

/* An exit that is not the top slot's (top: d). Its call's slot is the
 * innermost slot of fn at sp. Slots above it on the same stack (deeper, or at
 * the same position: inlined) are calls it made that did not return (longjmp,
 * exceptions through code without unwind tables): they end with it. Slots
 * above it on another stack (a coroutine's, a signal stack) go on. Returns the
 * new top. */
static __attribute__((noinline)) uint32_t exit_slow(struct piano_thread *ts, uint32_t fn, uintptr_t sp,
                                                    uint64_t t, uint32_t d)
{
    struct piano_slot *stack = PIANO_STACK(ts);
    uint32_t k = d, top = d;
    while (k > 0 && !(stack[k].fn == fn && stack[k].sp == sp) &&
           (!same_stack(ts, stack[k].sp, sp) || stack[k].sp <= sp))
        k--;
    if (k > 0 && stack[k].fn == fn && stack[k].sp == sp) {
        for (uint32_t j = d; j >= k; j--) {
            if (j != k && !same_stack(ts, stack[j].sp, sp))
                continue;
            if (j == top)
                close_slot(ts, stack, j, t);
            else
                close_below_top(ts, stack, j, top, t);
            top--;
        }
        return top;
    }
    /* No slot at exactly sp (alloca moved the stack pointer): close the deeper
     * slots, then the top one if it is fn's. */
    while (d > 0 && stack[d].sp < sp && same_stack(ts, stack[d].sp, sp)) {
        close_slot(ts, stack, d, t);
        d--;
    }
    if (d > 0 && stack[d].fn == fn)
        close_slot(ts, stack, d--, t);
    /* Otherwise this exit has no matching entry (the entry ran before the
     * thread's state existed, or on another context): ignore it. */
    return d;
}

/* Closes every call in flight on ts at tick t (its thread is ending). */
static void close_all(struct piano_thread *ts, uint64_t t)
{
    uint32_t d = piano_depth(ts->depth);
    hook_begin(ts, d);
    hook_end(ts, close_above(ts, d, 0, t));
}

static __attribute__((noinline)) struct piano_thread *enter_slow(void)
{
    return thread_start();
}

/* The hooks come in two builds, one per clock, and the dynamic loader binds
 * __piano_enter/__piano_exit to the right pair once (GNU ifunc), so the
 * per-call path does not test which clock to read. */
static inline __attribute__((always_inline)) uint64_t clock_now(const int tsc)
{
#if defined(__x86_64__) || defined(__i386__)
    if (tsc)
        return __rdtsc();
#endif
    (void)tsc;
    return mono_ns();
}

static void enter_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d, int tsc);
static void exit_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d, uint64_t t);

/* Records the entry of a call of site on ts. */
static inline __attribute__((always_inline)) void enter_on(struct piano_thread *ts, struct piano_site *site,
                                                           const int tsc)
{
    uint32_t d = ts->depth;
    if (UNLIKELY(d >= PIANO_STACK_CAP)) {   /* too deep, or a signal interrupted a hook */
        enter_busy(ts, site, d, tsc);
        return;
    }
    hook_begin(ts, d);
    /* Another thread may be registering the site: an atomic load (a plain mov
     * on x86-64), acquire so that g_frame_fn[fn] is seen set. */
    uint32_t fn = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (UNLIKELY(!fn))
        fn = register_site(site, NULL);
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    struct piano_slot *stack = PIANO_STACK(ts);
    /* The caller's slot is normally above (an inlined call: at the same
     * position). One below, or the same function at the same position, was
     * left by longjmp. */
    if (UNLIKELY(stack[d].sp < sp || (stack[d].sp == sp && stack[d].fn == fn)))
        d = drop_abandoned(ts, sp, fn, d);
    struct piano_fnrec *fr = PIANO_FNS(ts) + fn;
    uint32_t parent = stack[d < PIANO_CTX_DEPTH ? d : PIANO_CTX_DEPTH].node;
    uint32_t node = fr->last_node;
    if (UNLIKELY(fr->last_parent != parent + 1))
        node = context_of(ts, fr, parent, fn);
    struct piano_slot *s = &stack[d + 1];
    s->node = node;
    s->fn = fn;
    s->sp = sp;
    s->child = 0;
    if (UNLIKELY(!ts->frame_depth) && g_frame_fn[fn])
        frame_open(ts, d + 1);
    s->t0 = clock_now(tsc);
    hook_end(ts, d + 1);
}

/* Records the exit, at tick t, of a call of site on ts. */
static inline __attribute__((always_inline)) void exit_on(struct piano_thread *ts, struct piano_site *site,
                                                          uint64_t t)
{
    uint32_t d = ts->depth;
    if (UNLIKELY(d > PIANO_STACK_CAP)) {   /* too deep, or a signal interrupted a hook */
        exit_busy(ts, site, d, t);
        return;
    }
    hook_begin(ts, d);
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    struct piano_slot *stack = PIANO_STACK(ts);
    uint32_t fn = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
    if (UNLIKELY(stack[d].fn != fn || stack[d].sp < sp)) {
        d = exit_slow(ts, fn, sp, t, d);
    } else {
        close_slot(ts, stack, d, t);
        d--;
    }
    hook_end(ts, d);
}

/* The state that records the calls of signal handlers run while a hook of ts
 * was interrupted: made at the first such call, NULL if it cannot be. */
static struct piano_thread *signal_state(struct piano_thread *ts);

/* An entry on ts at depth word d, past the fast path: calls nested deeper
 * than the shadow stack are only counted by depth; a call made by a signal
 * handler while one of ts's hooks was interrupted goes to ts's signal state. */
static __attribute__((noinline)) void enter_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d,
                                                 int tsc)
{
    if (!(d & PIANO_DEPTH_IN_HOOK)) {
        ts->depth = d + 1;
        ts->deep_calls++;
        return;
    }
    struct piano_thread *sig = ts->signal_of ? NULL : signal_state(ts);
    if (!sig) {
        /* A signal within a signal handler's hook (its exit is dropped too),
         * or no state could be made for it. */
        __atomic_fetch_add(&g.run.calls_unrecorded, 1, __ATOMIC_RELAXED);
        return;
    }
    if (tsc)
        enter_on(sig, site, 1);
    else
        enter_on(sig, site, 0);
}

static __attribute__((noinline)) void exit_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d,
                                                uint64_t t)
{
    if (!(d & PIANO_DEPTH_IN_HOOK)) {
        ts->depth = d - 1;
        return;
    }
    struct piano_thread *sig = ts->signal_of ? NULL : __atomic_load_n(&ts->sig, __ATOMIC_ACQUIRE);
    if (sig)
        exit_on(sig, site, t);
}

static inline __attribute__((always_inline)) void enter_hook(struct piano_site *site, const int tsc)
{
    struct piano_thread *ts = piano_tls;
    if (UNLIKELY(!ts)) {
        if (!piano_on())
            return;
        ts = enter_slow();
        if (!ts)
            return;
    }
    enter_on(ts, site, tsc);
}

static inline __attribute__((always_inline)) void exit_hook(struct piano_site *site, const int tsc)
{
    struct piano_thread *ts = piano_tls;
    if (UNLIKELY(!ts))
        return;
    exit_on(ts, site, clock_now(tsc));
}

static __attribute__((noinline)) void enter_tsc(struct piano_site *site) { enter_hook(site, 1); }
static __attribute__((noinline)) void enter_mono(struct piano_site *site) { enter_hook(site, 0); }
static __attribute__((noinline)) void exit_tsc(struct piano_site *site) { exit_hook(site, 1); }
static __attribute__((noinline)) void exit_mono(struct piano_site *site) { exit_hook(site, 0); }

/* Sanitizer runtimes are not ready when the loader runs a resolver (TSan
 * crashes in its instrumentation of it): sanitized builds test the clock. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define PIANO_NO_IFUNC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define PIANO_NO_IFUNC 1
#endif
#endif

#ifdef PIANO_NO_IFUNC
PIANO_API void __piano_enter(struct piano_site *site)
{
    g_tsc_fast ? enter_tsc(site) : enter_mono(site);
}
PIANO_API void __piano_exit(struct piano_site *site)
{
    g_tsc_fast ? exit_tsc(site) : exit_mono(site);
}
#else
typedef void piano_hook(struct piano_site *);
/* Run by the dynamic loader, before any constructor: cpuid only. */
static piano_hook *resolve_enter(void) { return tsc_usable() ? enter_tsc : enter_mono; }
static piano_hook *resolve_exit(void) { return tsc_usable() ? exit_tsc : exit_mono; }
PIANO_API void __piano_enter(struct piano_site *site) __attribute__((ifunc("resolve_enter")));
PIANO_API void __piano_exit(struct piano_site *site) __attribute__((ifunc("resolve_exit")));
#endif

/* ---------------------------------------------------------------- fork */

/* The forking thread's state file is shared with the child until the child
 * has copied it: the parent's forking thread waits for that (a byte, or EOF
 * if the child dies first) before it records anything more. */
static int fork_pipe[2] = { -1, -1 };

static void atfork_prepare(void)
{
    pthread_mutex_lock(&g.threads_lock);
    int saved = errno;
    if (piano_tls && !g.off && !g.finished && pipe2(fork_pipe, O_CLOEXEC) != 0)
        fork_pipe[0] = fork_pipe[1] = -1;
    errno = saved;
}

static void atfork_parent(void)
{
    int saved = errno;
    if (fork_pipe[0] >= 0) {
        close(fork_pipe[1]);
        char c;
        while (read(fork_pipe[0], &c, 1) < 0 && errno == EINTR)
            ;
        close(fork_pipe[0]);
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    errno = saved;
    pthread_mutex_unlock(&g.threads_lock);
}

/* Tells the parent that the child no longer reads the parent's files. */
static void fork_release_parent(void)
{
    if (fork_pipe[0] < 0)
        return;
    close(fork_pipe[0]);
    ssize_t w = write(fork_pipe[1], "", 1);
    (void)w;
    close(fork_pipe[1]);
    fork_pipe[0] = fork_pipe[1] = -1;
}

/* Appends the whole records of the parent's fns file to ours: the parent's
 * other threads may be appending a record right now. */
static void copy_fns(const char *from)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return;
    char buf[65536];
    size_t have = 0;
    ssize_t n;
    while ((n = read(in, buf + have, sizeof buf - have)) > 0) {
        have += (size_t)n;
        size_t at = 0;
        while (have - at >= sizeof(struct piano_spool_fn)) {
            struct piano_spool_fn r;
            memcpy(&r, buf + at, sizeof r);
            size_t size = sizeof r + r.name_len + r.file_len;
            if (have - at < size)
                break;
            at += size;
        }
        if (at)
            append_fns(buf, at);
        memmove(buf, buf + at, have - at);
        have -= at;
    }
    close(in);
}

/* Zeroes what a thread has recorded while keeping its calls in flight, which
 * go on in the child from the moment of the fork. */
static void reset_counts(struct piano_thread *ts, uint64_t now)
{
    uint32_t nfn = atomic_load(&g.next_fn);
    if (nfn > PIANO_FN_CAP)
        nfn = PIANO_FN_CAP;
    struct piano_node *nodes = PIANO_NODES(ts);
    for (uint32_t i = 0; i < ts->n_nodes; i++)
        memset(&nodes[i].calls, 0, sizeof *nodes - offsetof(struct piano_node, calls));
    if (ts->contexts_truncated)
        for (uint32_t i = 0; i < nfn; i++)
            memset(&nodes[PIANO_NODE_CAP + i].calls, 0, sizeof *nodes - offsetof(struct piano_node, calls));
    struct piano_fnrec *fns = PIANO_FNS(ts);
    for (uint32_t i = 0; i < nfn; i++) {
        fns[i].frame_self = 0;
        memset(fns[i].page, 0, sizeof fns[i].page);
    }
    memset(PIANO_PAGES(ts), 0, (size_t)ts->n_pages * PIANO_PAGE_WORDS * sizeof(uint64_t));
    ts->n_pages = 1;
    struct piano_slot *stack = PIANO_STACK(ts);
    uint32_t depth = piano_depth(ts->depth);
    for (uint32_t i = 1; i <= depth; i++) {
        stack[i].t0 = now;
        stack[i].child = 0;
    }
    ts->pend_fn = 0;   /* the parent stores its own last sample */
    ts->allocs = ts->alloc_bytes = ts->frees = ts->free_bytes = 0;
    ts->frame_allocs = ts->frame_alloc_bytes = ts->frame_frees = ts->frame_free_bytes = 0;
    ts->frames = ts->frames_dropped = ts->deep_calls = ts->hist_dropped = ts->contexts_truncated = 0;
    frames_budget_reset(ts);
    ts->epoch++;
    ts->n_touched = 0;
    ts->chunks = 0;
    ts->chunk_used = 0;
    ts->thread = 0;
    ts->tid = (uint32_t)syscall(SYS_gettid);
}

/* Writes the parts of a thread's state in use into fd, a file of
 * PIANO_THREAD_FILE_SIZE bytes, at their offsets. Returns 0, or -1. */
static int write_state(int fd, const struct piano_thread *ts)
{
    uint32_t nfn = atomic_load(&g.next_fn);
    if (nfn > PIANO_FN_CAP)
        nfn = PIANO_FN_CAP;
    /* The slots in use, and one more: the last closed call's end tick. */
    uint32_t depth = piano_depth(ts->depth) < PIANO_STACK_CAP ? piano_depth(ts->depth) + 1 : PIANO_STACK_CAP;
    struct { uint64_t off, len; } parts[] = {
        { 0, 4096 },
        { PIANO_OFF_STACK, (depth + 1ull) * sizeof(struct piano_slot) },
        { PIANO_OFF_NODES, (uint64_t)ts->n_nodes * sizeof(struct piano_node) },
        { PIANO_OFF_NODES + (uint64_t)PIANO_NODE_CAP * sizeof(struct piano_node),
          ts->contexts_truncated ? (uint64_t)nfn * sizeof(struct piano_node) : 0 },
        { PIANO_OFF_FNS, (uint64_t)nfn * sizeof(struct piano_fnrec) },
        { PIANO_OFF_PAGES, (uint64_t)ts->n_pages * PIANO_PAGE_WORDS * sizeof(uint64_t) },
        { PIANO_OFF_HASH, ((uint64_t)hash_mask(ts) + 1) * sizeof(uint32_t) },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].len && write_all(fd, (const char *)ts + parts[i].off, parts[i].len, (off_t)parts[i].off))
            return -1;
    return 0;
}

/* Moves the forking thread's state into the child's own file, mapped at the
 * same address so that nothing pointing into it changes. */
static int clone_state(struct piano_thread *ts)
{
    int fd = run_open("t0", O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0 || ftruncate(fd, (off_t)PIANO_THREAD_FILE_SIZE) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (write_state(fd, ts) != 0) {
        close(fd);
        return -1;
    }
    void *p = mmap(ts, PIANO_THREAD_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
                   fd, 0);
    close(fd);
    return p == MAP_FAILED ? -1 : 0;
}

static void atfork_child(void)
{
    pthread_mutex_init(&g.threads_lock, NULL);
    int saved = errno;
    if (g.off || g.finished) {
        fork_release_parent();
        errno = saved;
        return;
    }
    struct piano_thread *self = piano_tls;
    /* The other threads do not exist here, nor do signal handlers' calls in
     * flight; their files belong to the parent. */
    for (struct piano_thread *t = g.threads, *next; t; t = next) {
        next = t->next;
        if (t->sig) {
            if (t->sig->chunk)
                munmap(t->sig->chunk, PIANO_CHUNK_SIZE);
            munmap(t->sig, PIANO_THREAD_FILE_SIZE);
            t->sig = NULL;
        }
        if (t == self)
            continue;
        if (t->chunk)
            munmap(t->chunk, PIANO_CHUNK_SIZE);
        munmap(t, PIANO_THREAD_FILE_SIZE);
    }
    g.threads = NULL;
    for (struct piano_thread *t = g.kept, *next; t; t = next) {
        next = t->next;
        munmap(t, PIANO_THREAD_FILE_SIZE);
    }
    g.kept = NULL;
    if (self && self->chunk) {
        munmap(self->chunk, PIANO_CHUNK_SIZE);   /* the parent's buffer: the child maps its own */
        self->chunk = NULL;
    }
    char parent_key[64], parent_fns[PIANO_PATH_MAX + 8];
    snprintf(parent_key, sizeof parent_key, "%s", g.run.key);
    snprintf(parent_fns, sizeof parent_fns, "%s/fns", g.dir);
    /* The parent's lock stays held through the parent's mapping. */
    if (g.lock_map)
        munmap(g.lock_map, 4096);
    g.lock_map = NULL;
    if (make_spool(parent_key) != 0) {
        fork_release_parent();
        set_off();
        piano_tls = NULL;
        errno = saved;
        return;
    }
    /* The child knows every function the parent registered. */
    copy_fns(parent_fns);
    atomic_store(&g.next_thread, 1);
    if (self) {
        if (!self->anon && clone_state(self) != 0) {
            fork_release_parent();
            say("piano: cannot copy thread state into %s: %s; the child is not recorded", g.dir,
                strerror(errno));
            set_off();
            piano_tls = NULL;
            errno = saved;
            return;
        }
        fork_release_parent();
        g.run.fork_tick = piano_now();
        save_run_header();
        reset_counts(self, g.run.fork_tick);
        self->next = NULL;
        g.threads = self;
    }
    fork_release_parent();
    errno = saved;
}

/* ---------------------------------------------------------------- exit */

/* Writes an anonymous thread state into its file (used regions only). */
/* Returns 0, or -1 (said in one line). */
static int dump_anon(struct piano_thread *ts)
{
    char name[32];
    snprintf(name, sizeof name, "t%u", ts->thread);
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(name, O_RDWR | O_CREAT | O_TRUNC);
    int ok = fd >= 0 && ftruncate(fd, (off_t)PIANO_THREAD_FILE_SIZE) == 0 && write_state(fd, ts) == 0;
    if (!ok)
        say("piano: cannot write %s in %s: %s", name, g.dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    quiet_end(&q);
    return ok ? 0 : -1;
}

/* Sorts v in place. Not qsort: that may call malloc, and a program's own
 * malloc may be instrumented. */
static void sort_i64(int64_t *v, int n)
{
    for (int i = 1; i < n; i++) {
        int64_t x = v[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
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
    PIANO_STACK(scratch)[0].sp = UINTPTR_MAX;
    struct piano_site site = { PIANO_FN_OVERFLOW, 0, "", "" };
    /* The median of many single measurements: a mean would carry every
     * interrupt and cache miss of the loop into each corrected call. */
    enum { N = 2001 };
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
    sort_i64(cost, N);
    double per_call = (double)cost[N / 2];
    return per_call > 0 ? per_call : 0;
}

/* Writes an anonymous state's frame buffer, as it is now, into its f<N>.w
 * file for the import (the thread may go on recording in it: the buffer stays
 * mapped). */
static void snapshot_anon_buffer(struct piano_thread *ts)
{
    struct piano_chunk_hdr *h = (struct piano_chunk_hdr *)ts->chunk;
    if (!h)
        return;
    char name[32];
    snprintf(name, sizeof name, "f%u.w", ts->thread);
    int fd = run_open(name, O_WRONLY | O_CREAT | O_TRUNC);
    size_t used = __atomic_load_n(&h->used, __ATOMIC_ACQUIRE);
    struct piano_chunk_hdr copy = { h->magic, used, __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE) };
    int ok = fd >= 0 && write_all(fd, &copy, sizeof copy, 0) == 0 &&
             write_all(fd, ts->chunk + sizeof copy, used, sizeof copy) == 0;
    if (!ok) {
        ts->frames_dropped += ts->chunk_frames;
        say("piano: cannot write %s: %s; its frames are counted as dropped", name, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
}

/* Stores this run: called once, at exit (a library destructor runs after the
 * program's own atexit handlers and static destructors). Other threads may
 * still be recording: their states and buffers stay mapped, and the import
 * reads a copy of what they hold now. */
static void piano_finish(void)
{
    if (atomic_load(&g.state) != 2 || g.off || g.finished)
        return;
    int saved = errno;
    if ((uint32_t)getpid() != g.run.pid) {
        /* A child made without fork's handlers (a raw clone): the spool is
         * its parent's, still live. */
        g.finished = 1;
        errno = saved;
        return;
    }
    struct quiet q;
    quiet_begin(&q);
    struct piano_thread *self = piano_tls;
    if (self)
        self->busy = 1;
    g.run.end_tick = piano_now();
    g.run.overhead_ticks = measure_overhead();
    g.run.status = 1;
    g.finished = 1;
    /* From here this thread records nothing: the import must not count its
     * own calls (a program's instrumented malloc, used by SQLite). */
    piano_tls = NULL;
    tls_ended = 1;
    /* Anonymous states (and their buffers) are read from memory; they go to
     * files only when the run cannot be stored now. Ended ones were kept
     * (state_end); live ones stay mapped while their threads go on. */
    struct piano_import_mem mem = { NULL, 0 };
    size_t cap = 0;
    pthread_mutex_lock(&g.threads_lock);
    for (struct piano_thread *t = g.threads; t; t = t->next) {
        refresh_name(t, t == self);
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
    save_run_header();
    char err[512] = "";
    /* A database another process holds locked delays the exit by at most
     * PIANO_EXIT_WAIT_MS: the run then stays in the spool. */
    sqlite3 *db = piano_store_open(g.db_path, PIANO_STORE_WRITE, err, sizeof err);
    if (db)
        sqlite3_busy_timeout(db, PIANO_EXIT_WAIT_MS);
    int stored = 0;
    if (!db) {
        say("piano: %s; the run stays in %s and the next piano-db command stores it", err, g.dir);
    } else {
        int r = piano_import_spool_mem(db, g.dir, 1, &mem, err, sizeof err);
        if (r < 0)
            say("piano: cannot store the run: %s; it stays in %s and the next piano-db command stores it", err,
                g.dir);
        else
            piano_spool_remove(g.dir);
        if (r > 0 && err[0])
            say("piano: the run is stored, but %s", err);
        stored = r >= 0;
        sqlite3_close(db);
    }
    for (size_t i = 0; !stored && i < mem.n; i++) {
        struct piano_thread *t = (struct piano_thread *)mem.states[i];
        snapshot_anon_buffer(t);
        dump_anon(t);
    }
    if (states)
        munmap(states, cap * sizeof *states);
    if (self)
        self->busy = 0;
    quiet_end(&q);
    errno = saved;
}

__attribute__((destructor(101))) static void piano_destructor(void)
{
    piano_finish();
}
