/*
 * spool.h - the layout of a running process's records on disk.
 *
 * While a process runs, everything piano records lives in files that are
 * memory-mapped MAP_SHARED, so the kernel keeps them even if the process
 * crashes or is killed. At exit the process imports its own spool into the
 * database (store/import.c); a spool whose process is gone is imported later by
 * piano-db and marked 'recovered'.
 *
 *   <db>.spool/<run key>/lock     flock()ed by the live process (released at exit, exec, death)
 *                        run      struct piano_spool_run
 *                        fns      appended records: struct piano_spool_fn + name + file
 *                        states   every thread's records, a sparse file made with the folder:
 *                                 thread N's slot at N x PIANO_SLOT_SIZE holds its state
 *                                 (struct piano_thread, then the arrays at the PIANO_OFF_*
 *                                 offsets) and at PIANO_SLOT_BUF its frame buffer (struct
 *                                 piano_chunk_hdr, then frame records: piano_frame_read)
 *                        f<N>.<K> thread N's K-th full buffer, stored: the buffer's layout
 *                        snaps    with PIANO_INTERVAL: appended snapshot records (piano_snap_read)
 *
 * One file for every thread, made once: a thread's start finds its slot mapped
 * (slots are mapped 16 at a time, rt/slots.c) and creates no file (creating two
 * files per thread cost a short thread 1-2 ms on ext4; bench/README.md). A
 * slot never written reads as zeros (a hole). The context hash's first place
 * and the frame function list's direction are the runtime's only: the import
 * reads neither, so moving them changed no version.
 *
 * A stored run's folder is not removed but renamed to a spare name,
 * <db>.spool/.spare<N> (N < PIANO_SPARES_MAX; else it is removed), and the
 * next run's start takes it with one rename into its own name and empties its
 * files (ftruncate) instead of making a folder and four files: on an ext4
 * without a journal each new inode scans the recently deleted ones
 * (bench/README.md, "Spare run folders"). A rename is atomic: of two starts
 * taking one spare, one gets it, the other the next or a new folder. The
 * taker empties a spare only when nothing else can map its files: its lock
 * free (the process that ran in it has ended) and fns free for an exclusive
 * flock: a live read of piano-db (store/recover.c) and a forked child
 * reading its parent's fns hold fns with a shared flock; else it gives the
 * spare back, or removes it. Every name starting with '.' (spares, folders
 * being made) is skipped by the readers. A spare's states may keep slot 0's
 * pages (rt/slots.c, warm slot 0): its first page is zeroed before the
 * folder is published, so until the run's first thread has zeroed the rest
 * and written its header, readers find magic 0 there and skip the slot.
 * The exit's store leaves a spare's states as they are, piano-db's store
 * when they hold at most PIANO_SPARE_WARM_MAX bytes of slot 0. A
 * PIANO_STORE=later run that took a spare (runs are being stored as they
 * come) leaves such small states unpacked, for piano-db to store and keep
 * warm; else it packs them into ended (PIANO_PACKED_MAGIC).
 *
 * Times are clock ticks (see runs.ns_per_tick); import converts them to ns.
 */
#ifndef PIANO_SPOOL_H
#define PIANO_SPOOL_H
#include "hist.h"
#include "span_spool.h"   /* span figures in snapshots */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PIANO_SPOOL_MAGIC 0x6f6e6169705f7331ull  /* "1s_piano" */
#define PIANO_SPOOL_VERSION 24  /* 24: spare run folders (.spare<N>: a stored run's folder, emptied by the next run that takes it; readers lock fns shared, PIANO_SPARES_MAX); 23: packed records in the ended file (PIANO_PACKED_MAGIC: PIANO_STORE=later); 21: a function's first 31 samples kept as bucket pairs in one page of the pool (PIANO_TABLE_FEW); 20: histogram counters of 32 bits, a carry beside (PIANO_OFF_CARRY, piano_thread.hist_carried); 19: histogram pages of 16 buckets, found through a page table in the pool (piano_fnrec.table; 32 bytes); 18: span figures in snapshots (piano_snap_hdr.nspans); 17: the run-time selection (piano_spool_run.selection); 16: CPU time's user part sampled (piano_node.user for .sys); 15: the chunks file (a program that changed its user: rt/user.c); 14: slots reused (the thread header's slot; the ended file); 13: the shadow stack from 3072, the first hash from 1024 (one page for a short thread); 12: heap in use in snapshots; 11: heap in use (piano_node own_*, owned_*, peak_*; heap_* of thread and run); 10: CPU time in snapshots; 9: snapshots (the snaps file); 8: CPU time */

#define PIANO_STACK_CAP (1u << 21)   /* shadow stack slots: deeper calls are counted only by depth */
#define PIANO_FN_CAP (1u << 17)      /* function ids per process; id 1 collects any beyond */
#define PIANO_NODE_CAP (1u << 16)    /* calling contexts per thread; beyond, a per-function orphan node */
#define PIANO_CTX_DEPTH 256          /* deeper calls share their ancestor's context at this depth */
#define PIANO_PAGE_CAP (1u << 16)    /* histogram pages per thread (indices 1..65535 fit uint16_t): 8 MiB */
/* A histogram page holds 16 buckets (a quarter of an octave), 128 bytes: a
 * short run's calls spread over few buckets of an octave, so pages of a whole
 * octave (1 KiB) left most of the memory pages a run touched zero, and a first
 * touch of a page is a fault (jq's short run: 242 pages of 4 KiB -> 123 with
 * pages of 16 buckets, -> 62 with counters of 32 bits; bench/README.md).
 * Counters are 32 bits: one that wraps adds 1 to its word of the carry, at
 * the same place PIANO_OFF_CARRY - PIANO_OFF_PAGES further (piano_hist_inc),
 * which no run touches until a bucket passes 2^32 calls. */
#define PIANO_PAGE_SUB_BITS 4
#define PIANO_PAGE_BUCKETS (1u << PIANO_PAGE_SUB_BITS)  /* buckets per page: 16 */
#define PIANO_PAGE_SUB_MASK (PIANO_PAGE_BUCKETS - 1)    /* a bucket's place in its page */
#define PIANO_PAGE_WORDS (2 * PIANO_PAGE_BUCKETS) /* counters per page: 16 buckets x {self, total} */
#define PIANO_PAGE_BYTES (PIANO_PAGE_WORDS * sizeof(uint32_t))   /* 128 */
#define PIANO_FN_PAGES (PIANO_HIST_BUCKETS >> PIANO_PAGE_SUB_BITS) /* pages of a function's histograms: 236 */
/* The frame histogram takes an octave's pages at once, consecutive: its
 * page of octave o is pages frame_pages[o] .. + PIANO_OCTAVE_PAGES - 1, read
 * as one run of 64 buckets. */
#define PIANO_OCTAVE_PAGES (PIANO_HIST_SUB >> PIANO_PAGE_SUB_BITS)
/* Pages of a function's page table (piano_fnrec.table): 472 bytes in 4. */
#define PIANO_TABLE_PAGES ((PIANO_FN_PAGES * 2 + PIANO_PAGE_BYTES - 1) / PIANO_PAGE_BYTES)
/* piano_fnrec.table with this bit: the function has no page table yet, and
 * the pool's page (table & ~PIANO_TABLE_FEW) holds its first samples: word 0
 * their number n (1..PIANO_FEW_MAX), words 1..n each one sample, its self
 * bucket | its total bucket << 16. Its next sample makes its page table and
 * counts them there (rt/hooks.c hist_first): a function called a few times
 * takes one page of 128 bytes, where its table and pages took 512 + 128 a
 * quarter octave (jq's short run calls 141 of its 216 functions 31 times or
 * fewer; bench/README.md). */
#define PIANO_TABLE_FEW (1u << 31)
#define PIANO_FEW_MAX (PIANO_PAGE_WORDS - 1)
_Static_assert(PIANO_HIST_BUCKETS <= 1u << 16, "a bucket fits 16 bits of a sample");
#define PIANO_HASH_CAP (1u << 17)    /* open-addressing table of (parent, fn) -> node, at most */
#define PIANO_HASH_MIN (1u << 9)     /* ... and at first, in the header's page (PIANO_OFF_HASH_FIRST):
                                      * it doubles to stay under three quarters full */
#define PIANO_HIST_OCTAVES PIANO_HIST_PAGES   /* histogram pages of a function (hist.h) */
#define PIANO_CHUNK_SIZE (4u << 20)  /* bytes of a frame buffer, and at most of a chunk file */
#define PIANO_FN_OVERFLOW 1u         /* the id shared by functions past PIANO_FN_CAP */
/* Set in piano_thread.depth while a hook is updating the thread's state: a
 * signal handler that interrupts it records its calls in a state of its own
 * (piano_thread.signal_of). A reader masks it (piano_depth). */
#define PIANO_DEPTH_IN_HOOK (1u << 31)

_Static_assert(PIANO_HASH_CAP >= 2 * PIANO_NODE_CAP, "the context hash stays at most half full");

struct piano_slot {          /* one in-flight call */
    uint32_t node;           /* its calling context */
    uint32_t fn;
    uintptr_t sp;            /* stack position at entry: reconciles longjmp */
    uint64_t t0;             /* entry tick; once the call has ended, its end tick */
    uint64_t child;          /* ticks spent in instrumented children */
};

struct piano_node {          /* one calling context */
    uint32_t parent, fn;
    uint64_t calls, self;          /* inclusive time is not kept per call: the import sums the tree */
    uint32_t cache_fn, cache_child; /* this context's last child lookup: recursion finds it here */
    uint64_t allocs, alloc_bytes, frees, free_bytes;
    /* Self off-CPU and user ns (PIANO_CPU; 0 otherwise): what a reading
     * found since the one before went to the innermost call in flight, the
     * only one running meanwhile; inclusive figures are summed from the tree.
     * user: sampled (rt/cpu.c), system time is CPU time less it. */
    uint64_t off, user;
    /* Heap in use (PIANO_HEAP): frees of this context's own allocations, made
     * by its own thread (own_*, plain adds) or by others (owned_*, atomic), so
     * in use = allocs - both (piano_node_freed); and the bytes in use at the
     * run's latest heap peak copy (heap.c), valid when peak_gen is that copy's. */
    uint64_t own_frees, own_free_bytes, owned_frees, owned_free_bytes, peak_bytes;
    uint32_t peak_gen, pad;
};
/* 128 bytes: a node's address is a shift from its index, and the fields every
 * call touches (above allocs) stay in its first cache line, the heap's in the
 * second (112 bytes cost 3 instructions a call; callgrind, bench/README.md). */
_Static_assert(sizeof(struct piano_node) == 128, "a node is two cache lines");

/* Frees of a context's allocations (objects, or bytes), by any thread. */
static inline uint64_t piano_node_freed(const struct piano_node *n, int bytes)
{
    return bytes ? n->own_free_bytes + __atomic_load_n(&n->owned_free_bytes, __ATOMIC_RELAXED)
                 : n->own_frees + __atomic_load_n(&n->owned_frees, __ATOMIC_RELAXED);
}

/* 32 bytes, 32-byte aligned: two to a cache line, none across two. A
 * function's histogram pages are found through its page table, which takes
 * PIANO_TABLE_PAGES pages of the histogram pool, made at its first sample
 * past PIANO_FEW_MAX (its first ones wait in a page: PIANO_TABLE_FEW): the
 * records of the functions a run registers but never calls stay small
 * (jq's short run calls 216 of 560; a table of 472 bytes in each record
 * touched 75 memory pages, as tables 27). */
struct __attribute__((aligned(32))) piano_fnrec {   /* one function, on one thread */
    uint32_t last_parent, last_node;   /* cache of the last context lookup */
    uint32_t epoch;                    /* frame in which frame_self was last reset */
    /* First of the PIANO_TABLE_PAGES histogram pages of its page table, 0 =
     * none yet (with PIANO_TABLE_FEW: its first samples' page): uint16_t[PIANO_FN_PAGES], the page of each 16 buckets
     * (entry b >> PIANO_PAGE_SUB_BITS for bucket b), 0 = none yet. A page
     * holds both histograms of its 16 buckets, interleaved: [bucket][self,
     * total], so a call whose self and total times are alike (a leaf) touches
     * one line. */
    uint32_t table;
    uint64_t frame_self;               /* self ticks in the current frame */
    uint32_t last_parent2, last_node2; /* runtime only: the lookup before (a function called
                                        * from alternating callers finds both) */
    /* A function's inclusive time (a recursive one counted at its outermost
     * activation) is not kept per call: the import sums it from the contexts. */
};
_Static_assert(sizeof(struct piano_fnrec) == 32, "a function record is half a cache line");


struct piano_thread {        /* header of a thread's slot in states; padded to 4096 bytes */
    uint64_t magic;
    uint32_t version, thread;
    uint32_t tid;
    char name[20];
    /* live state, written by the owning thread */
    uint32_t depth;          /* slots in use (stack[0] is a sentinel) */
    uint32_t frame_depth;    /* depth of the slot that opened the current frame; 0 = none */
    uint32_t epoch;          /* frame counter */
    uint32_t n_nodes;        /* nodes[1..n_nodes) are in use; nodes[0] is the root */
    uint32_t n_pages;        /* pages[1..n_pages) are in use; page 0 swallows dropped samples */
    uint32_t n_touched;      /* functions with self time in the current frame */
    uint32_t busy;           /* piano itself is running on this thread: ignore allocations */
    uint32_t dead;           /* the thread has ended */
    uint32_t anon;           /* state in anonymous memory, written to the file at the end */
    uint32_t hash_mask;      /* slots of the context hash in use, minus 1 (at least PIANO_HASH_MIN - 1) */
    uint64_t allocs, alloc_bytes, frees, free_bytes; /* running totals of the thread */
    uint64_t frame_paused;   /* runtime only: ticks the current frame's call was parked (rt/contexts.c) */
    uint64_t frame_allocs, frame_alloc_bytes, frame_frees, frame_free_bytes;
    uint64_t frames, frames_dropped;
    uint64_t last_tick;      /* latest frame end or exit: bounds a crashed run's duration */
    uint64_t pend_self, pend_total; /* the latest call's sample, not yet in the histograms */
    uint32_t pend_fn;               /* its function (0: none; the import adds it) */
    uint32_t signal_of;      /* 0; or 1 + the thread number whose signal handlers, run while
                              * one of its hooks was interrupted, this state records */
    uint64_t deep_calls;     /* calls deeper than PIANO_STACK_CAP, not timed */
    uint64_t hist_dropped;   /* samples lost because histogram pages ran out */
    uint64_t contexts_truncated;
    uint32_t chunks;         /* frame chunk files stored (the buffer holds the next) */
    uint32_t chunk_used;     /* bytes of records in the buffer */
    uint64_t chunk_last_end; /* end tick of the buffer's last record: the next start is coded from it */
    uint64_t chunk_frames;   /* records in the buffer: counted as dropped if it cannot be stored */
    uint32_t room_backoff;   /* frames to drop before trying again to store the buffer */
    uint32_t spike_level;    /* the run's spike level L this thread saw last (budget.c; 0 before it had one) */
    uintptr_t stack_lo, stack_hi;   /* this thread's stack, for longjmp reconciliation */
    unsigned char *chunk;    /* process-local: the mapped frame buffer */
    struct piano_thread *next;      /* process-local: list of live threads */
    struct piano_thread *sig;       /* process-local: the state of this thread's signal handlers
                                     * run while one of its hooks was interrupted, or NULL */
    /* The frame budget (PIANO_FRAMES, budget.c frame_keep): every completed
     * frame is counted and goes into the frame histogram; a record is written
     * for the frames the budget allows, then for spikes and a sample. */
    uint64_t frames_all;     /* completed frames, kept or not (frames: the records written) */
    uint64_t spike_ticks;    /* a frame longer than this is a spike candidate: 2x the running median,
                              * and over the quantile 1 - 1%/2^spike_level */
    uint64_t spikes_unkept;  /* 0 (runs before spike levels: spikes past the run's limit, sampled) */
    uint64_t chunk_last_n;   /* frames_all of the buffer's last record: the next one is coded from it */
    uint32_t keep_left;      /* frames of the budget this thread may still keep whole */
    uint32_t lease;          /* how many it asks for next */
    uint32_t sample_shift;   /* the sample keeps frame n when n % 2^sample_shift == 0 (the latest seen) */
    uint32_t chunk_room;     /* process-local: bytes of the frame buffer (header included) whose
                              * blocks are reserved; records stay below it */
    uint16_t frame_pages[PIANO_HIST_OCTAVES];  /* first of the PIANO_OCTAVE_PAGES histogram pages of each
                                                * octave of frame totals (their 'total' words; 0 = none):
                                                * the distribution is exact */
    /* CPU time (PIANO_CPU, rt/cpu.c). The thread's off-CPU ns only grow while
     * it is switched out: a hook that sees the perf page's lock changed (the
     * thread was scheduled in since the anchor) reads the thread's CPU clock
     * and adds (wall - CPU) since the anchor to off_ns. Its user ns are
     * sampled: a hook that sees the page's data_head moved (the kernel wrote a
     * sample: the thread was in user mode at the end of a ms of its CPU time)
     * adds a ms per sample to user_ns. What is found goes to the context of
     * the innermost call in flight (piano_node.off, .user): calls pay nothing
     * else. */
    uint32_t cpu_ok;         /* 1: off_ns and user_ns are measured on this thread */
    uint32_t cpu_lock;       /* the perf page's lock at the anchor */
    uint64_t cpu_head;       /* the perf page's data_head when last seen */
    uint64_t off_ns, user_ns; /* the thread's off-CPU and (sampled) user time so far */
    uint64_t cpu_mono, cpu_ns;      /* the anchor: CLOCK_MONOTONIC and thread CPU ns */
    uint64_t frame_off0;     /* off_ns when the current frame opened */
    const volatile uint32_t *cpu_lockp; /* process-local: the perf page's lock (a constant 0 word when off) */
    const volatile uint64_t *cpu_headp; /* process-local: its data_head (a constant 0 word when off) */
    struct piano_thread *cpu_owner;     /* process-local: a signal state's thread, which shares the page */
    void *cpu_page;          /* process-local: the perf page this state mapped, or NULL */
    /* Heap in use: the run's heap peak as this thread last raised it, and the
     * number of the latest peak copy this thread made (heap.c): the import
     * takes the largest of every thread's, so they survive a crash. */
    uint64_t heap_peak;
    uint32_t heap_gen;
    /* The slot of states this state is in: a short thread's slot is given to
     * a later thread once its records are in the ended file (rt/slots.c), so
     * slot and thread number differ then. */
    uint32_t slot;
    /* 1 once a histogram counter wrapped: the carry (PIANO_OFF_CARRY) holds
     * their high words; 0, readers never touch it. */
    uint32_t hist_carried;
};
/* The context hash (runtime only: the import does not read it) starts in the
 * header's page, after the header, and moves to PIANO_OFF_HASH when it first
 * doubles: a new thread's first calls fault in one page fewer. */
#define PIANO_OFF_HASH_FIRST 1024u
_Static_assert(sizeof(struct piano_thread) <= PIANO_OFF_HASH_FIRST, "the thread header fits below the first hash");
_Static_assert(PIANO_OFF_HASH_FIRST + PIANO_HASH_MIN * sizeof(uint32_t) <= 3072, "the first hash ends where the shadow stack starts");

/* A thread's depth as a reader outside its hooks may use it: without the
 * in-hook bit, and at most PIANO_STACK_CAP (deeper calls are not in slots). */
static inline uint32_t piano_depth(uint32_t depth)
{
    depth &= ~PIANO_DEPTH_IN_HOOK;
    return depth < PIANO_STACK_CAP ? depth : PIANO_STACK_CAP;
}

struct piano_chunk_hdr {
    uint64_t magic;
    uint64_t used;           /* bytes of complete records after this header */
    uint64_t seq;            /* chunk number K: a buffer holds f<N>.<K> until it is stored */
};
/* A live thread's buffer is read like a seqlock: seq (acquire), used
 * (acquire), copy the bytes, fence, seq again; equal seqs mean the copy holds
 * records of chunk seq only. When the owner stores the buffer it writes the
 * chunk file, then used = 0, then seq + 1 (release), before any new record. */

/* A frame record is a run of prefix varints (below), in this order: the
 * frame's start as ticks after the end of the buffer's previous record (the
 * first record of a buffer: after tick 0), zigzag-coded; its total ticks;
 * allocs, alloc_bytes, frees, free_bytes; nfns; its number n among the
 * thread's frames (1, 2, ...; kept or not) as n minus the buffer's previous
 * record's (the first record of a buffer: minus 0), times 4, plus why it was
 * kept (PIANO_KEPT_*); its off-CPU ns (0 when CPU time is not measured);
 * then an entry per function:
 * its self ticks (below 2^63: centuries) times 2, plus 1 when its id is the
 * previous entry's plus one (the first entry's previous id is 0); otherwise
 * followed by the difference of the ids, zigzag-coded. Ids are given in the order functions are first called,
 * and a frame lists its functions in that order too, so a run of frames alike
 * mostly takes the short form: a frame of small functions then takes 1-2 bytes
 * per function instead of 8 in fixed words. Every byte is copied into the page
 * cache when the buffer is stored, and that copy was most of what a frame cost
 * (bench/README.md). */
#define PIANO_FRAME_HEAD_MAX (9 * 9)   /* bytes of a record's nine head fields at most */
#define PIANO_FRAME_FN_MAX (2 * 9)     /* bytes of one function's entry at most */
#define PIANO_PV_SLACK 8               /* piano_pv_put may write this far past its value */

/* Prefix varint: n = 1..8 bytes hold a value below 2^(7n); the lowest set bit
 * of the first byte is bit n-1, the value is above it (little-endian). A first
 * byte of 0 is followed by the 8 bytes of the value. Unlike LEB128, the length
 * is known from the first byte, so writing one takes no loop and no branch on
 * its length. */
/* The bytes a value takes, by the count of its leading zero bits (a table:
 * this is on the path of every function of every frame). */
static const unsigned char piano_pv_len_by_clz[64] = {
    9, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 5, 5, 5,
    5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
};

/* Writes v at p; returns the position after it. Writes up to PIANO_PV_SLACK
 * bytes past that. */
static inline unsigned char *piano_pv_put(unsigned char *p, uint64_t v)
{
    unsigned n = piano_pv_len_by_clz[__builtin_clzll(v | 1)];
    if (__builtin_expect(n == 9, 0)) {
        p[0] = 0;
        __builtin_memcpy(p + 1, &v, 8);
        return p + 9;
    }
    uint64_t w = v << n | 1ull << (n - 1);
    __builtin_memcpy(p, &w, 8);   /* little-endian: the first n bytes are the value */
    return p + n;
}

/* Reads the prefix varint at p, which must end by `end`. Returns the position
 * after it, or NULL when it runs past end. */
static inline const unsigned char *piano_pv_get(const unsigned char *p, const unsigned char *end, uint64_t *v)
{
    if (end - p >= 8 && p[0]) {   /* the usual case: one load, no loop */
        uint64_t w;
        __builtin_memcpy(&w, p, 8);
        unsigned n = (unsigned)__builtin_ctzll(w) + 1, drop = 64 - 8 * n;
        *v = w << drop >> (drop + n);
        return p + n;
    }
    if (p >= end)
        return NULL;
    if (p[0] == 0) {
        if (end - p < 9)
            return NULL;
        __builtin_memcpy(v, p + 1, 8);
        return p + 9;
    }
    unsigned n = (unsigned)__builtin_ctz(p[0]) + 1;
    if ((size_t)(end - p) < n)
        return NULL;
    uint64_t w = 0;
    for (unsigned i = 0; i < n; i++)
        w |= (uint64_t)p[i] << 8 * i;
    *v = w >> n;
    return p + n;
}

static inline uint64_t piano_zigzag(int64_t v) { return (uint64_t)v << 1 ^ (uint64_t)(v >> 63); }
static inline int64_t piano_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Why a frame record was kept (frame_keep): within the budget, as a spike
 * candidate (kept by the import only when over the run's final spike
 * threshold, store/import_frames.c), or in the sample (kept by the import only
 * when n is a multiple of the run's final 2^sample_shift: a uniform 1-in-K sample). */
enum { PIANO_KEPT_BUDGET = 0, PIANO_KEPT_SPIKE = 1, PIANO_KEPT_SAMPLE = 2 };

struct piano_frame_view {    /* one frame record, read */
    uint64_t start, total, allocs, alloc_bytes, frees, free_bytes;
    uint64_t off_ns;         /* its off-CPU ns */
    uint64_t n;              /* its number among the thread's frames */
    uint32_t kept;           /* PIANO_KEPT_* */
    uint32_t nfns;
    const unsigned char *fns;   /* the function entries, nfns of them */
};

/* Reads the function entry at p of a frame record; *id holds the previous
 * entry's id (0 before the first) and gets this one's. */
static inline const unsigned char *piano_frame_fn(const unsigned char *p, const unsigned char *end,
                                                  uint32_t *id, uint64_t *self)
{
    uint64_t v, d = piano_zigzag(1);
    if (!(p = piano_pv_get(p, end, &v)) || (!(v & 1) && !(p = piano_pv_get(p, end, &d))))
        return NULL;
    *self = v >> 1;
    *id = (uint32_t)(*id + (uint64_t)piano_unzigzag(d));
    return p;
}

/* Reads the head of the record at p (ending by end) whose buffer's previous
 * record ended at tick `base` and was frame number base_n (both 0 before the
 * buffer's first), and checks its function entries. Returns the position
 * after the record, or NULL when it is malformed. */
static inline const unsigned char *piano_frame_read(const unsigned char *p, const unsigned char *end,
                                                    uint64_t base, uint64_t base_n, struct piano_frame_view *f)
{
    uint64_t head[9];
    for (int i = 0; i < 9; i++)
        if (!(p = piano_pv_get(p, end, &head[i])))
            return NULL;
    if (head[6] > PIANO_FN_CAP || (head[7] & 3) > PIANO_KEPT_SAMPLE)
        return NULL;   /* a frame names each function once */
    f->n = base_n + (head[7] >> 2);
    f->kept = (uint32_t)(head[7] & 3);
    f->start = base + (uint64_t)piano_unzigzag(head[0]);
    f->total = head[1];
    f->allocs = head[2];
    f->alloc_bytes = head[3];
    f->frees = head[4];
    f->free_bytes = head[5];
    f->nfns = (uint32_t)head[6];
    f->off_ns = head[8];
    f->fns = p;
    uint32_t id = 0;
    uint64_t self;
    for (uint32_t k = 0; k < f->nfns; k++)
        if (!(p = piano_frame_fn(p, end, &id, &self)) || id >= PIANO_FN_CAP)
            return NULL;
    return p;
}


/* Snapshots (PIANO_INTERVAL, rt/snap.c): every interval a background thread
 * sums each function's figures over every thread's contexts and appends one
 * record to the snaps file, with the functions whose figures changed since
 * the previous record. The counters a record holds per function, in order;
 * a new one goes at the end (and bumps PIANO_SPOOL_VERSION). */
#define PIANO_SNAP_COUNTERS(X)                                                                                   \
    X(calls)        /* calls ended */                                                                            \
    X(self)         /* self ticks */                                                                             \
    X(child_calls)  /* instrumented calls it made directly (the overhead correction) */                        \
    X(allocs)                                                                                                    \
    X(alloc_bytes)                                                                                               \
    X(cpu_self)     /* self ticks on threads that measured CPU time (cpu_ok) */                                  \
    X(off)          /* self off-CPU ns on those threads: their CPU is cpu_self in ns minus this */             \
    X(inuse_objects) /* PIANO_HEAP: its allocations live now (each context's, at least 0): may go down */     \
    X(inuse_bytes)
enum {
#define PIANO_SNAP_ENUM(name) PIANO_SNAP_##name,
    PIANO_SNAP_COUNTERS(PIANO_SNAP_ENUM)
#undef PIANO_SNAP_ENUM
    PIANO_SNAP_N
};
#define PIANO_SNAP_MAGIC 0x70616e73u   /* "snap" */
/* A record: this header, then nfns entries, each the function's id minus the
 * previous entry's (the first: minus 0; ids ascend) and then, per counter,
 * how much it grew since the previous record, zigzag-coded; all prefix
 * varints. One write() appends a record: a record cut by a crash (size past
 * the file's end) is the last one, and is not read. */
struct piano_snap_hdr {
    uint32_t magic;
    uint32_t size;           /* bytes of the record, this header included */
    uint64_t tick;           /* when it was taken */
    uint32_t nfns;
    uint32_t ncounters;      /* PIANO_SNAP_N of the writer */
    uint32_t nspans;         /* span entries after the functions' (span_spool.h) */
    uint32_t nspan_figures;  /* PIANO_SPAN_F_N of the writer */
};
#define PIANO_SNAP_ENTRY_MAX ((1 + PIANO_SNAP_N) * 9)   /* bytes of an entry at most */
/* After the nfns entries, nspans entries of span names (the spans file's
 * records, span_spool.h) whose figures changed: each the record's index + 1
 * minus the previous entry's (ascending), then per figure of
 * PIANO_SPAN_FIGURES its growth, zigzag-coded: the same shape as a
 * function's, read by piano_snap_entry_n. */

/* Reads the record at p (ending by end): its header into *h. Returns the
 * position after the record, or NULL when it is cut or malformed; *entries is
 * its first entry. */
static inline const unsigned char *piano_snap_read(const unsigned char *p, const unsigned char *end,
                                                   struct piano_snap_hdr *h, const unsigned char **entries)
{
    if ((size_t)(end - p) < sizeof *h)
        return NULL;
    __builtin_memcpy(h, p, sizeof *h);
    if (h->magic != PIANO_SNAP_MAGIC || h->ncounters != PIANO_SNAP_N || h->size < sizeof *h ||
        h->size > (size_t)(end - p) || h->nfns > PIANO_FN_CAP || h->nspans > PIANO_SPAN_CAP ||
        (h->nspans && h->nspan_figures != PIANO_SPAN_F_N))
        return NULL;
    *entries = p + sizeof *h;
    return p + h->size;
}

/* Reads the entry at p of a record ending at end: *id holds the previous
 * entry's id (0 before the first) and gets this one's; delta[] the growths.
 * NULL when it is malformed. */
static inline const unsigned char *piano_snap_entry_n(const unsigned char *p, const unsigned char *end,
                                                      uint32_t *id, uint32_t cap, int64_t *delta, int n)
{
    uint64_t v;
    if (!(p = piano_pv_get(p, end, &v)) || v == 0 || v >= cap - *id)
        return NULL;
    *id += (uint32_t)v;
    for (int c = 0; c < n; c++) {
        if (!(p = piano_pv_get(p, end, &v)))
            return NULL;
        delta[c] = piano_unzigzag(v);
    }
    return p;
}
static inline const unsigned char *piano_snap_entry(const unsigned char *p, const unsigned char *end,
                                                    uint32_t *id, int64_t delta[PIANO_SNAP_N])
{
    return piano_snap_entry_n(p, end, id, PIANO_FN_CAP, delta, PIANO_SNAP_N);
}

struct piano_spool_run {
    uint64_t magic;
    uint32_t version, pid;
    char key[64], parent_key[64];
    uint64_t start_real_ns;  /* CLOCK_REALTIME at start */
    uint64_t tick0;          /* clock ticks at start */
    uint64_t mono0;          /* CLOCK_MONOTONIC ns at start, paired with tick0 */
    uint32_t clock;          /* 0: tsc, 1: CLOCK_MONOTONIC in ns */
    uint32_t status;         /* 0: running, 1: complete */
    uint64_t end_tick;
    double overhead_ticks;   /* measured cost of one instrumented call, outside its own time */
    uint32_t cmd_len;
    /* 1: the program had PIANO_KEEP_EMPTY set (not "0"): a run that recorded
     * nothing is stored whoever imports it (at exit, later, or recovered). */
    uint32_t keep_empty;
    char cmd[4096];
    /* Calls piano could not record because a thread's state could not be
     * made (address-space limit, no memory): said once, counted here. */
    uint64_t calls_unrecorded;
    uint32_t threads_unrecorded, pad2;
    /* A forked child's: the tick of the fork. Its calls in flight that
     * started by then are its parent's, not its own. 0 otherwise. */
    uint64_t fork_tick;
    /* An allocator piano's malloc does not see, found at exit (allocator.c):
     * "je_malloc", "malloc in libjemalloc.so.2"...; "" when none. */
    char allocator[64];
    uint32_t cpu_mode;       /* PIANO_CPU_*: whether threads measure CPU time */
    uint32_t heap;           /* 1: heap in use is tracked (PIANO_HEAP) */
    uint32_t has_selection;  /* 1: PIANO_FNS was set at run time: selection holds it */
    char selection[4096];    /* the run-time PIANO_FNS (cut to 4095 bytes) */
};
/* CPU time: not asked (PIANO_CPU unset), measured through a per-thread perf
 * task-clock page, or asked and refused (perf_event_open failed): not measured. */
enum { PIANO_CPU_OFF = 0, PIANO_CPU_PERF = 1, PIANO_CPU_REFUSED = 2 };
enum { PIANO_CLOCK_TSC = 0, PIANO_CLOCK_MONO = 1 };

/* Bytes of a function's name, or of its file, in a fns record at most: the
 * recorder cuts longer ones, so a longer one is damage. */
#define PIANO_FN_TEXT_MAX 4000
struct piano_spool_fn {      /* followed by name_len + file_len bytes */
    uint32_t id, line, name_len, file_len;
};

#define PIANO_ALIGN_UP(x) (((x) + 4095) & ~(uint64_t)4095)
/* The shadow stack starts in the header's page, after the first hash: a
 * thread's first 32 nested calls touch no other page of it (a first touch of
 * a page of the states file is a fault through the file system: the cost of
 * a new thread, bench/README.md). */
#define PIANO_OFF_STACK 3072ull
#define PIANO_OFF_NODES PIANO_ALIGN_UP(PIANO_OFF_STACK + (PIANO_STACK_CAP + 1ull) * sizeof(struct piano_slot))
#define PIANO_NODES_TOTAL (PIANO_NODE_CAP + PIANO_FN_CAP)
#define PIANO_OFF_FNS PIANO_ALIGN_UP(PIANO_OFF_NODES + (uint64_t)PIANO_NODES_TOTAL * sizeof(struct piano_node))
#define PIANO_OFF_PAGES PIANO_ALIGN_UP(PIANO_OFF_FNS + (uint64_t)PIANO_FN_CAP * sizeof(struct piano_fnrec))
#define PIANO_OFF_CARRY PIANO_ALIGN_UP(PIANO_OFF_PAGES + (uint64_t)PIANO_PAGE_CAP * PIANO_PAGE_BYTES)
#define PIANO_OFF_HASH PIANO_ALIGN_UP(PIANO_OFF_CARRY + (uint64_t)PIANO_PAGE_CAP * PIANO_PAGE_BYTES)
#define PIANO_OFF_TOUCHED PIANO_ALIGN_UP(PIANO_OFF_HASH + (uint64_t)PIANO_HASH_CAP * sizeof(uint32_t))
#define PIANO_THREAD_FILE_SIZE PIANO_ALIGN_UP(PIANO_OFF_TOUCHED + (uint64_t)PIANO_FN_CAP * sizeof(uint32_t))
/* The frame's function list (runtime only) fills its section from the end
 * down: its first entries share a page edge with the frame buffer's first
 * page, and a thread's start makes both with one write (rt/slots.c). */
_Static_assert(PIANO_OFF_TOUCHED + (uint64_t)PIANO_FN_CAP * sizeof(uint32_t) == PIANO_THREAD_FILE_SIZE,
               "the function list ends where the frame buffer starts");
/* A thread's slot in states: its state, then its frame buffer. Slots start
 * on 2 MiB boundaries, so a slot can be mapped at its offset on any page size. */
#define PIANO_SLOT_BUF PIANO_THREAD_FILE_SIZE   /* the frame buffer's offset in a slot */
#define PIANO_SLOT_SIZE ((PIANO_SLOT_BUF + PIANO_CHUNK_SIZE + (2ull << 20) - 1) & ~((2ull << 20) - 1))
_Static_assert(PIANO_SLOT_BUF % 4096 == 0, "a slot's frame buffer starts on a page");

/* Counter `word` of state ts's histogram pages (page p's bucket b, self or
 * total: word p * PIANO_PAGE_WORDS + b * 2 + k) plus one: 32 bits, and the
 * rare wrap carried into the word's place in the carry, so no count is lost
 * (a bucket passes 2^32 after about an hour of 1 ns calls). A reader of a
 * live thread may see a wrapped word before its carry, short by 2^32 for that
 * instant. */
static __attribute__((noinline, cold)) void piano_hist_carry(struct piano_thread *ts, size_t word)
{
    ((uint32_t *)(void *)((char *)ts + PIANO_OFF_CARRY))[word]++;
    __atomic_store_n(&ts->hist_carried, 1, __ATOMIC_RELEASE);
}
static inline __attribute__((always_inline)) void piano_hist_inc(struct piano_thread *ts, size_t word)
{
    uint32_t *c = (uint32_t *)(void *)((char *)ts + PIANO_OFF_PAGES) + word;
#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 11)
    /* One add to memory and a jump on its zero flag: the compiler's own
     * form kept the counter's address in a register for the carry's call
     * (a lea more, 2 instructions a call pair). */
    __asm__ goto("addl $1, %0\n\tje %l[wrapped]" : "+m"(*c) : : "cc" : wrapped);
    return;
wrapped:
    piano_hist_carry(ts, word);
#else
    if (__builtin_expect(++*c == 0, 0))
        piano_hist_carry(ts, word);
#endif
}
/* Counter `word` of a state at `state` (a thread's, or a copy laid out as
 * one), its carry included when the header says there is one. Relaxed: a
 * live thread may be adding to it. */
static inline uint64_t piano_hist_word(const void *state, int carried, size_t word)
{
    const uint32_t *lo = (const uint32_t *)(const void *)((const char *)state + PIANO_OFF_PAGES);
    uint64_t c = __atomic_load_n(&lo[word], __ATOMIC_RELAXED);
    if (carried)
        c += (uint64_t)__atomic_load_n(&((const uint32_t *)(const void *)((const char *)state + PIANO_OFF_CARRY))[word],
                                       __ATOMIC_RELAXED) << 32;
    return c;
}

/* Where thread n's slot starts in states. */
static inline uint64_t piano_slot_offset(uint32_t n)
{
    return (uint64_t)n * PIANO_SLOT_SIZE;
}

/* The ended file: the records of short threads whose slots were given to
 * later threads (rt/slots.c slot_reuse). Each record is appended by one write
 * and is the parts of its thread's state in use, as write_state would write
 * them into its slot: this header, nparts part headers, then each part's
 * bytes padded to 8. A reader takes the parts at their offsets in a zeroed
 * slot-shaped buffer. A record is whole when its magic, size and check agree
 * (a write cut short by a full disk is skipped: the reader looks for the next
 * magic); a thread found both here and in a slot is taken from here. */
#define PIANO_ENDED_MAGIC 0x646e65206f6e6170ull   /* "pano end" */
#define PIANO_ENDED_PARTS_MAX 192u
struct piano_ended_hdr {
    uint64_t magic;
    uint32_t size;           /* bytes of the record, this header included: a multiple of 8 */
    uint32_t thread;         /* the thread's number */
    uint32_t nparts, pad;
    uint64_t check;          /* piano_ended_mix of the record with this field 0 */
};
struct piano_ended_part {
    uint64_t off, len;       /* where in the slot, and how many bytes */
};

/* A packed record (PIANO_PACKED_MAGIC): a state left at exit for the next
 * piano-db command (PIANO_STORE=later, rt/finish.c), in the ended file. Its
 * header and part headers are an ended record's; then, for each part in
 * turn, its bytes coded as tokens: a count of zero bytes, a count of bytes
 * that follow as they are, each count a varint (7 bits a byte, low first),
 * until the part's len bytes are told; the record padded with zeros to 8.
 * A state's parts in use are mostly zeros (jq's short run: 412 KB, 24 KB of
 * them not zero; coded 54 KB). The reader makes the ended record it codes
 * (store/spool_read.c) and reads that. */
#define PIANO_PACKED_MAGIC 0x6b6361702f6f6e61ull   /* "ano/pack" */

/* The record's check: a 64-bit mix of its words, in order (the record of
 * `size` bytes, its check field 0), computed over pieces whose lengths are
 * multiples of 8, or over the whole: piano_ended_mix(piano_ended_start(size),
 * record, size). */
static inline uint64_t piano_ended_start(uint64_t size)
{
    return 0x9e3779b97f4a7c15ull ^ size;
}
static inline uint64_t piano_ended_mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        __builtin_memcpy(&w, b + i, n - i < 8 ? n - i : 8);   /* a last piece of a part: padded with zeros */
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

/* The chunks file: full frame buffers appended by a process that changed
 * its user (rt/user.c) and can no longer make a chunk file f<N>.<K> in its
 * spool folder. Each record, appended by one write, is this header, then the
 * chunk as a chunk file holds it (its piano_chunk_hdr, then its records),
 * padded to 8. A record is whole when its magic, size and check agree (one
 * cut short by a full disk is skipped: the reader looks for the next magic);
 * it stands for f<thread>.<k>. */
#define PIANO_CHUNKS_MAGIC 0x736b6e75686370ull   /* "pchunks" */
struct piano_chunks_rec {
    uint64_t magic;
    uint32_t size;           /* bytes of the record, this header included: a multiple of 8 */
    uint32_t thread;         /* the thread's number */
    uint64_t k;              /* the chunk's number among the thread's */
    uint64_t check;          /* piano_ended_mix(piano_ended_start(size), ...) of the record with this field 0 */
};

/* The names of the spool's files, built here only: the recorder makes them,
 * the import and piano-db find them. */
#define PIANO_SPOOL_SUFFIX ".spool"   /* <db>.spool holds the run folders */
#define PIANO_SPOOL_LOCK "lock"
#define PIANO_SPOOL_RUN "run"
#define PIANO_SPOOL_FNS "fns"
#define PIANO_SPOOL_STATES "states"
#define PIANO_SPOOL_SNAPS "snaps"
#define PIANO_SPOOL_ENDED "ended"
#define PIANO_SPOOL_CHUNKS "chunks"
#define PIANO_SPOOL_SPARE ".spare"      /* .spare<N>: a stored run's folder, for the next run (above) */
#define PIANO_SPARES_MAX 4u                /* spare folders per spool, at most */
#define PIANO_SPARE_WARM_MAX (4u << 20)    /* a spare's states kept warm up to this (a short run's), else emptied */
#define PIANO_SPOOL_DAMAGED ".damaged" /* <run key>.damaged: a run folder the import could not read, kept */
typedef struct { char s[40]; } piano_spool_name;

/* states[N]: thread N's slot, as messages name it */
static inline piano_spool_name piano_spool_slot_name(uint32_t thread)
{
    piano_spool_name n;
    snprintf(n.s, sizeof n.s, PIANO_SPOOL_STATES "[%u]", (unsigned)thread);
    return n;
}

/* .spare<N>: spare run folder N (N < PIANO_SPARES_MAX) */
static inline piano_spool_name piano_spool_spare_name(unsigned n)
{
    piano_spool_name s;
    snprintf(s.s, sizeof s.s, PIANO_SPOOL_SPARE "%u", n);
    return s;
}

/* f<N>.<K>: thread N's K-th stored chunk */
static inline piano_spool_name piano_spool_frames_file(uint32_t thread, uint64_t chunk)
{
    piano_spool_name n;
    snprintf(n.s, sizeof n.s, "f%u.%llu", (unsigned)thread, (unsigned long long)chunk);
    return n;
}

/* <db>.spool into buf; -1 if it does not fit. */
static inline int piano_spool_root(char *buf, size_t n, const char *db_path)
{
    int w = snprintf(buf, n, "%s" PIANO_SPOOL_SUFFIX, db_path);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

#endif
