/*
 * alloc.c - heap accounting: malloc and friends, interposed, forward to glibc
 * and charge each allocation to the innermost instrumented call on the thread
 * (through its calling context). C++ new/delete reach these through libstdc++.
 *
 * A program that defines malloc itself keeps its own: the executable's symbols
 * win, and piano then counts nothing (allocator.c names it for the report). Freed bytes are malloc_usable_size(),
 * the only size glibc knows at free(). With PIANO_HEAP=1, each counted
 * allocation is also given to heap.c's owner map, which knows the size asked
 * at free() and charges the free to the allocating context (heap in use).
 */
#define _GNU_SOURCE
#include "runtime.h"
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define UNLIKELY(x) __builtin_expect(!!(x), 0)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

#define PIANO_API __attribute__((visibility("default")))

/* tls_in_alloc (runtime.h) is set while this thread is inside the libc's
 * allocator through piano's interposers: an exit() called by a signal
 * handler that interrupted it must not store the run, whose SQLite would
 * allocate on a thread whose allocator is in the middle of a change
 * (finish.c). Saved and restored: a handler's own allocation nests. */
#define IN_LIBC(expr)                          \
    ({                                         \
        int was_ = tls_in_alloc;               \
        tls_in_alloc = 1;                      \
        __typeof__(expr) r_ = (expr);          \
        tls_in_alloc = was_;                   \
        r_;                                    \
    })
static inline void libc_free(void *p)
{
    int was = tls_in_alloc;
    tls_in_alloc = 1;
    __libc_free(p);
    tls_in_alloc = was;
}

static inline struct piano_node *charged_node(struct piano_thread *ts)
{
    uint32_t d = piano_depth(ts->depth);
    return PIANO_NODES(ts) + PIANO_STACK(ts)[d].node;   /* node 0 (no call) when d == 0 */
}

/* tracked: heap in use is on (g_heap_on); a constant where inlined, so the
 * paths without it carry no call and no frame (malloc and free pick a copy). */
static inline __attribute__((always_inline)) void count_alloc_as(void *p, size_t n, int tracked)
{
    struct piano_thread *ts = piano_tls;
    if (!ts || ts->busy)
        return;
    struct piano_node *node = charged_node(ts);
    node->allocs++;
    node->alloc_bytes += n;
    ts->allocs++;
    ts->alloc_bytes += n;
    if (tracked)
        heap_track(ts, node, p, n);
}

static inline void count_alloc(void *p, size_t n)
{
    count_alloc_as(p, n, UNLIKELY(g_heap_on));
}

static inline __attribute__((always_inline)) void count_free_as(void *p, int tracked)
{
    struct piano_thread *ts = piano_tls;
    /* Any thread's free ends a tracked block's life, even one piano records
     * nothing of (no instrumented call yet, or ended): before the checks below.
     * Not the frees of the thread storing the run (its store's own blocks,
     * never tracked): it may be a signal handler's exit() that interrupted
     * this thread's malloc holding the lock of the shard they would take. */
    if (tracked && p && !(ts && ts->busy) && !tls_storing)
        heap_untrack(ts, p);
    if (!p || !ts || ts->busy)
        return;
    size_t n = malloc_usable_size(p);
    struct piano_node *node = charged_node(ts);
    node->frees++;
    node->free_bytes += n;
    ts->frees++;
    ts->free_bytes += n;
}

static __attribute__((noinline)) void *malloc_tracked(size_t n)
{
    void *p = IN_LIBC(__libc_malloc(n));
    if (p)
        count_alloc_as(p, n, 1);
    return p;
}

PIANO_API void *malloc(size_t n)
{
    if (UNLIKELY(g_heap_on))
        return malloc_tracked(n);
    void *p = IN_LIBC(__libc_malloc(n));
    if (p)
        count_alloc_as(p, n, 0);
    return p;
}

/* Tells allocator.c that this library interposes malloc. */
__attribute__((visibility("hidden"))) const int piano_alloc_hooked = 1;

static __attribute__((noinline)) void free_tracked(void *p)
{
    count_free_as(p, 1);
    libc_free(p);
}

PIANO_API void free(void *p)
{
    if (UNLIKELY(g_heap_on)) {
        free_tracked(p);
        return;
    }
    count_free_as(p, 0);
    libc_free(p);
}

PIANO_API void *calloc(size_t a, size_t b)
{
    void *p = IN_LIBC(__libc_calloc(a, b));
    if (p)
        count_alloc(p, a * b);
    return p;
}

PIANO_API void *realloc(void *old, size_t n)
{
    size_t old_size = old ? malloc_usable_size(old) : 0;
    struct piano_thread *ts = piano_tls;
    /* Out of the owner map before glibc may give the address to another thread. */
    uint64_t owned_size = 0;
    struct piano_node *owner = NULL;
    int owned = old && g_heap_on && !(ts && ts->busy) && !tls_storing &&
                heap_take_for_realloc(ts, old, &owned_size, &owner);
    void *p = IN_LIBC(__libc_realloc(old, n));
    if (!p && !(old && n == 0)) {
        if (owned)
            heap_put_back(ts, old, owned_size, owner);   /* failed: the old block lives on */
        return p;
    }
    if (owned)
        heap_realloc_freed(ts, owned_size, owner);
    /* realloc is one free (when there was a block) plus one allocation */
    if (old && ts && !ts->busy) {
        struct piano_node *node = charged_node(ts);
        node->frees++;
        node->free_bytes += old_size;
        ts->frees++;
        ts->free_bytes += old_size;
    }
    if (p)
        count_alloc(p, n);
    return p;
}

/* glibc's reallocarray calls its own realloc, which piano does not see: the
 * same checks, then piano's realloc, so that the block is counted (and, with
 * PIANO_HEAP, its move seen). */
PIANO_API void *reallocarray(void *old, size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old, n);
}

/* The libc's own aligned_alloc and posix_memalign: what they accept differs
 * between glibc versions (2.36's aligned_alloc takes any alignment, as
 * memalign does; later ones refuse what is not a power of two), and a
 * program must see the libc it runs on, so piano calls them rather than
 * copying their checks. Taken from the libc that __libc_malloc is in, not
 * RTLD_NEXT: an allocator loaded after piano (jemalloc) would otherwise give
 * blocks that piano's free hands to glibc. NULL until looked up, or when the
 * lookup failed (then memalign's rules, glibc 2.36's). */
static void *(*_Atomic libc_aligned_alloc)(size_t, size_t);
static int (*_Atomic libc_posix_memalign)(void **, size_t, size_t);
static _Atomic int libc_looked_up;

static void libc_lookup(void)
{
    if (atomic_load_explicit(&libc_looked_up, memory_order_acquire))
        return;
    int saved = errno;
    /* dlopen allocates: not the program's allocations */
    struct piano_thread *ts = piano_tls;
    uint32_t busy = ts ? ts->busy : 0;
    if (ts)
        ts->busy = 1;
    Dl_info info;
    void *h = dladdr((void *)__libc_malloc, &info) && info.dli_fname ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                                                                     : NULL;
    if (h) {
        void *a = dlsym(h, "aligned_alloc"), *pm = dlsym(h, "posix_memalign");
        /* Never piano's own (a libc without them: the fallbacks below). */
        if (a && a != (void *)aligned_alloc)
            atomic_store(&libc_aligned_alloc, (void *(*)(size_t, size_t))a);
        if (pm && pm != (void *)posix_memalign)
            atomic_store(&libc_posix_memalign, (int (*)(void **, size_t, size_t))pm);
        dlclose(h);   /* RTLD_NOLOAD: only the reference just taken */
    }
    atomic_store_explicit(&libc_looked_up, 1, memory_order_release);
    if (ts)
        ts->busy = busy;
    errno = saved;
}

/* Looked up before the program's constructors run (a .preinit_array
 * function's call looks them up itself). */
__attribute__((constructor(101))) static void libc_lookup_early(void)
{
    libc_lookup();
}

PIANO_API void *memalign(size_t align, size_t n)
{
    void *p = IN_LIBC(__libc_memalign(align, n));
    if (p)
        count_alloc(p, n);
    return p;
}

PIANO_API void *aligned_alloc(size_t align, size_t n)
{
    libc_lookup();
    void *(*real)(size_t, size_t) = atomic_load_explicit(&libc_aligned_alloc, memory_order_relaxed);
    void *p = IN_LIBC(real ? real(align, n) : __libc_memalign(align, n));
    if (p)
        count_alloc(p, n);
    return p;
}

PIANO_API int posix_memalign(void **out, size_t align, size_t n)
{
    libc_lookup();
    int (*real)(void **, size_t, size_t) = atomic_load_explicit(&libc_posix_memalign, memory_order_relaxed);
    if (real) {
        int r = IN_LIBC(real(out, align, n));
        if (r == 0)
            count_alloc(*out, n);
        return r;
    }
    /* glibc's rules: a power of two multiple of sizeof(void *); a failed
     * allocation leaves errno ENOMEM, as glibc's does. */
    if (!align || align % sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = IN_LIBC(__libc_memalign(align, n));
    if (!p)
        return ENOMEM;
    count_alloc(p, n);
    *out = p;
    return 0;
}

PIANO_API void *valloc(size_t n)
{
    void *p = IN_LIBC(__libc_valloc(n));
    if (p)
        count_alloc(p, n);
    return p;
}

/* glibc's checks the page rounding for overflow (NULL, ENOMEM). */
PIANO_API void *pvalloc(size_t n)
{
    void *p = IN_LIBC(__libc_pvalloc(n));
    if (p)
        count_alloc(p, n);
    return p;
}
