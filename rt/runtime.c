/*
 * runtime.c - piano's recorder: the hooks PianoPass calls (__piano_enter,
 * __piano_exit, __piano_register), per-thread state, frames, fork and exit.
 *
 * Per call, __piano_enter pushes a slot on the thread's shadow stack and finds
 * the calling context; __piano_exit pops it and adds its ticks to the context,
 * to the function's two histograms (self and inclusive) and to the frame. No
 * lock, no syscall, no allocation on that path: everything lives in the
 * thread's memory-mapped slot of the spool's states file (spool.h), so a crash
 * loses only calls in flight.
 * At exit the process imports its spool into SQLite (import.c).
 *
 * This file holds the process-wide state, thread states, the start and the
 * function registry; internal.h lists the other parts.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "db_path.h"
#include "select.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>   /* glibc 2.32 */
#define PIANO_HAVE_SINGLE_THREADED 1
#endif
#endif
#include <sys/stat.h>

__thread struct piano_thread *piano_tls __attribute__((tls_model("initial-exec")));
__thread int tls_ended __attribute__((tls_model("initial-exec")));
__thread int tls_starting __attribute__((tls_model("initial-exec")));

struct piano_process g = { .threads_lock = PTHREAD_MUTEX_INITIALIZER };
PIANO_API unsigned char __piano_on = 1;
int g_tsc_fast = 1;
unsigned char g_frame_fn[PIANO_FN_CAP];

/* ---------------------------------------------------------------- thread states */

/* glibc's: the initial thread's stack pointer at the program's start (where
 * argc is); its arguments and environment are above, every frame below. */
extern void *__libc_stack_end;

/* The initial thread's stack, while it runs on it: from the page above
 * __libc_stack_end down by RLIMIT_STACK (the kernel counts the limit from
 * the stack's top, above the arguments: no frame is lower), where nothing
 * else is mapped (the kernel's mmap_base is 128 MiB or more below). pthread_getattr_np finds it in
 * /proc/self/maps: 9 system calls and the maps' text, 50-200 us of every run
 * (bench/README.md). 0 (not found so) with no limit, a limit of a GiB or
 * more, or on another stack (a thread's, a coroutine's, a fork's child of a
 * thread): then pthread_getattr_np. */
static int initial_stack_bounds(struct piano_thread *ts)
{
    uintptr_t top = (uintptr_t)__libc_stack_end, sp = (uintptr_t)__builtin_frame_address(0);
    struct rlimit lim;
    if (!top || getrlimit(RLIMIT_STACK, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= (1ull << 30))
        return 0;
    uintptr_t hi = (top + 4095) & ~(uintptr_t)4095, room = (uintptr_t)lim.rlim_cur;
    if (hi < room || sp >= hi || sp < hi - room)
        return 0;
    ts->stack_lo = hi - room;
    ts->stack_hi = hi;
    return 1;
}

static void stack_bounds(struct piano_thread *ts)
{
    if (initial_stack_bounds(ts))
        return;
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

/* Makes the state of thread number n: mapped, its header filled in. Stack
 * bounds come from `owner` when given (a signal handler's state: no
 * pthread_getattr_np, which may allocate, in a handler). NULL if it cannot be
 * mapped. */
struct piano_thread *state_new(uint32_t n, const struct piano_thread *owner)
{
    /* A thread's own state may take a reused slot (a signal handler's, made
     * inside the handler, takes no lock: always a new one). */
    if (!fns_settled())
        fns_settle();   /* the run's first call: the names of the functions registered so far go first */
    /* In a seccomp sandbox none of what asks the kernel (sandbox.c): its
     * slot (map_thread), thread id, name and stack bounds. */
    int sandboxed = atomic_load(&g.sandboxed);
    uint32_t slot, room = 0;
    if (owner || !slot_take(&slot, &room))
        slot = atomic_fetch_add(&g.next_slot, 1);
    int anon;
    struct piano_thread *ts = map_thread(slot, room, &anon);
    if (!ts) {
        if (!sandboxed)   /* (which may unmap its group) */
            slot_ended(slot);
        return NULL;
    }
    ts->version = PIANO_SPOOL_VERSION;
    ts->thread = n;
    ts->slot = slot;
    if (!sandboxed) {   /* else unknown */
        ts->tid = (uint32_t)syscall(SYS_gettid);
        prctl(PR_GET_NAME, ts->name, 0, 0, 0);
        ts->name[sizeof ts->name - 1] = 0;
    }
    ts->anon = (uint32_t)anon;
    ts->epoch = 1;
    ts->n_nodes = 1;   /* node 0: the root, parent of outermost calls */
    ts->n_pages = 1;   /* page 0: swallows samples when pages run out */
    PIANO_STACK(ts)[0].sp = UINTPTR_MAX;  /* the sentinel is above every frame */
    if (owner) {
        ts->stack_lo = owner->stack_lo;
        ts->stack_hi = owner->stack_hi;
    } else if (!sandboxed) {   /* pthread_getattr_np allocates and asks the kernel */
        stack_bounds(ts);
    }
    cpu_state_init(ts, owner);
    /* Last: a reader that finds the magic finds the thread's number and slot
     * (a reused slot held another thread's before). */
    __atomic_store_n(&ts->magic, PIANO_SPOOL_MAGIC, __ATOMIC_RELEASE);
    return ts;
}

/* Reads the thread's name again: it may have been set after its first call. */
void refresh_name(struct piano_thread *ts, int self)
{
    char name[sizeof ts->name] = "";
    if (self) {
        prctl(PR_GET_NAME, name, 0, 0, 0);
    } else {
        char path[sizeof "/proc/self/task/4294967295/comm"];
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

/* Bytes of a state's slot its thread wrote, about (not its function records). */
static uint64_t state_bytes(const struct piano_thread *ts)
{
    return (uint64_t)ts->n_nodes * sizeof(struct piano_node) +
           (uint64_t)ts->n_pages * PIANO_PAGE_BYTES +
           ((uint64_t)hash_mask(ts) + 1) * sizeof(uint32_t) + (ts->chunks ? ts->chunk_room : ts->chunk_used);
}

/* The end of one state (a thread's, or its signal handlers'): calls still
 * in flight (left by pthread_exit, cancellation, or a longjmp nothing
 * reconciled) end now, an anonymous state and its frames go to files. */
static void state_end(struct piano_thread *ts, int keep_mapped)
{
    close_all(ts, piano_now());
    cpu_state_end(ts);
    ts->dead = 1;
    chunk_finish(ts);
    /* keep_mapped: the state is on heap.c's list (its contexts own live
     * blocks); an anonymous one whose file could not be written is lost then. */
    if (ts->anon && dump_anon(ts) != 0 && !keep_mapped) {
        /* Kept for the import at exit, which reads it from memory. */
        pthread_mutex_lock(&g.threads_lock);
        ts->next = g.kept;
        g.kept = ts;
        pthread_mutex_unlock(&g.threads_lock);
        return;
    }
    if (!keep_mapped)
        state_release(ts);
}

/* An ended state's records are done with in memory: its slot is reused or
 * released (also heap.c's, once its live blocks went to the heir). */
void state_release(struct piano_thread *ts)
{
    if (!slot_reuse(ts))
        slot_release(ts, ts->slot, state_bytes(ts));
}

static __thread unsigned tls_end_rounds __attribute__((tls_model("initial-exec")));

/* ThreadSanitizer lets a thread go in the last round of its own key
 * destructor: instrumented code run after that aborts, and its interceptors
 * (piano's close) crash, so a TSan build, or a program built with TSan (its
 * runtime's __tsan_init, a weak reference: LLVM 22's crashed in the last
 * round, e2e sanitized_thread), ends a thread's records in the first round. */
void __tsan_init(void) __attribute__((weak, visibility("default")));
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
    unsigned end_round = __tsan_init ? 1 : PIANO_END_ROUND;
    if (++tls_end_rounds < end_round && pthread_setspecific(g.thread_key, ts) == 0)
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
    /* Blocks it allocated and still live: other threads' frees reach its
     * contexts, so its states stay mapped. */
    int keep = !g.finished && heap_keep_state(ts);
    pthread_mutex_unlock(&g.threads_lock);
    if (atomic_load(&g.sandboxed) && !g.finished) {
        /* No system call (sandbox.c): its calls end, its slot stays as it is
         * for the next piano-db command, which stores the run. */
        close_all(ts, piano_now());
        ts->dead = 1;
    } else if (!g.finished) {   /* else the run is stored: the process is exiting */
        refresh_name(ts, 1);
        if (ts->sig)
            state_end(ts->sig, keep);
        contexts_thread_end(ts);   /* its parked contexts' calls end before its running ones */
        state_end(ts, keep);
        if (keep)
            heap_kept_trim();
    }
    signals_release(&old);
    errno = saved;
}

/* ---------------------------------------------------------------- start */

/* Before libc has started the program (its own constructor sets environ and
 * program_invocation_name from the initial stack): a call made by an ifunc
 * resolver while the dynamic loader relocates the program, or by a
 * .preinit_array function. */
static int before_libc_start(void)
{
    return !environ && (!program_invocation_name || !*program_invocation_name);
}

/* The dynamic loader is still relocating the program (an ifunc resolver, run
 * for an IRELATIVE relocation): libc is not started at all (no locale, no
 * name service: piano_start crashed there), and nothing may be recorded. Its
 * early start, after relocation, sets __libc_single_threaded; no thread is
 * made before libc's start. */
static int relocating(void)
{
#ifdef PIANO_HAVE_SINGLE_THREADED
    return before_libc_start() && !__libc_single_threaded;
#else
    return 0;
#endif
}

/* The initial environment, from the initial stack (argc, the arguments, a
 * NULL, the environment): before libc's start, getenv finds nothing. */
static char **initial_environ(void)
{
    const long *top = __libc_stack_end;
    if (!top || top[0] < 0 || top[0] > (1l << 24))
        return NULL;
    char **argv = (char **)(top + 1);
    return argv[top[0]] == NULL ? argv + top[0] + 1 : NULL;
}

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
    /* A first call from a .preinit_array function: the PIANO_* variables are
     * read from the initial environment, which environ is lent for the start
     * (libc sets it to the same one later; no other thread exists yet). */
    int lent = 0;
    if (before_libc_start() && (environ = initial_environ()) != NULL)
        lent = 1;
    say_init();   /* before any message: the standard error piano may write to */
    struct stat root;
    if (stat("/", &root) == 0) {
        g.root_dev = root.st_dev;
        g.root_ino = root.st_ino;
        g.root_known = 1;
    }
    const char *disable = getenv("PIANO_DISABLE");
    /* setuid/setgid programs must not let the environment choose files. */
    if (getauxval(AT_SECURE) || (disable && *disable && strcmp(disable, "0") != 0))
        g.off = 1;
    g.use_tsc = tsc_usable();
    g_tsc_fast = g.use_tsc;
    atomic_store(&g.next_fn, 2);
    /* Resolved once: a program that later chdirs keeps its database. */
    char why[PIANO_WHY_MAX];
    if (!g.off && piano_db_resolve_path(NULL, g.db_path, sizeof g.db_path, why, sizeof why) != 0) {
        say("piano: %s; this run is not recorded", why);
        g.off = 1;
    }
    /* PIANO_STORE=later: the exit stores nothing (no SQLite loaded); the
     * complete run stays in the spool for the next piano-db command. */
    const char *store = getenv("PIANO_STORE");
    if (!g.off && store && *store && strcmp(store, "exit") != 0) {
        if (strcmp(store, "later") == 0)
            g.store_later = 1;
        else
            say("piano: PIANO_STORE=%s: expected exit or later", store);
    }
    /* PIANO_FRAME: PIANO_FNS's patterns (pass/select.h). */
    const char *frame = getenv("PIANO_FRAME");
    if (frame && *frame && !g.off) {
        char err[512];
        if (piano_select_parse_var("PIANO_FRAME", frame, &g.frame_sel, err, sizeof err) != 0)
            say("piano: %s; frames are the outermost calls", err);
    }
    /* PIANO_FNS at run time narrows the compile-time selection. */
    const char *fns = getenv("PIANO_FNS");
    if (!g.off && fns && *fns) {
        char err[512];
        if (piano_select_parse(fns, &g.sel, err, sizeof err) != 0) {
            say("piano: %s; this run is not recorded", err);
            g.off = 1;
        } else {
            /* Copied: the program may change its environment later. */
            static char spec[sizeof g.run.selection];
            snprintf(spec, sizeof spec, "%s", fns);
            g.sel_spec = spec;
        }
    }
    if (!g.off) {
        frames_budget_init();
        cpu_mode_init();
        snap_init();
        heap_init();
    }
    if (!g.off && make_spool(NULL) != 0)
        g.off = 1;
    if (!g.off) {
        import_locate();
        struct fn_batch *batch = batch_take();   /* appended with the first modules' records */
        write_fn_record(batch, PIANO_FN_OVERFLOW, 0, "(functions past piano's limit)", "");
        if (batch)
            batch_done(batch);
        pthread_key_create(&g.thread_key, thread_ended);
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    }
    __atomic_store_n(&__piano_on, (unsigned char)!g.off, __ATOMIC_RELAXED);
    if (lent)
        environ = NULL;
    errno = saved;
    tls_starting = was_starting;
    atomic_store(&g.state, 2);
}

/* Whether the process's root folder is not the one it started with (a chroot). */
int root_moved(void)
{
    struct stat root;
    return g.root_known && (stat("/", &root) != 0 || root.st_dev != g.root_dev || root.st_ino != g.root_ino);
}

__attribute__((constructor(101))) static void piano_constructor(void)
{
    piano_start();
}

/* The calling thread has no state (its first call, or piano could not make
 * one): makes it. NULL when the thread records nothing. */
struct piano_thread *thread_start(void)
{
    if (tls_starting)
        return NULL;   /* piano's own use of an instrumented function while it starts */
    if (UNLIKELY(atomic_load(&g.state) != 2) && relocating())
        return NULL;   /* an ifunc resolver's call: piano starts with the program */
    if (tls_ended) {
        /* A call piano cannot record (no state could be made for the thread,
         * or it came after the thread's end): counted, unless the run is stored. */
        if (!g.finished)
            __atomic_fetch_add(&g.run.calls_unrecorded, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    /* Signals wait from here, before tls_starting is set: a handler run in
     * between (the first calls of sigfillset and syscall go through the
     * loader's lazy binding, microseconds) found tls_starting and lost its
     * calls; held, they are recorded once the state is made. */
    int saved = errno;
    sigset_t old;
    signals_hold(&old);
    tls_starting = 1;
    if (atomic_load(&g.state) != 2)
        piano_start();
    if (g.off || g.finished) {
        tls_starting = 0;
        signals_release(&old);
        errno = saved;
        return NULL;
    }
    struct piano_thread *ts = state_new(atomic_fetch_add(&g.next_thread, 1), NULL);
    if (ts) {
        pthread_mutex_lock(&g.threads_lock);
        ts->next = g.threads;
        g.threads = ts;
        pthread_mutex_unlock(&g.threads_lock);
        snap_start();   /* on the process's first instrumented call (then a no-op) */
        pthread_setspecific(g.thread_key, ts);
        piano_tls = ts;
    } else {
        tls_ended = 2;
        __atomic_fetch_add(&g.run.threads_unrecorded, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&g.run.calls_unrecorded, 1, __ATOMIC_RELAXED);
        if (!atomic_load(&g.sandboxed))   /* in a sandbox: no slot left mapped (sandbox.c); no message */
            say("piano: cannot map a thread's records (%s: an address-space limit?); its calls are counted, "
                "not recorded", strerror(errno));
    }
    signals_release(&old);
    errno = saved;
    tls_starting = 0;
    return ts;
}

/* ---------------------------------------------------------------- registry */

/* Whether the calls of site open frames: PIANO_FRAME's patterns (those of
 * PIANO_FNS) select it; every function when PIANO_FRAME is unset. */
static int frame_pattern_matches(const struct piano_site *site)
{
    if (!g.frame_sel)
        return 1;
    const char *name = site->name ? site->name : "";
    const char *file = site->file ? site->file : "";
    if (site->on) {   /* "display\0match\0S" (piano_abi.h): matched as PIANO_FNS matches it */
        const char *match = name + strlen(name) + 1;
        int system = match[strlen(match) + 1] == '1' && !piano_select_is_default(g.frame_sel);
        return piano_select_match_fn(g.frame_sel, match, file, system) != PIANO_SEL_NO;
    }
    /* A span, or a site of ABI 2 (no match name): its name up to its parameters. */
    enum { NAME_MAX_MATCHED = 4096 };   /* longer ones are matched on their start */
    char bare[NAME_MAX_MATCHED];
    snprintf(bare, sizeof bare, "%s", name);
    for (char *p = bare; *p; p++) {
        if (*p == '(' && strncmp(p, "(anonymous namespace)", 21) != 0) {
            *p = 0;
            break;
        }
    }
    return piano_select_match(g.frame_sel, bare, file) != PIANO_SEL_NO;
}

void run_selection(struct piano_spool_run *run)
{
    if (!g.sel_spec)
        return;
    snprintf(run->selection, sizeof run->selection, "%s", g.sel_spec);
    run->has_selection = 1;
}

/* Whether the run records site: the run-time PIANO_FNS selects it (unset: all
 * compiled in). Patterns match as at compile time, except that a list of only
 * exclusions leaves out of everything compiled in, not of the default set. */
static int site_selected(const struct piano_site *site)
{
    if (!g.sel || !site->name || !site->on)
        return 1;   /* a span's site (span.c) has no byte and no match name: spans are always recorded */
    const char *match = site->name + strlen(site->name) + 1;   /* "display\0match\0S" (piano_abi.h) */
    int system = match[strlen(match) + 1] == '1' && !piano_select_is_default(g.sel);
    return piano_select_match_fn(g.sel, match, site->file ? site->file : "", system) != PIANO_SEL_NO;
}

uint32_t register_site(struct piano_site *site, struct fn_batch *batch, int as_compiled)
{
    if (atomic_load(&g.state) != 2)
        piano_start();
    uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (id)
        return id;
    int saved = errno;
    /* In a seccomp sandbox its name could not be written (sandbox.c): not recorded. */
    if ((!as_compiled && !site_selected(site)) || atomic_load(&g.sandboxed)) {
        /* Its byte is cleared by __piano_register, which knows the site's
         * ABI (this may be a lazy registration): never set again. Until then
         * its hooks find PIANO_FN_SKIP and return. */
        uint32_t expected = 0;
        __atomic_compare_exchange_n(&site->id, &expected, PIANO_FN_SKIP, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        errno = saved;
        return expected ? expected : PIANO_FN_SKIP;
    }
    uint32_t fresh = atomic_fetch_add(&g.next_fn, 1);
    if (fresh >= PIANO_FN_CAP)
        fresh = PIANO_FN_OVERFLOW;
    const char *name = site->name ? site->name : "?";
    /* Set before the id is published: a thread that sees the id (acquire, in
     * __piano_enter) sees whether it opens frames. */
    if (fresh != PIANO_FN_OVERFLOW)
        g_frame_fn[fresh] = (unsigned char)frame_pattern_matches(site);
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
        /* The hooks' argument is the same in every version, and its first
         * four fields; what follows them is not (ABI 2 had no byte and no
         * match name). Registered now as compiled: a lazy registration at
         * its first call would read the site as this version's. */
        if (!warned) {
            warned = 1;
            say("piano: a module was built by %s piano (ABI %u, this runtime's %u): it records every "
                "function compiled in, whatever PIANO_FNS says at run time; rebuild it",
                abi_version > PIANO_ABI_VERSION ? "a newer" : "an older", abi_version, PIANO_ABI_VERSION);
        }
        for (uint32_t i = 0; piano_on() && i < count; i++)
            if (!__atomic_load_n(&sites[i]->id, __ATOMIC_ACQUIRE))
                register_site(sites[i], NULL, 1);
        return piano_on();
    }
    if (!piano_on()) {
        /* Off (PIANO_DISABLE, no database): no hook of these sites is called again. */
        for (uint32_t i = 0; i < count; i++)
            __atomic_store_n(sites[i]->on, 0, __ATOMIC_RELAXED);
    } else {
        struct fn_batch *batch = batch_take();
        for (uint32_t i = 0; i < count; i++) {
            uint32_t id = __atomic_load_n(&sites[i]->id, __ATOMIC_ACQUIRE);
            if (!id)
                id = register_site(sites[i], batch, 0);
            if (id == PIANO_FN_SKIP)   /* also one registered lazily, before this */
                __atomic_store_n(sites[i]->on, 0, __ATOMIC_RELAXED);
        }
        if (batch)
            batch_done(batch);   /* appended now, or before the first call (fns_file.c) */
    }
    return piano_on();
}

void *piano_next_symbol(const char *name)
{
    struct piano_thread *ts = piano_tls;
    uint32_t busy = ts ? ts->busy : 0;
    if (ts)
        ts->busy = 1;
    void *f = dlsym(RTLD_NEXT, name);
    if (ts)
        ts->busy = busy;
    return f;
}
