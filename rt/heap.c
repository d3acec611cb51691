/*
 * heap.c - heap in use (PIANO_HEAP=1): who owns each live allocation.
 *
 * The owner map takes a pointer to (calling context, size asked) when an
 * allocation is counted, and gives it back when the block is freed, by
 * whichever thread: the free is then added to the owning context
 * (owned_frees), so a context's in-use figures are its allocations minus
 * those frees. Pointers the map does not hold (allocated before piano started
 * on the thread, or while piano itself was busy) are not in use for piano.
 *
 * The map is 64 shards by pointer hash, each an open-addressing table with
 * its own spin lock, in memory from mmap (malloc is what is being counted):
 * threads allocating at once rarely meet on a shard. A shard's table doubles
 * when half full.
 *
 * The run's heap (the sum of the sizes in the map) is one atomic counter. The
 * bytes each context holds at the run's peak are copied into the contexts at
 * the first free after a new maximum, when that maximum exceeds the last
 * copied one by more than 1/64, and once at the end: so the copy is taken at a
 * heap within 1/64 of the run's peak (doc/running.md). Other threads go on
 * allocating while a copy is made: it is exact when they do not.
 */
#define _GNU_SOURCE
#include "internal.h"
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define HEAP_SHARDS 64
#define HEAP_SHARD_MIN 64u     /* entries of a shard's first table */

struct heap_entry {
    uintptr_t key;            /* 0: empty */
    uint64_t size;            /* bytes the caller asked for */
    struct piano_node *node;  /* owner: a context in its thread's state */
};

struct __attribute__((aligned(64))) heap_shard {
    _Atomic uint32_t lock;
    uint32_t mask;            /* entries - 1; the table is NULL while 0 */
    uint64_t used;
    struct heap_entry *tab;
};

static struct heap_shard shards[HEAP_SHARDS];
int g_heap_on;
__thread int tls_storing __attribute__((tls_model("initial-exec")));
__thread volatile int tls_in_alloc __attribute__((tls_model("initial-exec")));
/* heap_now is written by every tracked malloc and free; the others are read
 * by every free and rarely written: a cache line each, so the reads do not
 * miss on every other thread's writes. */
static _Atomic uint64_t heap_now __attribute__((aligned(64)));
static _Atomic uint64_t heap_max __attribute__((aligned(64))), heap_copied;
static _Atomic uint32_t heap_gen;
static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;
/* Ended threads whose contexts still own live blocks: their states stay
 * mapped (thread_ended) so the frees can be added to them. */
static struct piano_thread *heap_kept;
/* Tracked blocks out of the map for a realloc whose owner is not the
 * reallocating thread's state (heap_take): a batch move waits for none. */
static _Atomic uint32_t foreign_reallocs;

static inline uint64_t heap_hash(uintptr_t p)
{
    return (uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull;
}

static inline struct heap_shard *shard_of(uint64_t h)
{
    return &shards[h >> 58];
}

static inline uint64_t slot_of(uint64_t h, uint32_t mask)
{
    return (h >> 26) & mask;
}

/* A shard's lock: 0 free, 1 held, 2 held and a thread may be waiting. A
 * waiter spins a little (a holder keeps it for a few dozen instructions),
 * then sleeps on a futex until the holder lets go: a holder preempted in its
 * few instructions (more threads than cores) makes the others sleep, not spin
 * or yield through whole time slices. Futexes only when threads meet on a
 * shard; errno kept (malloc and free change it only as the libc's do). */
#define SHARD_SPINS 100

static __attribute__((noinline)) void shard_lock_wait(struct heap_shard *s)
{
    for (int i = 0; i < SHARD_SPINS; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        uint32_t free_ = 0;
        if (atomic_load_explicit(&s->lock, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&s->lock, &free_, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
    }
    int saved = errno;
    /* Held as "maybe waited for" from here on: the release wakes one. */
    while (atomic_exchange_explicit(&s->lock, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &s->lock, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    errno = saved;
}

static inline void shard_lock(struct heap_shard *s)
{
    uint32_t free_ = 0;
    if (UNLIKELY(!atomic_compare_exchange_strong_explicit(&s->lock, &free_, 1, memory_order_acquire,
                                                          memory_order_relaxed)))
        shard_lock_wait(s);
}

static __attribute__((noinline)) void shard_wake(struct heap_shard *s)
{
    int saved = errno;
    syscall(SYS_futex, &s->lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

static inline void shard_unlock(struct heap_shard *s)
{
    if (UNLIKELY(atomic_exchange_explicit(&s->lock, 0, memory_order_release) == 2))
        shard_wake(s);
}

static void entry_put(struct heap_entry *tab, uint32_t mask, const struct heap_entry *e)
{
    uint64_t i = slot_of(heap_hash(e->key), mask);
    while (tab[i].key)
        i = (i + 1) & mask;
    tab[i] = *e;
}

/* Doubles the shard's table (under its lock); -1 when no memory. */
static int shard_grow(struct heap_shard *s)
{
    uint64_t n = s->tab ? 2ull * (s->mask + 1ull) : HEAP_SHARD_MIN;
    if (n > (1ull << 32))
        return -1;
    struct heap_entry *tab = mmap(NULL, n * sizeof *tab, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (tab == MAP_FAILED)
        return -1;
    if (s->tab) {
        for (uint64_t i = 0; i <= s->mask; i++)
            if (s->tab[i].key)
                entry_put(tab, (uint32_t)(n - 1), &s->tab[i]);
        munmap(s->tab, (s->mask + 1ull) * sizeof *tab);
    }
    s->tab = tab;
    s->mask = (uint32_t)(n - 1);
    return 0;
}

/* Whether node is one of ts's own contexts (ts may be NULL). */
static inline int owns(const struct piano_thread *ts, const struct piano_node *node)
{
    return ts && (uintptr_t)node - (uintptr_t)PIANO_NODES(ts) < PIANO_NODES_TOTAL * sizeof *node;
}

/* Adds a free of `size` bytes to the owning context; ts: the freeing
 * thread's state, or NULL. Most frees are the owner thread's own: plain adds
 * to fields only it writes; another thread's are atomic, to fields of their own. */
static inline void owner_freed(struct piano_thread *ts, struct piano_node *node, uint64_t size)
{
    if (owns(ts, node)) {
        node->own_frees++;
        node->own_free_bytes += size;
        return;
    }
    __atomic_fetch_add(&node->owned_frees, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&node->owned_free_bytes, size, __ATOMIC_RELAXED);
}

static void peak_copy_states(struct piano_thread *t, uint32_t gen, uint64_t max)
{
    for (struct piano_thread *s = t; s; s = s == t ? t->sig : NULL) {
        /* Every state says which copy is the latest: the import believes the highest. */
        s->heap_gen = gen;
        if (s->heap_peak < max)
            s->heap_peak = max;
        struct piano_node *nodes = PIANO_NODES(s);
        uint32_t n = __atomic_load_n(&s->n_nodes, __ATOMIC_ACQUIRE);
        for (int pass = 0; pass < 2; pass++) {
            uint32_t lo = pass ? PIANO_NODE_CAP : 0;
            uint32_t hi = pass ? (s->contexts_truncated ? PIANO_NODES_TOTAL : 0) : n;
            for (uint32_t i = lo; i < hi; i++) {
                struct piano_node *node = &nodes[i];
                uint64_t in = __atomic_load_n(&node->alloc_bytes, __ATOMIC_RELAXED) -
                              __atomic_load_n(&node->own_free_bytes, __ATOMIC_RELAXED) -
                              __atomic_load_n(&node->owned_free_bytes, __ATOMIC_RELAXED);
                if (in || node->peak_bytes) {
                    node->peak_bytes = in;
                    node->peak_gen = gen;
                }
            }
        }
    }
}

/* Copies every context's bytes in use as the run's peak (heap `max`), unless
 * a copy at least as high was made meanwhile. A node left untouched (nothing
 * in use at this copy nor at the one before) keeps an older peak_gen: the
 * import reads it as 0. */
static __attribute__((noinline)) void peak_copy(uint64_t max)
{
    /* Signals wait: a handler's exit() stores the run, which copies the peak
     * and lists the threads, taking these locks (rare: one copy per 1/64 of
     * growth of the peak). */
    sigset_t old;
    signals_hold(&old);
    pthread_mutex_lock(&copy_lock);
    if (atomic_load(&heap_copied) < max) {
        uint32_t gen = atomic_load(&heap_gen) + 1;
        pthread_mutex_lock(&g.threads_lock);
        for (int list = 0; list < 2; list++)
            for (struct piano_thread *t = list ? heap_kept : g.threads; t; t = t->next)
                peak_copy_states(t, gen, max);
        pthread_mutex_unlock(&g.threads_lock);
        atomic_store(&heap_gen, gen);
        atomic_store(&heap_copied, max);
    }
    pthread_mutex_unlock(&copy_lock);
    signals_release(&old);
}

void heap_track(struct piano_thread *ts, struct piano_node *node, void *p, size_t n)
{
    uint64_t h = heap_hash((uintptr_t)p);
    struct heap_shard *s = shard_of(h);
    struct heap_entry e = { (uintptr_t)p, n, node };
    shard_lock(s);
    if (UNLIKELY(2 * (s->used + 1) > s->mask + 1ull) && shard_grow(s) != 0) {
        shard_unlock(s);
        owner_freed(ts, node, n);   /* not tracked: never in use */
        return;
    }
    uint64_t i = slot_of(h, s->mask);
    while (s->tab[i].key && s->tab[i].key != e.key)
        i = (i + 1) & s->mask;
    struct heap_entry old = s->tab[i];
    s->tab[i] = e;
    s->used += !old.key;
    if (UNLIKELY(old.key))   /* freed where piano could not see it (a raw __libc_free) */
        owner_freed(NULL, old.node, old.size);
    shard_unlock(s);
    if (UNLIKELY(old.key))
        atomic_fetch_sub_explicit(&heap_now, old.size, memory_order_relaxed);
    uint64_t now = atomic_fetch_add_explicit(&heap_now, n, memory_order_relaxed) + n;
    uint64_t max = atomic_load_explicit(&heap_max, memory_order_relaxed);
    while (now > max)
        if (atomic_compare_exchange_weak_explicit(&heap_max, &max, now, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            ts->heap_peak = now;
            break;
        }
}

/* Removes p from the map; 1 and its owner's entry when it was there. Under
 * the shard's lock, the free is added to its owner (ts: the freeing thread's
 * state) when `freed`, else the block is counted among the reallocs in
 * flight when another state owns it: a batch of ended states moves its
 * owners (heap_kept_trim) only while the shard locks are all held, so no
 * owner pointer is in use outside them. */
static int heap_take(void *p, struct heap_entry *out, struct piano_thread *ts, int freed)
{
    uint64_t h = heap_hash((uintptr_t)p);
    struct heap_shard *s = shard_of(h);
    shard_lock(s);
    if (!s->tab) {
        shard_unlock(s);
        return 0;
    }
    uint32_t mask = s->mask;
    uint64_t i = slot_of(h, mask);
    while (s->tab[i].key && s->tab[i].key != (uintptr_t)p)
        i = (i + 1) & mask;
    if (!s->tab[i].key) {
        shard_unlock(s);
        return 0;
    }
    *out = s->tab[i];
    /* Backward-shift deletion: no tombstones, probes stay short. */
    for (uint64_t j = (i + 1) & mask; s->tab[j].key; j = (j + 1) & mask) {
        uint64_t home = slot_of(heap_hash(s->tab[j].key), mask);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->tab[i] = s->tab[j];
            i = j;
        }
    }
    s->tab[i].key = 0;
    s->used--;
    if (freed)
        owner_freed(ts, out->node, out->size);
    else if (!owns(ts, out->node))
        atomic_fetch_add_explicit(&foreign_reallocs, 1, memory_order_relaxed);
    shard_unlock(s);
    return 1;
}

/* The heap may go down from a new peak: the copy is made before the free. */
static inline void peak_check(void)
{
    uint64_t max = atomic_load_explicit(&heap_max, memory_order_relaxed);
    uint64_t copied = atomic_load_explicit(&heap_copied, memory_order_relaxed);
    if (UNLIKELY(max > copied + copied / 64))
        peak_copy(max);
}

/* The block p is being freed (by any thread, with or without a state). */
void heap_untrack(struct piano_thread *ts, void *p)
{
    struct heap_entry e;
    peak_check();
    if (heap_take(p, &e, ts, 1))
        atomic_fetch_sub_explicit(&heap_now, e.size, memory_order_relaxed);
}

/* A block realloc is about to move: 1 and its size and owner when tracked.
 * The caller then calls heap_put_back (realloc failed) or heap_realloc_freed. */
int heap_take_for_realloc(struct piano_thread *ts, void *p, uint64_t *size, struct piano_node **node)
{
    struct heap_entry e;
    if (!heap_take(p, &e, ts, 0))
        return 0;
    *size = e.size;
    *node = e.node;
    return 1;
}

/* The realloc in flight of a block node owns is over. */
static inline void realloc_done(struct piano_thread *ts, struct piano_node *node)
{
    if (!owns(ts, node))
        atomic_fetch_sub_explicit(&foreign_reallocs, 1, memory_order_release);
}

void heap_put_back(struct piano_thread *ts, void *p, uint64_t size, struct piano_node *node)
{
    uint64_t h = heap_hash((uintptr_t)p);
    struct heap_shard *s = shard_of(h);
    struct heap_entry e = { (uintptr_t)p, size, node };
    shard_lock(s);
    if (2 * (s->used + 1) > s->mask + 1ull && shard_grow(s) != 0) {
        owner_freed(NULL, node, size);
        realloc_done(ts, node);
        shard_unlock(s);
        atomic_fetch_sub_explicit(&heap_now, size, memory_order_relaxed);
        return;
    }
    entry_put(s->tab, s->mask, &e);
    s->used++;
    realloc_done(ts, node);
    shard_unlock(s);
}

/* realloc moved (or freed) a tracked block: the old one's free, after the
 * peak check a free makes. */
void heap_realloc_freed(struct piano_thread *ts, uint64_t size, struct piano_node *node)
{
    peak_check();
    owner_freed(ts, node, size);
    realloc_done(ts, node);
    atomic_fetch_sub_explicit(&heap_now, size, memory_order_relaxed);
}

void heap_init(void)
{
    const char *v = getenv("PIANO_HEAP");
    g_heap_on = v && *v && strcmp(v, "0") != 0;
}

/* The run ends: the last copy, if the heap grew past the copied peak since. */
void heap_finish(void)
{
    if (!g_heap_on)
        return;
    uint64_t max = atomic_load(&heap_max);
    if (max > atomic_load(&heap_copied) || !atomic_load(&heap_gen))
        peak_copy(max);
}

/* Whether the state's contexts still own live blocks (a thread's, at its end). */
static int owns_live(struct piano_thread *ts)
{
    struct piano_node *nodes = PIANO_NODES(ts);
    for (int pass = 0; pass < 2; pass++) {
        uint32_t lo = pass ? PIANO_NODE_CAP : 0;
        uint32_t hi = pass ? (ts->contexts_truncated ? PIANO_NODES_TOTAL : 0) : ts->n_nodes;
        for (uint32_t i = lo; i < hi; i++)
            if (nodes[i].allocs != piano_node_freed(&nodes[i], 0))
                return 1;
    }
    return 0;
}

/* The states kept for the heap's frees (under g.threads_lock), the heir last. */
struct piano_thread *heap_kept_states(void)
{
    return heap_kept;
}

/* ---------------------------------------------------------------- the heir */

/* A short thread whose blocks outlive it (a reply another thread frees) would
 * keep its whole state, and its slot from reuse, until they are freed: ~24 KB
 * of memory and spool a thread, and every peak copy reading them all. So
 * once HEAP_KEPT_BATCH such states wait, their live blocks move to the heir,
 * a state of the process's own (thread name "ended threads", no calls) whose
 * contexts have the same paths: each context's live allocations leave the
 * ended state's figures (allocs and alloc_bytes less the live ones, so its
 * in use is 0) for the heir's context (allocs and alloc_bytes of the live
 * ones), the owner map's entries are pointed at the heir's contexts, and the
 * ended states end as others do (their slots reused). Per context, summed
 * over threads, allocations and in use stay exact; the blocks' thread is the
 * heir's. The heir's contexts are found by (parent, function) in a hash of
 * its own (the state's is the hooks'). */
#define HEAP_KEPT_BATCH 32u
#define HEIR_HASH_SLOTS (2u * PIANO_NODE_CAP)
static uint32_t heap_kept_n;      /* kept states on the list, the heir not counted (g.threads_lock) */
static struct piano_thread *heir; /* made at the first move; last on heap_kept */
static int heir_off;              /* it could not be made, or is full: states are kept as before */
static uint32_t *heir_hash;       /* (parent << 17 | fn) -> 1 + node; 0 empty */
static uint64_t *heir_keys;

/* The heir's context (parent, fn), made if new; 0 when full. */
static uint32_t heir_node(uint32_t parent, uint32_t fn)
{
    uint64_t key = ((uint64_t)parent << 32) | fn;
    uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (HEIR_HASH_SLOTS - 1);
    for (; heir_hash[i]; i = (i + 1) & (HEIR_HASH_SLOTS - 1))
        if (heir_keys[i] == key)
            return heir_hash[i] - 1;
    uint32_t n = heir->n_nodes;
    if (n >= PIANO_NODE_CAP)
        return 0;
    struct piano_node *node = &PIANO_NODES(heir)[n];
    node->parent = parent;
    node->fn = fn;
    __atomic_store_n(&heir->n_nodes, n + 1, __ATOMIC_RELEASE);
    heir_keys[i] = key;
    heir_hash[i] = n + 1;
    return n;
}

/* Makes the heir (under copy_lock, not g.threads_lock: a state's slot is
 * taken under it): 0, or -1. The caller puts it on heap_kept. */
static int heir_make(void)
{
    heir_hash = mmap(NULL, HEIR_HASH_SLOTS * (sizeof *heir_hash + sizeof *heir_keys), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (heir_hash == MAP_FAILED) {
        heir_hash = NULL;
        return -1;
    }
    heir_keys = (uint64_t *)(heir_hash + HEIR_HASH_SLOTS);
    struct piano_thread *h = state_new(atomic_fetch_add(&g.next_thread, 1), NULL);
    if (h)
        cpu_state_end(h);   /* it measures no thread */
    if (h && h->anon) {     /* only in memory: the import would not find it after a crash */
        munmap(h, PIANO_SLOT_SIZE);
        h = NULL;
    }
    if (!h) {
        munmap(heir_hash, HEIR_HASH_SLOTS * (sizeof *heir_hash + sizeof *heir_keys));
        heir_hash = NULL;
        return -1;
    }
    h->tid = 0;
    memset(h->name, 0, sizeof h->name);
    memcpy(h->name, "ended threads", sizeof "ended threads");
    h->dead = 1;
    h->heap_gen = atomic_load(&heap_gen);
    h->next = NULL;
    heir = h;
    return 0;
}

/* Whether ended state t can give its blocks to the heir. */
static int movable(const struct piano_thread *t)
{
    return t != heir && !t->anon && !t->sig && !t->contexts_truncated && t->n_nodes <= PIANO_NODE_CAP;
}

/* Moves the live blocks of the states of batch to the heir (every shard
 * locked). maps[k]: room for batch[k]'s context -> heir context. */
static void heir_take(struct piano_thread **batch, uint32_t n, uint32_t **maps)
{
    for (uint32_t k = 0; k < n; k++) {
        struct piano_thread *t = batch[k];
        struct piano_node *nodes = PIANO_NODES(t), *hn = PIANO_NODES(heir);
        uint32_t *map = maps[k];
        const uint32_t mark = UINT32_MAX;
        /* The contexts with live blocks and their ancestors (children
         * follow their parents: from the last, a parent is marked by its
         * children before it is reached)... */
        for (uint32_t i = t->n_nodes; i-- > 1;) {
            struct piano_node *x = &nodes[i];
            if (x->allocs != piano_node_freed(x, 0) || x->alloc_bytes != piano_node_freed(x, 1))
                map[i] = mark;
            if (map[i] == mark && x->parent < i)
                map[x->parent] = mark;
        }
        /* ... each given the heir's context of the same path (0: the heir is full). */
        map[0] = 0;
        for (uint32_t i = 1; i < t->n_nodes; i++) {
            if (map[i] != mark)
                continue;
            uint32_t parent = nodes[i].parent < i ? nodes[i].parent : 0;
            map[i] = parent && !map[parent] ? 0 : heir_node(map[parent], nodes[i].fn);
        }
        for (uint32_t i = 1; i < t->n_nodes; i++) {
            struct piano_node *x = &nodes[i];
            uint64_t live = x->allocs - piano_node_freed(x, 0), bytes = x->alloc_bytes - piano_node_freed(x, 1);
            if (!map[i] || (!live && !bytes))
                continue;   /* nothing live; or the heir is full: the blocks stay with t (kept) */
            x->allocs -= live;
            x->alloc_bytes -= bytes;
            __atomic_fetch_add(&hn[map[i]].allocs, live, __ATOMIC_RELAXED);
            __atomic_fetch_add(&hn[map[i]].alloc_bytes, bytes, __ATOMIC_RELAXED);
        }
    }
    /* Every entry an ended context of the batch owns now names the heir's. */
    for (int si = 0; si < HEAP_SHARDS; si++) {
        struct heap_shard *s = &shards[si];
        for (uint64_t i = 0; s->tab && i <= s->mask; i++) {
            if (!s->tab[i].key)
                continue;
            for (uint32_t k = 0; k < n; k++) {
                uintptr_t off = (uintptr_t)s->tab[i].node - (uintptr_t)PIANO_NODES(batch[k]);
                if (off < (uintptr_t)batch[k]->n_nodes * sizeof(struct piano_node)) {
                    uint32_t to = maps[k][off / sizeof(struct piano_node)];
                    if (to)
                        s->tab[i].node = &PIANO_NODES(heir)[to];
                    break;
                }
            }
        }
    }
}

/* The kept states, once HEAP_KEPT_BATCH wait: their live blocks go to the
 * heir and they end as other states do (state_release). Called by an ending
 * thread, holding no lock. */
void heap_kept_trim(void)
{
    /* Not with snapshots: they read ended slots by number (snap.c), and
     * would see the live allocations both in the ended state and the heir. */
    if (!g_heap_on || heir_off || snap_active() || __atomic_load_n(&heap_kept_n, __ATOMIC_RELAXED) < HEAP_KEPT_BATCH)
        return;
    struct piano_thread *batch[HEAP_KEPT_BATCH];
    uint32_t *maps[HEAP_KEPT_BATCH];
    size_t map_len[HEAP_KEPT_BATCH];
    uint32_t n = 0;
    pthread_mutex_lock(&copy_lock);
    int made = !heir && !heir_off && !g.finished && heir_make() == 0;
    pthread_mutex_lock(&g.threads_lock);
    if (made) {   /* last on the list the peak copy and fork read */
        struct piano_thread **tail = &heap_kept;
        while (*tail)
            tail = &(*tail)->next;
        *tail = heir;
    }
    if (!g.finished && !heir_off && heap_kept_n >= HEAP_KEPT_BATCH && heir) {
        for (struct piano_thread *t = heap_kept; t && n < HEAP_KEPT_BATCH; t = t->next) {
            if (!movable(t))
                continue;
            map_len[n] = ((size_t)t->n_nodes * sizeof(uint32_t) + 4095) & ~(size_t)4095;
            void *m = mmap(NULL, map_len[n], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                break;
            maps[n] = m;
            batch[n++] = t;
        }
        for (int i = 0; i < HEAP_SHARDS; i++)
            shard_lock(&shards[i]);
        /* A realloc in flight holds an owner outside the map: not now. */
        int quiet = atomic_load_explicit(&foreign_reallocs, memory_order_acquire) == 0;
        if (quiet)
            heir_take(batch, n, maps);
        for (int i = 0; i < HEAP_SHARDS; i++)
            shard_unlock(&shards[i]);
        if (quiet) {
            uint32_t left = 0;
            for (struct piano_thread **p = &heap_kept; *p;) {
                struct piano_thread *t = *p;
                int moved = 0;
                for (uint32_t k = 0; k < n && !moved; k++)
                    moved = batch[k] == t && !owns_live(t);
                if (moved) {
                    *p = t->next;
                } else {
                    left += t != heir;
                    p = &t->next;
                }
            }
            heap_kept_n = left;
            if (left >= HEAP_KEPT_BATCH)
                heir_off = 1;   /* the heir is full, or the kept cannot move: as before */
        } else {
            n = 0;
        }
    } else if (!heir) {
        heir_off = 1;
    }
    pthread_mutex_unlock(&g.threads_lock);
    pthread_mutex_unlock(&copy_lock);
    for (uint32_t k = 0; k < n; k++) {
        munmap(maps[k], map_len[k]);
        if (!owns_live(batch[k]))
            state_release(batch[k]);
    }
}

/* A thread ends: 1 when its states must stay mapped (their contexts own live
 * blocks, which any thread may free later); it is then kept on a list the
 * peak copy reads, under g.threads_lock (held by the caller), until it moves
 * to the heir (heap_kept_trim). */
int heap_keep_state(struct piano_thread *ts)
{
    if (!g_heap_on || !(owns_live(ts) || (ts->sig && owns_live(ts->sig))))
        return 0;
    ts->next = heap_kept;
    heap_kept = ts;
    heap_kept_n++;
    return 1;
}

/* In a forked child: the map holds the parent's blocks, which are not the
 * child's run's (their frees are ignored); a shard lock or the copy lock may
 * have been held by a thread that does not exist here. */
void heap_atfork_child(void)
{
    for (int i = 0; i < HEAP_SHARDS; i++) {
        if (shards[i].tab)
            munmap(shards[i].tab, (shards[i].mask + 1ull) * sizeof *shards[i].tab);
        memset(&shards[i], 0, sizeof shards[i]);
    }
    pthread_mutex_init(&copy_lock, NULL);
    heap_kept = NULL;   /* unmapped by the fork's child as the parent listed them (fork.c) */
    heap_kept_n = 0;
    heir = NULL;        /* the parent's, on that list */
    heir_off = 0;
    if (heir_hash)
        munmap(heir_hash, HEIR_HASH_SLOTS * (sizeof *heir_hash + sizeof *heir_keys));
    heir_hash = NULL;
    heir_keys = NULL;
    atomic_store(&foreign_reallocs, 0);
    atomic_store(&heap_now, 0);
    atomic_store(&heap_max, 0);
    atomic_store(&heap_copied, 0);
    atomic_store(&heap_gen, 0);
}
