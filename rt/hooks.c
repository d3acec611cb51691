/*
 * hooks.c - the per-call path: __piano_enter and __piano_exit, and what they
 * reach on a thread's state: the shadow stack, the calling contexts, the
 * histograms and the frames. Everything they inline is in this file; its
 * calls into other files (a thread's first call, a function's first call, a
 * frame past the budget, a full frame buffer) are slow paths. Each hook's
 * fast path makes its checks before any write and no call but tail calls
 * (enter_full, exit_full: the general path, which redoes the hook): so it
 * saves few registers (bench/README.md, "The per-call path's instructions").
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* ---------------------------------------------------------------- contexts, pages */

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
    uint32_t *hash = piano_hash_table(ts, mask);
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

/* Makes (parent, n) the function's last context lookup, the one before its
 * second: each pair (parent + 1, node) is copied as one 8-byte word. */
static inline __attribute__((always_inline)) void ctx_push(struct piano_fnrec *fr, uint32_t parent, uint32_t n)
{
    _Static_assert(offsetof(struct piano_fnrec, last_node) == offsetof(struct piano_fnrec, last_parent) + 4 &&
                       offsetof(struct piano_fnrec, last_node2) == offsetof(struct piano_fnrec, last_parent2) + 4,
                   "a context cache is two adjacent words");
    uint64_t w;
    memcpy(&w, (char *)fr + offsetof(struct piano_fnrec, last_parent), 8);
    memcpy((char *)fr + offsetof(struct piano_fnrec, last_parent2), &w, 8);
    fr->last_parent = parent + 1;
    fr->last_node = n;
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
    uint32_t mask = hash_mask(ts);
    uint32_t *hash = piano_hash_table(ts, mask);
    uint32_t h = context_hash(parent, fn, mask);
    while ((n = hash[h]) != 0) {
        if (nodes[n].parent == parent && nodes[n].fn == fn)
            goto found;
        h = (h + 1) & mask;
    }
    if (ts->n_nodes < PIANO_NODE_CAP) {
        /* Kept under three quarters full: jq's 1,182 contexts take 2,048
         * slots (2 memory pages), not 4,096 (4) at half. */
        if (4 * ts->n_nodes >= 3 * (mask + 1) && mask + 1 < PIANO_HASH_CAP) {
            grow_hash(ts);
            mask = ts->hash_mask;
            hash = piano_hash_table(ts, mask);
            for (h = context_hash(parent, fn, mask); hash[h]; h = (h + 1) & mask)
                ;
        }
        n = ts->n_nodes;
        nodes[n].parent = parent;
        nodes[n].fn = fn;
        hash[h] = n;
        /* Released: a snapshot (snap.c) that reads the count finds the node's
         * parent and function written. */
        __atomic_store_n(&ts->n_nodes, n + 1, __ATOMIC_RELEASE);
    } else {
        n = PIANO_NODE_CAP + fn;
        nodes[n].parent = 0;
        nodes[n].fn = fn;
        ts->contexts_truncated++;
    }
found:
    up->cache_fn = fn;
    up->cache_child = n;
    ctx_push(fr, parent, n);
    return n;
}

static __attribute__((noinline)) uint32_t hist_page(struct piano_thread *ts, uint16_t *table, unsigned index)
{
    if (ts->n_pages >= PIANO_PAGE_CAP) {
        ts->hist_dropped++;
        return 0;
    }
    uint32_t p = ts->n_pages++;
    table[index] = (uint16_t)p;
    return p;
}

/* A function's page table, from the pool (0 when the pool is spent). */
static uint32_t hist_table(struct piano_thread *ts)
{
    if (ts->n_pages + PIANO_TABLE_PAGES > PIANO_PAGE_CAP)
        return 0;
    uint32_t p = ts->n_pages;
    ts->n_pages += PIANO_TABLE_PAGES;
    /* Written before it is read: a read first of a page of the file is a
     * fault, and the write after it another. */
    for (uint32_t i = 0; i < PIANO_TABLE_PAGES; i++)
        ((volatile uint32_t *)PIANO_PAGES(ts))[(size_t)(p + i) * PIANO_PAGE_WORDS] = 0;
    return p;
}

/* Counts the sample of buckets bs (self) and bt (total) through page table tb. */
static inline __attribute__((always_inline)) void hist_count(struct piano_thread *ts, uint32_t tb, unsigned bs,
                                                             unsigned bt)
{
    uint16_t *table = (uint16_t *)(PIANO_PAGES(ts) + (size_t)tb * PIANO_PAGE_WORDS);
    uint32_t ps = table[bs >> PIANO_PAGE_SUB_BITS];
    if (UNLIKELY(!ps))
        ps = hist_page(ts, table, bs >> PIANO_PAGE_SUB_BITS);
    piano_hist_inc(ts, (size_t)ps * PIANO_PAGE_WORDS + (bs & PIANO_PAGE_SUB_MASK) * 2);
    uint32_t pt = table[bt >> PIANO_PAGE_SUB_BITS];
    if (UNLIKELY(!pt))
        pt = hist_page(ts, table, bt >> PIANO_PAGE_SUB_BITS);
    piano_hist_inc(ts, (size_t)pt * PIANO_PAGE_WORDS + (bt & PIANO_PAGE_SUB_MASK) * 2 + 1);
}

/* A function's sample past the PIANO_FEW_MAX in its page few (hist_first):
 * its page table made, the samples counted there, few its page of the self
 * bucket of this sample, which its caller counts. Returns the table, or 0
 * when the pool is spent (the sample is lost, and counted). */
static __attribute__((noinline)) uint32_t hist_few_full(struct piano_thread *ts, struct piano_fnrec *fr, uint32_t *few,
                                                        uint32_t few_page, unsigned bs)
{
    uint32_t table = hist_table(ts);
    if (!table) {
        ts->hist_dropped += 2;
        return 0;
    }
    /* The samples' page becomes the page of this sample's self bucket,
     * zeroed: the table is not the function's until they are all in it. */
    uint32_t pairs[PIANO_FEW_MAX];
    memcpy(pairs, few + 1, sizeof pairs);
    memset(few, 0, PIANO_PAGE_BYTES);
    ((uint16_t *)(PIANO_PAGES(ts) + (size_t)table * PIANO_PAGE_WORDS))[bs >> PIANO_PAGE_SUB_BITS] = (uint16_t)few_page;
    for (uint32_t i = 0; i < PIANO_FEW_MAX; i++)
        hist_count(ts, table, pairs[i] & 0xffff, pairs[i] >> 16);
    fr->table = table;
    return table;
}

/* A sample of a function without a page table (hist_add's slow path): its
 * first PIANO_FEW_MAX samples are kept as bucket pairs in one page of the
 * pool (spool.h PIANO_TABLE_FEW), made at its first; the next one makes its
 * page table and counts them there. Returns the table to count this sample
 * in, or 0 when it was kept (or lost: the pool is spent, and it is counted). */
static __attribute__((noinline)) uint32_t hist_first(struct piano_thread *ts, struct piano_fnrec *fr, unsigned bs,
                                                     unsigned bt)
{
    uint32_t tb = fr->table;
    uint32_t *words = PIANO_PAGES(ts);
    if (!tb) {
        if (ts->n_pages >= PIANO_PAGE_CAP) {
            ts->hist_dropped += 2;
            return 0;
        }
        uint32_t p = ts->n_pages++;
        uint32_t *few = words + (size_t)p * PIANO_PAGE_WORDS;
        few[1] = bs | bt << 16;
        few[0] = 1;
        fr->table = PIANO_TABLE_FEW | p;
        return 0;
    }
    uint32_t *few = words + (size_t)(tb & ~PIANO_TABLE_FEW) * PIANO_PAGE_WORDS;
    uint32_t n = few[0];
    if (UNLIKELY(n >= PIANO_FEW_MAX))
        return hist_few_full(ts, fr, few, tb & ~PIANO_TABLE_FEW, bs);
    few[1 + n] = bs | bt << 16;
    few[0] = n + 1;
    return 0;
}

/* Counts one call's self and total ticks in the function's histograms. */
static inline __attribute__((always_inline)) void hist_add(struct piano_thread *ts, struct piano_fnrec *fr, uint64_t self, uint64_t total)
{
    unsigned bs = piano_hist_bucket(self), bt = piano_hist_bucket(total);
    uint32_t tb = fr->table;
    if (UNLIKELY((int32_t)tb <= 0) && !(tb = hist_first(ts, fr, bs, bt)))
        return;
    hist_count(ts, tb, bs, bt);
}

typedef piano_hist_counter hist_word;   /* PIANO_PAGES' word */

/* The counters a sample of (self, total) ticks of fr's function adds one to,
 * when its page table and both pages exist and neither counter is about to
 * wrap: hist_add's fast path (the exit hook's), which then adds to them with
 * no call. Returns 0 otherwise: hist_add makes the pages, and carries. */
static inline __attribute__((always_inline)) int hist_counters(struct piano_thread *ts, struct piano_fnrec *fr,
                                                               uint64_t self, uint64_t total, hist_word **cs,
                                                               hist_word **ct)
{
    uint32_t tb = fr->table;
    if (UNLIKELY((int32_t)tb <= 0))   /* none yet, or its first samples (PIANO_TABLE_FEW) */
        return 0;
    unsigned bs = piano_hist_bucket(self), bt = piano_hist_bucket(total);
    const uint16_t *table = (const uint16_t *)(PIANO_PAGES(ts) + (size_t)tb * PIANO_PAGE_WORDS);
    uint32_t ps = table[bs >> PIANO_PAGE_SUB_BITS], pt = table[bt >> PIANO_PAGE_SUB_BITS];
    if (UNLIKELY(!ps || !pt))
        return 0;
    *cs = PIANO_PAGES(ts) + (size_t)ps * PIANO_PAGE_WORDS + (bs & PIANO_PAGE_SUB_MASK) * 2;
    *ct = PIANO_PAGES(ts) + (size_t)pt * PIANO_PAGE_WORDS + (bt & PIANO_PAGE_SUB_MASK) * 2 + 1;
    /* Counters narrower than 64 bits (compiled out for 64). */
    if (sizeof(hist_word) < 8 && UNLIKELY(**cs == (hist_word)-1 || **ct == (hist_word)-1))
        return 0;
    return 1;
}

/* ---------------------------------------------------------------- frames */

/* Counts a frame's total ticks in the thread's frame histogram (the 'total'
 * words of pages of the histogram pool; no page left: the sample is lost,
 * which the import sees as a histogram short of the count). */
static inline void frame_hist_add(struct piano_thread *ts, uint64_t total)
{
    unsigned b = piano_hist_bucket(total);
    uint32_t pg = ts->frame_pages[b >> PIANO_HIST_SUB_BITS];
    if (UNLIKELY(!pg)) {   /* an octave's pages, consecutive: 64 buckets */
        if (ts->n_pages + PIANO_OCTAVE_PAGES > PIANO_PAGE_CAP)
            return;
        pg = ts->n_pages;
        ts->n_pages += PIANO_OCTAVE_PAGES;
        ts->frame_pages[b >> PIANO_HIST_SUB_BITS] = (uint16_t)pg;
    }
    piano_hist_inc(ts, (size_t)pg * PIANO_PAGE_WORDS + (b & PIANO_HIST_SUB_MASK) * 2 + 1);
}

static inline __attribute__((always_inline)) void frame_open(struct piano_thread *ts, uint32_t depth)
{
    ts->frame_depth = depth;
    ts->epoch++;
    ts->n_touched = 0;
    ts->frame_allocs = ts->allocs;
    ts->frame_alloc_bytes = ts->alloc_bytes;
    ts->frame_frees = ts->frees;
    ts->frame_free_bytes = ts->free_bytes;
    ts->frame_off0 = ts->off_ns;
}

/* Writes the record of the frame numbered n that ended at tick t, kept as
 * `kept` (PIANO_KEPT_*). Apart from frame_close: a frame that is not kept
 * (past the budget: most of a long run's) then takes no callee-saved
 * registers and none of the record's work. */
static __attribute__((noinline)) void frame_write(struct piano_thread *ts, uint64_t t0, uint64_t t, uint64_t n,
                                                  uint32_t kept)
{
    size_t need = PIANO_FRAME_HEAD_MAX + (size_t)ts->n_touched * PIANO_FRAME_FN_MAX + PIANO_PV_SLACK;
    if (need > PIANO_CHUNK_SIZE - sizeof(struct piano_chunk_hdr)) {
        ts->frames_dropped++;
        return;
    }
    int full = ts->chunk && sizeof(struct piano_chunk_hdr) + ts->chunk_used + need > ts->chunk_room;
    if (UNLIKELY(!ts->chunk || full) && frame_room(ts, full, need) != 0) {
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
    p = piano_pv_put(p, ts->off_ns - ts->frame_off0);
    struct piano_fnrec *fns = PIANO_FNS(ts);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < ts->n_touched; i++) {
        uint32_t fn = PIANO_TOUCHED(ts, i);
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

/* Closes the thread's frame, opened at tick t0, at tick t: counted and in the
 * frame histogram (exact, kept or not); its record written if the budget
 * keeps it (budget.c). */
static __attribute__((noinline)) void frame_close(struct piano_thread *ts, uint64_t t0, uint64_t t)
{
    ts->frame_depth = 0;
    if (UNLIKELY(ts->frame_paused)) {   /* its call was parked (contexts.c): the frame holds that time */
        t0 -= ts->frame_paused;
        ts->frame_paused = 0;
    }
    ts->last_tick = t;
    uint64_t n = ++ts->frames_all;
    frame_hist_add(ts, t - t0);
    uint32_t kept = PIANO_KEPT_BUDGET;
    if (LIKELY(ts->keep_left)) {
        ts->keep_left--;
    } else if ((t - t0 <= ts->spike_ticks && (n & (FRAME_SPIKE_REFRESH - 1)) && (n & ((1ull << ts->sample_shift) - 1))) ||
               !(kept = frame_keep(ts, t - t0))) {
        /* Past the budget, neither a spike candidate nor in the sample (budget.c). */
        ts->epoch++;   /* counted, not kept */
        ts->n_touched = 0;
        return;
    } else {
        kept--;
    }
    frame_write(ts, t0, t, n, kept);
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
        PIANO_TOUCHED(ts, ts->n_touched++) = s->fn;
    }
    fr->frame_self += self;
    if (UNLIKELY(d == ts->frame_depth))
        frame_close(ts, t0, t);
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
uint32_t close_above(struct piano_thread *ts, uint32_t top, uint32_t keep, uint64_t t)
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
    uint64_t t = piano_now();
    cpu_resync(ts, PIANO_NODES(ts) + PIANO_STACK(ts)[d].node);
    d = close_above(ts, d, depth, t);
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
    else if (ts->frame_depth > k && ts->frame_depth <= d)   /* not PIANO_FRAME_PARKED */
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
    if (fn == PIANO_FN_SKIP)
        return d;   /* a site the run does not record, its byte read before it was cleared */
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
void close_all(struct piano_thread *ts, uint64_t t)
{
    uint32_t d = piano_depth(ts->depth);
    hook_begin(ts, d);
    if (ts->cpu_ok && ts->tid == (uint32_t)syscall(SYS_gettid))
        cpu_resync(ts, PIANO_NODES(ts) + PIANO_STACK(ts)[d].node);   /* its own thread's clocks only */
    hook_end(ts, close_above(ts, d, 0, t));
}

/* A CPU reading is due (PIANO_CPU): the thread was scheduled in since the
 * anchor, or a user-mode sample was taken (cpu.c). A thread that does not
 * measure CPU time (cpu_ok 0: the default) tests one word: its perf words
 * are constant then, and cpu_resync does nothing. */
static inline __attribute__((always_inline)) int cpu_due(const struct piano_thread *ts)
{
    return ts->cpu_ok && (*ts->cpu_lockp != ts->cpu_lock || *ts->cpu_headp != ts->cpu_head);
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

/* Past the fast path (below): they record on a signal state with enter_on_sp and exit_on_sp. */
static void enter_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d, int tsc, uintptr_t sp);
static void exit_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d, uint64_t t, uintptr_t sp);

/* An entry at depth d found, after its entry tick, the thread switched in
 * since the anchor: the off-CPU time read now, or a sample, was the
 * innermost call's in flight until then (none: the root's), the call being
 * entered starts after the reading (its tick, and the frame it opens, are
 * taken again). Stores the call's entry tick, ends the hook and returns it. */
static __attribute__((noinline)) uint64_t enter_resync(struct piano_thread *ts, uint32_t d, int tsc)
{
    cpu_resync(ts, PIANO_NODES(ts) + PIANO_STACK(ts)[d].node);
    if (ts->frame_depth == d + 1)
        ts->frame_off0 = ts->off_ns;   /* the frame this call opens: its off-CPU time from here */
    uint64_t t0 = tsc ? clock_now(1) : clock_now(0);
    PIANO_STACK(ts)[d + 1].t0 = t0;
    hook_end(ts, d + 1);
    return t0;
}

/* The node of context (parent, fn) if a cache has it, else 0 (the root,
 * never a call's); the caller tried the function's last parent
 * (fr->last_parent): its parent before (a function called from alternating
 * callers), then the parent's last child (recursion: every depth is a new
 * parent). A hit in the parent's cache makes that context the function's
 * last; context_of keeps the caches alike. */
static inline __attribute__((always_inline)) uint32_t context_cached2(struct piano_thread *ts,
                                                                     struct piano_fnrec *fr, uint32_t parent,
                                                                     uint32_t fn)
{
    if (fr->last_parent2 == parent + 1)
        return fr->last_node2;
    struct piano_node *up = PIANO_NODES(ts) + parent;
    uint32_t n = up->cache_child;
    if (!n || up->cache_fn != fn)
        return 0;
    ctx_push(fr, parent, n);
    return n;
}

/* Records the entry of a call of site on ts at depth d (hook_begin done),
 * whose frame is at stack position sp: every case, reached from the fast
 * path (enter_on_sp) by a tail call when one of its checks fails, before it
 * wrote anything. Returns the entry tick (0 if nothing was recorded). */
static __attribute__((noinline)) uint64_t enter_full(struct piano_thread *ts, struct piano_site *site, uint32_t d,
                                                     uintptr_t sp, int tsc)
{
    /* Another thread may be registering the site: an atomic load (a plain mov
     * on x86-64), acquire so that g_frame_fn[fn] is seen set. */
    uint32_t fn = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (UNLIKELY(fn - 1u >= PIANO_FN_SKIP - 1u)) {   /* 0 or PIANO_FN_SKIP */
        if (!fn)
            fn = register_site(site, NULL, 0);
        if (fn == PIANO_FN_SKIP) {   /* not selected at run time: its byte is clear now */
            hook_end(ts, d);
            return 0;
        }
    }
    struct piano_slot *stack = PIANO_STACK(ts);
    /* The caller's slot is normally above (an inlined call: at the same
     * position). One below, or the same function at the same position, was
     * left by longjmp. */
    if (UNLIKELY(stack[d].sp < sp || (stack[d].sp == sp && stack[d].fn == fn)))
        d = drop_abandoned(ts, sp, fn, d);
    struct piano_fnrec *fr = PIANO_FNS(ts) + fn;
    uint32_t parent = stack[d < PIANO_CTX_DEPTH ? d : PIANO_CTX_DEPTH].node;
    uint32_t node = fr->last_node;
    if (UNLIKELY(fr->last_parent != parent + 1) && !(node = context_cached2(ts, fr, parent, fn)))
        node = context_of(ts, fr, parent, fn);
    struct piano_slot *s = &stack[d + 1];
    s->node = node;
    s->fn = fn;
    s->sp = sp;
    s->child = 0;
    if (UNLIKELY(!ts->frame_depth) && g_frame_fn[fn])
        frame_open(ts, d + 1);
    uint64_t t0 = tsc ? clock_now(1) : clock_now(0);
    if (UNLIKELY(cpu_due(ts)))
        return enter_resync(ts, d, tsc);
    s->t0 = t0;
    hook_end(ts, d + 1);
    return t0;
}

/* Records the entry of a call of site on ts, whose frame is at stack
 * position sp. Returns its entry tick (0 past the fast path). The fast path:
 * a registered site, its caller's slot above sp, its context in a cache; it
 * makes no call (none but the slow paths' tail calls), so it saves no
 * registers. */
static inline __attribute__((always_inline)) uint64_t enter_on_sp(struct piano_thread *ts, struct piano_site *site,
                                                                  const int tsc, const uintptr_t sp)
{
    uint32_t d = ts->depth;
    if (UNLIKELY(d >= PIANO_STACK_CAP)) {   /* too deep, or a signal interrupted a hook */
        enter_busy(ts, site, d, tsc, sp);
        return 0;
    }
    hook_begin(ts, d);
    uint32_t fn = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    struct piano_slot *stack = PIANO_STACK(ts);
    /* Not registered, not selected, or the caller's slot below sp or the
     * same function's at sp (left by longjmp): the full path sorts it out. */
    if (UNLIKELY(fn - 1u >= PIANO_FN_SKIP - 1u) ||
        UNLIKELY(stack[d].sp <= sp && (stack[d].sp < sp || stack[d].fn == fn)))
        return enter_full(ts, site, d, sp, tsc);
    struct piano_fnrec *fr = PIANO_FNS(ts) + fn;
    uint32_t parent = stack[d < PIANO_CTX_DEPTH ? d : PIANO_CTX_DEPTH].node;
    uint32_t node = fr->last_node;
    if (UNLIKELY(fr->last_parent != parent + 1) && !(node = context_cached2(ts, fr, parent, fn)))
        return enter_full(ts, site, d, sp, tsc);
    struct piano_slot *s = &stack[d + 1];
    s->node = node;
    s->fn = fn;
    s->sp = sp;
    s->child = 0;
    if (UNLIKELY(!ts->frame_depth) && g_frame_fn[fn])
        frame_open(ts, d + 1);
    uint64_t t0 = clock_now(tsc);
    /* The thread was scheduled in since the CPU anchor: it was off the CPU;
     * or a user-mode sample was taken (cpu.c; constant words when CPU time is
     * not measured). Checked after the entry tick: a switch before it, in
     * this hook too, is outside the call's wall time, so not the call's
     * (checked before the tick, a switch between the check and the tick was
     * found at the call's exit and charged to it: a short call preempted
     * often showed no CPU time, e2e cpu_preempted_calls); the call's own time
     * starts after the reading (which makes sure no switch follows it). */
    if (UNLIKELY(cpu_due(ts)))
        return enter_resync(ts, d, tsc);
    s->t0 = t0;
    hook_end(ts, d + 1);
    return t0;
}

static __attribute__((noinline)) uint64_t exit_resync(struct piano_thread *ts, uint32_t d)
{
    cpu_resync(ts, PIANO_NODES(ts) + PIANO_STACK(ts)[d].node);   /* the call ending's */
    return piano_now();
}

/* Records the exit, at tick t, of a call of site on ts at depth d
 * (hook_begin done) whose frame is at stack position sp: every case, reached
 * from the fast path (exit_on_sp) by a tail call when one of its checks
 * fails, before it wrote anything. */
static __attribute__((noinline)) void exit_full(struct piano_thread *ts, struct piano_site *site, uint64_t t,
                                                uintptr_t sp, uint32_t d)
{
    /* A switch since the anchor (or after the exit tick t, before this
     * check), or a sample: the call ends after the reading, so that its wall
     * time holds the off-CPU time the reading adds (cpu_resync makes sure
     * none follows the reading). */
    if (UNLIKELY(cpu_due(ts)))
        t = exit_resync(ts, d);
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

/* The end of an exit at depth d, at tick t, whose call (entered at t0)
 * opened the thread's frame: the frame closes, then the hook ends. */
static __attribute__((noinline)) void exit_frame(struct piano_thread *ts, uint64_t t0, uint64_t t, uint32_t d)
{
    frame_close(ts, t0, t);
    hook_end(ts, d - 1);
}

/* Records the exit, at tick t, of a call of site on ts whose frame is at
 * stack position sp. The fast path (close_slot's work, checks first): the
 * top slot is the call's, no CPU reading is due, the previous sample's
 * histogram pages exist; it makes no call but tail calls. */
static inline __attribute__((always_inline)) void exit_on_sp(struct piano_thread *ts, struct piano_site *site,
                                                             uint64_t t, const uintptr_t sp)
{
    uint32_t d = ts->depth;
    if (UNLIKELY(d > PIANO_STACK_CAP)) {   /* too deep, or a signal interrupted a hook */
        exit_busy(ts, site, d, t, sp);
        return;
    }
    hook_begin(ts, d);
    struct piano_slot *stack = PIANO_STACK(ts);
    struct piano_slot *s = &stack[d];
    uint32_t fn = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
    struct piano_fnrec *fns = PIANO_FNS(ts);
    hist_word *cs, *ct;
    if (UNLIKELY(cpu_due(ts)) ||
        UNLIKELY(s->fn != fn || s->sp < sp) ||
        UNLIKELY(!hist_counters(ts, fns + ts->pend_fn, ts->pend_self, ts->pend_total, &cs, &ct))) {
        exit_full(ts, site, t, sp, d);
        return;
    }
    /* As close_slot, whose hist_add is the two increments here. */
    uint64_t t0 = s->t0;
    uint64_t total = t - t0;
    uint64_t self = total > s->child ? total - s->child : 0;
    s->t0 = t;
    s[-1].child += total;
    struct piano_node *n = PIANO_NODES(ts) + s->node;
    /* The sample's counters between the node's two words: two scalar adds
     * (the compiler cannot pair them into a vector add, three more
     * instructions, across a store that may alias). */
    n->calls++;
    (*cs)++;
    n->self += self;
    (*ct)++;
    ts->pend_fn = fn;
    ts->pend_self = self;
    ts->pend_total = total;
    struct piano_fnrec *fr = fns + fn;
    if (UNLIKELY(fr->epoch != ts->epoch)) {
        fr->epoch = ts->epoch;
        fr->frame_self = 0;
        PIANO_TOUCHED(ts, ts->n_touched++) = fn;
    }
    fr->frame_self += self;
    if (UNLIKELY(d == ts->frame_depth)) {
        exit_frame(ts, t0, t, d);
        return;
    }
    hook_end(ts, d - 1);
}

/* The state that records the calls of signal handlers run while a hook of ts
 * was interrupted: made at the first such call, NULL if it cannot be. */
static struct piano_thread *signal_state(struct piano_thread *ts)
{
    struct piano_thread *sig = __atomic_load_n(&ts->sig, __ATOMIC_ACQUIRE);
    if (sig || g.finished || atomic_load(&g.sandboxed))   /* a state takes system calls (sandbox.c) */
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

/* An entry on ts at depth word d, past the fast path: calls nested deeper
 * than the shadow stack are only counted by depth; a call made by a signal
 * handler while one of ts's hooks was interrupted goes to ts's signal state. */
static __attribute__((noinline)) void enter_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d,
                                                 int tsc, uintptr_t sp)
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
        enter_on_sp(sig, site, 1, sp);
    else
        enter_on_sp(sig, site, 0, sp);
}

static __attribute__((noinline)) void exit_busy(struct piano_thread *ts, struct piano_site *site, uint32_t d,
                                                uint64_t t, uintptr_t sp)
{
    if (!(d & PIANO_DEPTH_IN_HOOK)) {
        ts->depth = d - 1;
        return;
    }
    struct piano_thread *sig = ts->signal_of ? NULL : __atomic_load_n(&ts->sig, __ATOMIC_ACQUIRE);
    if (sig)
        exit_on_sp(sig, site, t, sp);
}

/* A thread's first call: its state made, then the entry recorded. */
static __attribute__((noinline)) void enter_first(struct piano_site *site, uintptr_t sp, int tsc)
{
    if (!piano_on())
        return;
    struct piano_thread *ts = thread_start();
    if (!ts)
        return;
    if (tsc)
        enter_on_sp(ts, site, 1, sp);
    else
        enter_on_sp(ts, site, 0, sp);
}

/* The hooks' stack position is their own frame's (the caller's stack
 * pointer less the return address and the saved frame pointer): the same in
 * the entry and the exit of a call. */
static inline __attribute__((always_inline)) void enter_hook(struct piano_site *site, const int tsc)
{
    struct piano_thread *ts = piano_tls;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (UNLIKELY(!ts)) {
        enter_first(site, sp, tsc);
        return;
    }
    enter_on_sp(ts, site, tsc, sp);
}

static inline __attribute__((always_inline)) void exit_hook(struct piano_site *site, const int tsc)
{
    struct piano_thread *ts = piano_tls;
    if (UNLIKELY(!ts))
        return;
    exit_on_sp(ts, site, clock_now(tsc), (uintptr_t)__builtin_frame_address(0));
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

/* ---------------------------------------------------------------- spans (span.c) */

/* A span's frame on the calling thread's stack (span.c): a slot of the span's
 * function at a stack position outside every stack (PIANO_SPAN_SP), so that
 * the longjmp reconciliation neither closes it at the next entry nor closes it
 * with the function that entered it (it goes on, as a coroutine's slots do);
 * the calls made while it is in the stack are its children. Returns the
 * entry tick, or 0 when nothing was recorded. */
uint64_t span_push(struct piano_site *site)
{
    struct piano_thread *ts = piano_tls;
    if (UNLIKELY(!ts)) {
        if (!piano_on())
            return 0;
        ts = thread_start();
        if (!ts)
            return 0;
    }
    return g_tsc_fast ? enter_on_sp(ts, site, 1, PIANO_SPAN_SP) : enter_on_sp(ts, site, 0, PIANO_SPAN_SP);
}

/* Ends the span's frame of site on the calling thread at tick t: the
 * innermost slot of site at PIANO_SPAN_SP (slots of other spans above it go
 * on); none: nothing. */
void span_pop(struct piano_site *site, uint64_t t)
{
    struct piano_thread *ts = piano_tls;
    if (UNLIKELY(!ts))
        return;
    exit_on_sp(ts, site, t, PIANO_SPAN_SP);
}
