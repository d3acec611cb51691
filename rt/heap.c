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
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define HEAP_SHARDS 64
#define HEAP_SHARD_MIN 1024u   /* entries of a shard's first table */

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

static inline void shard_lock(struct heap_shard *s)
{
    for (unsigned spins = 0; atomic_exchange_explicit(&s->lock, 1, memory_order_acquire); spins++) {
        while (atomic_load_explicit(&s->lock, memory_order_relaxed)) {
            if (++spins > 1000)
                sched_yield();   /* its holder was preempted */
#if defined(__x86_64__) || defined(__i386__)
            else
                __builtin_ia32_pause();
#endif
        }
    }
}

static inline void shard_unlock(struct heap_shard *s)
{
    atomic_store_explicit(&s->lock, 0, memory_order_release);
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

/* Adds a free of `size` bytes to the owning context; ts: the freeing
 * thread's state, or NULL. Most frees are the owner thread's own: plain adds
 * to fields only it writes; another thread's are atomic, to fields of their own. */
static inline void owner_freed(struct piano_thread *ts, struct piano_node *node, uint64_t size)
{
    if (ts && (uintptr_t)node - (uintptr_t)PIANO_NODES(ts) < PIANO_NODES_TOTAL * sizeof *node) {
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
    shard_unlock(s);
    if (UNLIKELY(old.key)) {   /* freed where piano could not see it (a raw __libc_free) */
        owner_freed(NULL, old.node, old.size);
        atomic_fetch_sub_explicit(&heap_now, old.size, memory_order_relaxed);
    }
    uint64_t now = atomic_fetch_add_explicit(&heap_now, n, memory_order_relaxed) + n;
    uint64_t max = atomic_load_explicit(&heap_max, memory_order_relaxed);
    while (now > max)
        if (atomic_compare_exchange_weak_explicit(&heap_max, &max, now, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            ts->heap_peak = now;
            break;
        }
}

/* Removes p from the map; 1 and its owner's entry when it was there. */
static int heap_take(void *p, struct heap_entry *out)
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
    shard_unlock(s);
    return 1;
}

/* The block p is being freed (by any thread, with or without a state). */
void heap_untrack(struct piano_thread *ts, void *p)
{
    struct heap_entry e;
    if (!heap_take(p, &e))
        return;
    uint64_t max = atomic_load_explicit(&heap_max, memory_order_relaxed);
    uint64_t copied = atomic_load_explicit(&heap_copied, memory_order_relaxed);
    if (UNLIKELY(max > copied + copied / 64))
        peak_copy(max);   /* the heap goes down from a new peak: before this free */
    owner_freed(ts, e.node, e.size);
    atomic_fetch_sub_explicit(&heap_now, e.size, memory_order_relaxed);
}

/* A block realloc is about to move: 1 and its size and owner when tracked.
 * The caller puts it back (heap_put_back) if realloc fails. */
int heap_take_for_realloc(void *p, uint64_t *size, struct piano_node **node)
{
    struct heap_entry e;
    if (!heap_take(p, &e))
        return 0;
    *size = e.size;
    *node = e.node;
    return 1;
}

void heap_put_back(void *p, uint64_t size, struct piano_node *node)
{
    uint64_t h = heap_hash((uintptr_t)p);
    struct heap_shard *s = shard_of(h);
    struct heap_entry e = { (uintptr_t)p, size, node };
    shard_lock(s);
    if (2 * (s->used + 1) > s->mask + 1ull && shard_grow(s) != 0) {
        shard_unlock(s);
        owner_freed(NULL, node, size);
        atomic_fetch_sub_explicit(&heap_now, size, memory_order_relaxed);
        return;
    }
    entry_put(s->tab, s->mask, &e);
    s->used++;
    shard_unlock(s);
}

/* realloc moved (or freed) a tracked block: the old one's free, after the
 * peak check a free makes. */
void heap_realloc_freed(struct piano_thread *ts, uint64_t size, struct piano_node *node)
{
    uint64_t max = atomic_load_explicit(&heap_max, memory_order_relaxed);
    uint64_t copied = atomic_load_explicit(&heap_copied, memory_order_relaxed);
    if (UNLIKELY(max > copied + copied / 64))
        peak_copy(max);
    owner_freed(ts, node, size);
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

/* The states kept for the heap's frees (under g.threads_lock). */
struct piano_thread *heap_kept_states(void)
{
    return heap_kept;
}

/* A thread ends: 1 when its states must stay mapped (their contexts own live
 * blocks, which any thread may free later); it is then kept on a list the
 * peak copy reads, under g.threads_lock (held by the caller). */
int heap_keep_state(struct piano_thread *ts)
{
    if (!g_heap_on || !(owns_live(ts) || (ts->sig && owns_live(ts->sig))))
        return 0;
    ts->next = heap_kept;
    heap_kept = ts;
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
    atomic_store(&heap_now, 0);
    atomic_store(&heap_max, 0);
    atomic_store(&heap_copied, 0);
    atomic_store(&heap_gen, 0);
}
