/*
 * import_state.c - phase 2 of the import, for each thread whose state is
 * whole: its calling contexts (with their inclusive times, summed here), its
 * per-function stats and histograms, its calls in flight at the end, and its
 * frame histogram.
 */
#include "import_int.h"

#include <stdlib.h>
#include <string.h>

/* Function fn's sums on the thread being stored: made zero at its first use. */
static struct agg *agg_of(struct job *j, uint32_t fn)
{
    uint32_t s = j->agg_slot[fn];
    if (!s) {
        s = ++j->agg_n;
        j->agg_slot[fn] = s;
        j->agg[s].fn = fn;
    }
    return &j->agg[s];
}

/* Counts the calls in flight at the end (slots 1..depth of the shadow stack)
 * as calls: each timed to the end, its self time what is left after its
 * finished children and its in-flight child; added to its context (when the
 * slot's context is one of the thread's) before the inclusive times are
 * summed, listed in unfinished, and sampled into j->samples. Returns the
 * number of samples, or -1 on a database error. */
static long import_inflight(struct job *j, const struct thread_in *t, uint32_t n_nodes, int orphans,
                            uint32_t *max_fn)
{
    const struct piano_slot *stack = (const void *)(t->state + PIANO_OFF_STACK);
    uint32_t depth = piano_depth(t->hdr.depth);
    if (!depth)
        return 0;
    if (depth > j->cap_samples) {
        void *p = realloc(j->samples, depth * sizeof *j->samples);
        if (!p)
            return -1;
        j->samples = p;
        j->cap_samples = depth;
    }
    /* A forked child starts with the calls its parent was in, all at the
     * fork's tick and with no finished child: those are not its own. */
    int inherited = j->run->parent_key[0] && t->number == 0;
    long n = 0;
    struct piano_slot cur, next = { 0 };
    memcpy(&cur, &stack[1], sizeof cur);
    uint64_t first_t0 = cur.t0;
    for (uint32_t i = 1; i <= depth; i++) {
        if (cur.t0 > j->end)
            break;   /* entered after the end (a thread going on while the run is stored): not in this run */
        if (i < depth)
            memcpy(&next, &stack[i + 1], sizeof next);
        inherited &= j->run->fork_tick ? cur.t0 <= j->run->fork_tick : cur.t0 == first_t0 && cur.child == 0;
        uint64_t total = j->end > cur.t0 ? j->end - cur.t0 : 0;
        uint64_t above = i < depth && j->end > next.t0 ? j->end - next.t0 : 0;
        uint64_t self = total > cur.child ? total - cur.child : 0;
        self = self > above ? self - above : 0;
        uint32_t fn = cur.fn, node = cur.node;
        if (fn && fn < PIANO_FN_CAP) {
            struct agg *a = agg_of(j, fn);
            if (fn > *max_fn)
                *max_fn = fn;
            int in_tree = node && node < n_nodes && j->fig[node].fn == fn;
            int orphan = orphans && node >= PIANO_NODE_CAP && node < PIANO_NODES_TOTAL && j->fig[node].fn == fn;
            if (in_tree || orphan) {
                j->fig[node].calls++;
                j->fig[node].self += self;   /* (its CPU figures are in the node already) */
            } else {   /* no context: the function's own figures */
                a->calls++;
                a->self += self;
                if (!a->inflight)
                    a->total += total;
            }
            a->inflight = 1;
            a->unfinished++;
            j->samples[n++] = (struct sample){ fn, (uint16_t)piano_hist_bucket(self),
                                               (uint16_t)piano_hist_bucket(total) };
            if (!j->unf_st && import_prepare_unfinished(j))
                return -1;
            sqlite3_stmt *st = j->unf_st;
            use_fn(j, fn);
            sqlite3_bind_int64(st, 1, j->run_id);
            sqlite3_bind_int64(st, 2, t->number);
            sqlite3_bind_int64(st, 3, i);
            sqlite3_bind_int64(st, 4, fn);
            sqlite3_bind_int64(st, 5, since(cur.t0, j->run->tick0, j->npt));
            sqlite3_bind_int64(st, 6, since(j->end, cur.t0, j->npt));
            if (STEP(st))
                return -1;
        }
        cur = next;
    }
    if (n && !inherited)
        j->recorded = 1;
    return n;
}

static int by_sample_fn(const void *a, const void *b)
{
    uint32_t x = ((const struct sample *)a)->fn, y = ((const struct sample *)b)->fn;
    return x < y ? -1 : x > y;
}

/* The counters of histogram k (0 self, 1 total) in page p of thread t's state:
 * a page interleaves the two, [bucket][self, total] (spool.h), 32 bits each,
 * their carry read only when the thread's header says a counter wrapped.
 * Read relaxed: a live thread may be adding to them. */
static void page_counts(const struct thread_in *t, uint32_t p, int k, uint64_t *counts, unsigned n)
{   /* n buckets from page p's first: n / PIANO_PAGE_BUCKETS consecutive pages */
    int carried = t->hdr.hist_carried != 0;
    size_t word = (size_t)p * PIANO_PAGE_WORDS + (unsigned)k;
    for (unsigned b = 0; b < n; b++)
        counts[b] = piano_hist_word(t->state, carried, word + b * 2);
}

/* The PIANO_OCTAVE_PAGES 16-bit entries of an octave in a page table, read as
 * one word (the runtime writes each entry once, 0 to its page: either is
 * fine to see). Little-endian: entry q is bits 16q..16q+15. */
typedef uint64_t __attribute__((may_alias)) octave_entries;
_Static_assert(PIANO_OCTAVE_PAGES * sizeof(uint16_t) == sizeof(octave_entries), "an octave's entries are one word");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "octave_entries reads entry 0 from the low bits");

/* Encodes function fn's histogram k (0 self, 1 total) into j->blob: its pages,
 * plus the extra samples (the pending one, those of its calls in flight).
 * Returns the blob's length. */
static size_t encode_hist(struct job *j, const struct thread_in *t, uint32_t fn, int k, const struct sample *ex,
                          size_t n_ex, uint32_t n_pages)
{
    const struct piano_fnrec *fns = (const void *)(t->state + PIANO_OFF_FNS);
    uint32_t *dense = j->dense;   /* (each histogram leaves it zero) */
    uint64_t extra_octaves = 0;
    for (size_t i = 0; i < n_ex; i++) {
        unsigned b = k ? ex[i].total : ex[i].self;
        dense[b]++;
        extra_octaves |= 1ull << (b >> PIANO_HIST_SUB_BITS);
    }
    if (t->hdr.pend_fn == fn) {   /* the thread's latest call is not in the pages yet (rt/hooks.c) */
        unsigned b = piano_hist_bucket(k ? t->hdr.pend_total : t->hdr.pend_self);
        dense[b]++;
        extra_octaves |= 1ull << (b >> PIANO_HIST_SUB_BITS);
    }
    /* The function's page table (spool.h), if it has one whole; or its first
     * samples, kept as bucket pairs (PIANO_TABLE_FEW): counted as the extra ones. */
    uint32_t tb = __atomic_load_n(&fns[fn].table, __ATOMIC_RELAXED);
    if (tb & PIANO_TABLE_FEW) {
        uint32_t p = tb & ~PIANO_TABLE_FEW;
        if (p && p < n_pages) {
            const uint32_t *few = (const uint32_t *)(const void *)(t->state + PIANO_OFF_PAGES) +
                                  (size_t)p * PIANO_PAGE_WORDS;
            uint32_t n = __atomic_load_n(&few[0], __ATOMIC_RELAXED);
            for (uint32_t i = 1; i <= n && i <= PIANO_FEW_MAX; i++) {
                uint32_t pair = __atomic_load_n(&few[i], __ATOMIC_RELAXED);
                unsigned b = k ? pair >> 16 : pair & 0xffff;
                if (b < PIANO_HIST_BUCKETS) {   /* (else damage) */
                    dense[b]++;
                    extra_octaves |= 1ull << (b >> PIANO_HIST_SUB_BITS);
                }
            }
        }
        tb = 0;
    }
    const uint16_t *table = tb && tb + PIANO_TABLE_PAGES <= n_pages
                                ? (const uint16_t *)(const void *)(t->state + PIANO_OFF_PAGES +
                                                                   (size_t)tb * PIANO_PAGE_BYTES)
                                : NULL;
    int carried = t->hdr.hist_carried != 0;   /* a counter wrapped: its carry is read too (spool.h) */
    piano_hist_writer w;
    piano_hist_begin(&w, j->blob);
    /* The octaves with an entry in the table (an octave's PIANO_OCTAVE_PAGES
     * entries are one load; most are all 0: a short run's function has a few
     * pages in its 59 octaves), found for its self histogram (k 0) and used
     * again for its total one, which its caller encodes next. */
    _Static_assert(PIANO_HIST_OCTAVES <= 64, "an octave is a bit of a word");
    const octave_entries *octs = (const octave_entries *)(const void *)table;
    uint64_t mask = 0;
    if (table && k && j->oct_thread == t && j->oct_fn == fn) {
        mask = j->oct_mask;
    } else if (table) {
        for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++)
            mask |= (uint64_t)(__atomic_load_n(&octs[o], __ATOMIC_RELAXED) != 0) << o;
        j->oct_thread = t;
        j->oct_fn = fn;
        j->oct_mask = mask;
    }
    for (mask |= extra_octaves; mask; mask &= mask - 1) {
        unsigned o = (unsigned)__builtin_ctzll(mask);
        uint64_t entries = table ? __atomic_load_n(&octs[o], __ATOMIC_RELAXED) : 0;
        int has_extra = (extra_octaves >> o) & 1;
        uint32_t *extra = dense + o * PIANO_HIST_SUB;
        for (unsigned q = 0; q < PIANO_OCTAVE_PAGES; q++, entries >>= 16) {
            uint32_t p = (uint32_t)(entries & 0xffff);
            unsigned first = o * PIANO_HIST_SUB + q * PIANO_PAGE_BUCKETS;
            const uint32_t *ex = extra + q * PIANO_PAGE_BUCKETS;
            if (p && p < n_pages) {   /* (a page past the pool's end is none) */
                /* page_counts' words, read as they are put: most of a page's buckets are 0 */
                size_t word = (size_t)p * PIANO_PAGE_WORDS + (unsigned)k;
                const uint32_t *words = (const uint32_t *)(const void *)(t->state + PIANO_OFF_PAGES) + word;
                if (has_extra || carried) {
                    for (unsigned b = 0; b < PIANO_PAGE_BUCKETS; b++) {
                        uint64_t c = piano_hist_word(t->state, carried, word + 2 * b) + ex[b];
                        if (c)
                            piano_hist_put_one(&w, first + b, c);
                    }
                } else {
#pragma GCC unroll 16
                    for (unsigned b = 0; b < PIANO_PAGE_BUCKETS; b++) {
                        uint64_t c = __atomic_load_n(&words[2 * b], __ATOMIC_RELAXED);
                        if (c)
                            piano_hist_put_one(&w, first + b, c);
                    }
                }
            } else if (has_extra) {
                for (unsigned b = 0; b < PIANO_PAGE_BUCKETS; b++)
                    if (ex[b])
                        piano_hist_put_one(&w, first + b, ex[b]);
            }
        }
        if (has_extra)
            memset(extra, 0, PIANO_HIST_SUB * sizeof *extra);
    }
    return piano_hist_end(&w);
}

/* Reads thread t's contexts (n_nodes of the tree, and the per-function orphan
 * contexts when it has them) in place: j->nodes, and into j->fig their tree,
 * checked (a parent precedes its child, else the node is taken as a root, so
 * every walk up the tree ends), and the figures read once. Notes whether the
 * thread recorded anything of its own. */
static void read_nodes(struct job *j, const struct thread_in *t, uint32_t n_nodes, int orphans)
{
    const struct piano_node *live = (const void *)(t->state + PIANO_OFF_NODES);
    struct node_fig *fig = j->fig;
    j->nodes = live;
    if (t->live) {   /* the calls read here ended before now: the run lasts at least until then */
        uint64_t now = spool_clock_now(j->run->clock);
        if (now > j->seen)
            j->seen = now;
    }
    uint32_t bad = 0;
    uint64_t cpu = 0;
    if (j->node_cpu_used) {   /* the previous thread's */
        memset(j->node_cpu, 0, (size_t)j->node_cpu_used * sizeof *j->node_cpu);
        j->node_cpu_used = 0;
    }
    for (uint32_t i = 0; i < n_nodes; i++) {
        const struct piano_node *n = &live[i];
        uint32_t parent = n->parent, fn = n->fn;
        if (i) {
            bad += parent >= i || fn >= PIANO_FN_CAP;
            if (parent >= i)
                parent = 0;
            if (fn >= PIANO_FN_CAP)
                fn = 0;
        } else {
            parent = fn = 0;
        }
        fig[i] = (struct node_fig){ parent, fn, n->calls, n->self };
        uint64_t off = n->off, user = n->user;
        if (off | user) {
            j->node_cpu[i] = (struct node_cpu){ off, user };
            j->node_cpu_used = i + 1;
            cpu = 1;
        }
    }
    j->cpu_any = cpu != 0;
    /* (a live thread adds nodes, never changes one: this is damage) */
    if (bad)
        import_note(j, "%s: %u damaged context%s (parent or function out of range)",
                    piano_spool_slot_name(t->number).s, bad, bad == 1 ? "" : "s");
    if (orphans)
        for (uint32_t i = PIANO_NODE_CAP; i < PIANO_NODES_TOTAL; i++) {
            const struct piano_node *n = &live[i];
            fig[i] = (struct node_fig){ n->parent, n->fn == i - PIANO_NODE_CAP ? n->fn : 0, n->calls, n->self };
            uint64_t off = n->off, user = n->user;
            if (off | user) {
                j->node_cpu[i] = (struct node_cpu){ off, user };
                j->node_cpu_used = i + 1;
            }
        }
    /* Something of its own (see import_inflight for the calls in flight). */
    j->recorded |= t->hdr.allocs || t->hdr.frees;
    for (uint32_t i = 1; i < n_nodes && !j->recorded; i++)
        j->recorded = fig[i].calls || live[i].allocs || live[i].frees;
    for (uint32_t i = PIANO_NODE_CAP; orphans && i < PIANO_NODES_TOTAL && !j->recorded; i++)
        j->recorded = fig[i].calls || live[i].allocs || live[i].frees;
}

_Static_assert(PIANO_M_cpu_total_ns == PIANO_M_cpu_ns + 1 && PIANO_M_cpu_user_ns == PIANO_M_cpu_ns + 2 &&
                   PIANO_M_cpu_sys_ns == PIANO_M_cpu_ns + 3 && PIANO_M_offcpu_ns == PIANO_M_cpu_ns + 4,
               "cpu_figures fills the CPU metrics in this order");

/* Stores thread t's contexts (j->nodes, j->fig; as one blob: contexts_blob.h) and adds them to their functions'
 * figures (j->agg); *max_fn gets the highest function id seen. Returns 0, or
 * -1 on a database error. */
static int store_contexts(struct job *j, const struct thread_in *t, uint32_t n_nodes, int orphans,
                          uint32_t *max_fn)
{
    const struct piano_node *nodes = j->nodes;
    const struct node_fig *fig = j->fig;
    /* A context's inclusive time is its self time plus its children's. Summed
     * here rather than on the per-call path, and right even for the context
     * shared by calls deeper than PIANO_CTX_DEPTH, which nests in itself. A
     * child comes after its parent, so one backward pass does it. */
    for (uint32_t i = 0; i < n_nodes; i++)
        j->node_total[i] = fig[i].self;
    for (uint32_t i = n_nodes; i-- > 1;)
        j->node_total[fig[i].parent] += j->node_total[i];
    /* The CPU sums likewise, when a context has CPU figures: without them
     * (PIANO_CPU unset) they are all 0, and their pages are left untouched. */
    int cpu_sums = j->cpu_any;
    if (cpu_sums) {
        for (uint32_t i = 0; i < n_nodes; i++) {
            j->node_off[i] = j->node_cpu[i].off;
            j->node_user[i] = j->node_cpu[i].user;
        }
        for (uint32_t i = n_nodes; i-- > 1;) {
            j->node_off[fig[i].parent] += j->node_off[i];
            j->node_user[fig[i].parent] += j->node_user[i];
        }
    }
    int cpu = j->run->cpu_mode != PIANO_CPU_OFF && t->hdr.cpu_ok;
    piano_ctx_begin(&j->ctx_blob, (cpu ? PIANO_CTX_CPU : 0) | (j->heap_on ? PIANO_CTX_HEAP : 0));
    for (uint32_t pass = 0; pass < 2; pass++) {
        uint32_t lo = pass ? PIANO_NODE_CAP : 1, hi = pass ? PIANO_NODES_TOTAL : n_nodes;
        if (pass && !orphans)
            break;
        for (uint32_t i = lo; i < hi; i++) {
            const struct piano_node *n = &nodes[i];   /* read once here: its other figures */
            const struct node_fig *f = &fig[i];
            if (!f->fn)
                continue;
            struct node_cpu fc = i < j->node_cpu_used ? j->node_cpu[i] : (struct node_cpu){ 0, 0 };
            struct agg *a = agg_of(j, f->fn);
            a->calls += f->calls, a->self += f->self, a->allocs += n->allocs;
            a->alloc_bytes += n->alloc_bytes, a->frees += n->frees, a->free_bytes += n->free_bytes;
            a->off += fc.off, a->user += fc.user;
            /* In use: its allocations not freed (by any thread); a crash in
             * the middle of a free's two counters cannot make it negative. */
            uint64_t freed = piano_node_freed(n, 0), freed_bytes = piano_node_freed(n, 1);
            uint64_t in_obj = n->allocs > freed ? n->allocs - freed : 0;
            uint64_t in_bytes = n->alloc_bytes > freed_bytes ? n->alloc_bytes - freed_bytes : 0;
            uint64_t peak = j->heap_gen && n->peak_gen == j->heap_gen ? n->peak_bytes : 0;
            a->inuse_objects += in_obj, a->inuse_bytes += in_bytes, a->peak_inuse_bytes += peak;
#define ADD_COUNTER(id, field) a->counter[PIANO_C_##id] += n->field;
            PIANO_NODE_COUNTERS(ADD_COUNTER)
#undef ADD_COUNTER
            if (f->fn > *max_fn)
                *max_fn = f->fn;
            if (!pass && f->parent)
                agg_of(j, fig[f->parent].fn)->child_calls += f->calls;
            /* A function's inclusive time: its contexts with no ancestor of
             * the same function (a recursive call counts once, outermost).
             * Parents precede their children, so the walk up ends. */
            uint64_t off_total = pass ? fc.off : cpu_sums ? j->node_off[i] : 0;
            uint64_t user_total = pass ? fc.user : cpu_sums ? j->node_user[i] : 0;
            if (pass) {
                a->total += f->self;   /* an orphan context: no tree above it */
                a->off_total += off_total;
                a->user_total += user_total;
            } else {
                uint32_t up = f->parent;
                while (up && fig[up].fn != f->fn)
                    up = fig[up].parent;
                if (!up) {
                    a->total += j->node_total[i];
                    a->off_total += off_total;
                    a->user_total += user_total;
                }
            }
            use_fn(j, f->fn);
            if (!(j->parts & PIANO_LIVE_CONTEXTS))
                continue;   /* a live read that shows no calling contexts: their sums only */
            int64_t v[PIANO_M_N] = { 0 };
            v[PIANO_M_calls] = count64(f->calls);
            v[PIANO_M_self_ns] = to_ns(f->self, j->npt);
            v[PIANO_M_total_ns] = to_ns(pass ? f->self : j->node_total[i], j->npt);
            v[PIANO_M_allocs] = count64(n->allocs), v[PIANO_M_alloc_bytes] = count64(n->alloc_bytes);
            v[PIANO_M_frees] = count64(n->frees), v[PIANO_M_free_bytes] = count64(n->free_bytes);
            if (cpu)
                cpu_figures(v[PIANO_M_self_ns], v[PIANO_M_total_ns], fc.off, off_total, user_total,
                            v + PIANO_M_cpu_ns);
            if (j->heap_on) {
                v[PIANO_M_inuse_objects] = count64(in_obj), v[PIANO_M_inuse_bytes] = count64(in_bytes);
                v[PIANO_M_peak_inuse_bytes] = count64(peak);
            }
#define PUT_COUNTER(id, field) v[PIANO_M_##id] = count64(n->field);
            PIANO_NODE_COUNTERS(PUT_COUNTER)
#undef PUT_COUNTER
            piano_ctx_put(&j->ctx_blob, i, f->parent && !pass ? (int64_t)f->parent : -1, f->fn, v);
        }
    }
    if (j->ctx_blob.failed)
        return -1;   /* out of memory */
    if (!(j->parts & PIANO_LIVE_CONTEXTS) || !piano_ctx_any(&j->ctx_blob))
        return 0;
    sqlite3_stmt *st = j->ctx_st;
    sqlite3_bind_int64(st, 1, j->run_id);
    sqlite3_bind_int64(st, 2, t->number);
    if (import_bind_blob(j, st, 3, j->ctx_blob.buf, j->ctx_blob.len) != SQLITE_OK)
        return -1;
    return STEP(st) ? -1 : 0;
}

/* Stores the stats and histograms of thread t's functions 1..max_fn (from
 * j->agg and its pages), with the n_samples samples of its calls in flight
 * (j->samples). Returns 0, or -1 on a database error. */
static int store_stats(struct job *j, const struct thread_in *t, size_t n_samples, uint32_t max_fn)
{
    uint32_t n_pages = t->hdr.n_pages < PIANO_PAGE_CAP ? t->hdr.n_pages : PIANO_PAGE_CAP;
    if (n_samples)
        qsort(j->samples, n_samples, sizeof *j->samples, by_sample_fn);
    int cpu = j->run->cpu_mode != PIANO_CPU_OFF && t->hdr.cpu_ok;
    piano_stats_begin(&j->stats_blob, (cpu ? PIANO_STATS_CPU : 0) | (j->heap_on ? PIANO_STATS_HEAP : 0));
    size_t s = 0;
    for (uint32_t fn = 1; fn <= max_fn; fn++) {
        size_t s0 = s;
        for (; s < n_samples && j->samples[s].fn == fn; s++)
            ;
        uint32_t slot = j->agg_slot[fn];
        const struct agg *a = &j->agg[slot];
        if (!slot || (!a->calls && !a->allocs && !a->frees))
            continue;
        use_fn(j, fn);
        int64_t v[PIANO_STATS_NV] = { 0 };
        v[PIANO_M_calls] = count64(a->calls);
        v[PIANO_M_self_ns] = to_ns(a->self, j->npt);
        v[PIANO_M_total_ns] = to_ns(a->total > a->self ? a->total : a->self, j->npt);
        if (cpu)
            cpu_figures(v[PIANO_M_self_ns], v[PIANO_M_total_ns], a->off, a->off_total, a->user_total,
                        v + PIANO_M_cpu_ns);
        v[PIANO_M_allocs] = count64(a->allocs), v[PIANO_M_alloc_bytes] = count64(a->alloc_bytes);
        v[PIANO_M_frees] = count64(a->frees), v[PIANO_M_free_bytes] = count64(a->free_bytes);
        v[PIANO_STATS_CHILD] = count64(a->child_calls);
        v[PIANO_M_unfinished] = count64(a->unfinished);
        if (j->heap_on) {
            v[PIANO_M_inuse_objects] = count64(a->inuse_objects), v[PIANO_M_inuse_bytes] = count64(a->inuse_bytes);
            v[PIANO_M_peak_inuse_bytes] = count64(a->peak_inuse_bytes);
        }
#define PUT_COUNTER(id, field) v[PIANO_M_##id] = count64(a->counter[PIANO_C_##id]);
        PIANO_NODE_COUNTERS(PUT_COUNTER)
#undef PUT_COUNTER
        /* the histograms: self's at j->blob, total's after it (job_alloc) */
        unsigned char *self_hist = j->blob;
        size_t hs = encode_hist(j, t, fn, 0, s > s0 ? j->samples + s0 : NULL, s - s0, n_pages);
        j->blob += PIANO_HIST_BLOB_MAX;
        size_t ht = encode_hist(j, t, fn, 1, s > s0 ? j->samples + s0 : NULL, s - s0, n_pages);
        piano_stats_put(&j->stats_blob, fn, v, self_hist, hs, j->blob, ht);
        j->blob = self_hist;
    }
    if (j->stats_blob.failed)
        return -1;   /* out of memory */
    if (!piano_stats_any(&j->stats_blob))
        return 0;
    sqlite3_stmt *st = j->stats_st;
    sqlite3_bind_int64(st, 1, j->run_id);
    sqlite3_bind_int64(st, 2, t->number);
    if (import_bind_blob(j, st, 3, j->stats_blob.buf, j->stats_blob.len) != SQLITE_OK)
        return -1;
    return STEP(st) ? -1 : 0;
}

/* Stores the contexts, per-function stats and calls in flight of a thread
 * whose state is whole. Returns 0, or -1 on a database error. */
int import_state(struct job *j, const struct thread_in *t)
{
    const struct piano_thread *h = &t->hdr;
    uint32_t n_nodes = h->n_nodes < PIANO_NODE_CAP ? h->n_nodes : PIANO_NODE_CAP;
    int orphans = h->contexts_truncated != 0;
    read_nodes(j, t, n_nodes, orphans);
    /* Zero what the previous thread used (the mapping zeroed the rest). */
    for (uint32_t i = 1; i <= j->agg_n; i++)
        j->agg_slot[j->agg[i].fn] = 0;
    memset(j->agg, 0, ((size_t)j->agg_n + 1) * sizeof *j->agg);
    j->agg_n = 0;
    uint32_t max_fn = 0;
    long n_samples = import_inflight(j, t, n_nodes, orphans, &max_fn);
    if (n_samples < 0 || store_contexts(j, t, n_nodes, orphans, &max_fn))
        return -1;
    if (store_stats(j, t, (size_t)n_samples, max_fn))
        return -1;
    j->frames_dropped += h->frames_dropped;
    j->samples_dropped += h->hist_dropped;
    j->calls_untimed += h->deep_calls;
    return 0;
}

/* Thread t's frame histogram: encoded into j->blob (returns its length) and
 * added to the run's. Its count and sample rate go to the run's too. */
size_t import_thread_frames(struct job *j, const struct thread_in *t)
{
    if (!t->has_hdr)
        return 0;
    j->frames_all += t->hdr.frames_all;
    j->spikes_unkept += t->hdr.spikes_unkept;
    if (t->hdr.sample_shift > j->sample_shift && t->hdr.sample_shift < 64)
        j->sample_shift = t->hdr.sample_shift;
    if (t->hdr.spike_level > j->spike_level && t->hdr.spike_level < 40)
        j->spike_level = t->hdr.spike_level;
    if (!t->has_state)
        return 0;
    uint32_t n_pages = t->hdr.n_pages < PIANO_PAGE_CAP ? t->hdr.n_pages : PIANO_PAGE_CAP;
    piano_hist_writer w;
    piano_hist_begin(&w, j->blob);
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++) {
        uint32_t pg = t->hdr.frame_pages[o];
        if (!pg || pg + PIANO_OCTAVE_PAGES > n_pages)
            continue;
        uint64_t counts[PIANO_HIST_SUB];
        page_counts(t, pg, 1, counts, PIANO_HIST_SUB);   /* frame totals: the pages' 'total' words */
        j->frame_hist_any = 1;
        for (unsigned b = 0; b < PIANO_HIST_SUB; b++) {
            j->frame_hist->count[o * PIANO_HIST_SUB + b] += counts[b];
            j->frame_hist->total += counts[b];
        }
        piano_hist_put(&w, counts, o * PIANO_HIST_SUB, PIANO_HIST_SUB);
    }
    return piano_hist_end(&w);
}
