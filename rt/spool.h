/*
 * spool.h - the layout of a running process's records on disk.
 *
 * While a process runs, everything piano records lives in files that are
 * memory-mapped MAP_SHARED, so the kernel keeps them even if the process
 * crashes or is killed. At exit the process imports its own spool into the
 * database (import.c); a spool whose process is gone is imported later by
 * piano-db and marked 'recovered'.
 *
 *   <db>.spool/<run key>/lock     flock()ed by the live process (released at exit, exec, death)
 *                        run      struct piano_spool_run
 *                        fns      appended records: struct piano_spool_fn + name + file
 *                        t<N>     thread N's state: struct piano_thread at offset 0, then the
 *                                 arrays at the PIANO_OFF_* offsets (a sparse file)
 *                        f<N>.w   thread N's frame buffer: struct piano_chunk_hdr, then records
 *                        f<N>.<K> thread N's K-th full buffer, stored: the same layout
 *
 * Times are clock ticks (see runs.ns_per_tick); import converts them to ns.
 */
#ifndef PIANO_SPOOL_H
#define PIANO_SPOOL_H
#include <stdint.h>

#define PIANO_SPOOL_MAGIC 0x6f6e6169705f7331ull  /* "1s_piano" */
#define PIANO_SPOOL_VERSION 2

#define PIANO_STACK_CAP (1u << 21)   /* shadow stack slots: deeper calls are counted only by depth */
#define PIANO_FN_CAP (1u << 17)      /* function ids per process; id 1 collects any beyond */
#define PIANO_NODE_CAP (1u << 16)    /* calling contexts per thread; beyond, a per-function orphan node */
#define PIANO_CTX_DEPTH 256          /* deeper calls share their ancestor's context at this depth */
#define PIANO_PAGE_CAP (1u << 15)    /* histogram octave pages per thread (indices fit uint16_t) */
#define PIANO_PAGE_WORDS 128         /* counters per page: 64 buckets x {self, total} */
#define PIANO_HASH_CAP (1u << 17)    /* open-addressing table of (parent, fn) -> node */
#define PIANO_HIST_OCTAVES 59
#define PIANO_CHUNK_SIZE (4u << 20)  /* bytes of a frame buffer, and at most of a chunk file */
#define PIANO_FN_OVERFLOW 1u         /* the id shared by functions past PIANO_FN_CAP */

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
};

/* 64-byte aligned (192 bytes): the fields above the page indices and the
 * pages of the first 16 octaves (times below ~2^21 ticks) share one cache line,
 * the only line of it most calls touch. */
struct __attribute__((aligned(64))) piano_fnrec {   /* one function, on one thread */
    uint32_t last_parent, last_node;   /* cache of the last context lookup */
    uint32_t epoch;                    /* frame in which frame_self was last reset */
    uint32_t pad;
    uint64_t frame_self;               /* self ticks in the current frame */
    /* A function's inclusive time (a recursive one counted at its outermost
     * activation) is not kept per call: the import sums it from the contexts. */
    /* Histogram page of each octave, 0 = none yet. A page holds both
     * histograms of the octave's 64 buckets, interleaved: [bucket][self, total],
     * so a call whose self and total times are alike (a leaf) touches one line. */
    uint16_t page[PIANO_HIST_OCTAVES];
};


struct piano_thread {        /* header of t<N>; padded to 4096 bytes */
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
    uint32_t anon, pad0;     /* state in anonymous memory, written to the file at the end */
    uint64_t allocs, alloc_bytes, frees, free_bytes; /* running totals of the thread */
    uint64_t frame_t0, frame_allocs, frame_alloc_bytes, frame_frees, frame_free_bytes;
    uint64_t frames, frames_dropped;
    uint64_t last_tick;      /* latest frame end or exit: bounds a crashed run's duration */
    uint64_t pend_self, pend_total; /* the latest call's sample, not yet in the histograms */
    uint32_t pend_fn, pad1;         /* its function (0: none; the import adds it) */
    uint64_t deep_calls;     /* calls deeper than PIANO_STACK_CAP, not timed */
    uint64_t hist_dropped;   /* samples lost because histogram pages ran out */
    uint64_t contexts_truncated;
    uint32_t chunks;         /* frame chunk files stored (the buffer holds the next) */
    uint32_t chunk_used;     /* bytes of records in the buffer */
    uintptr_t stack_lo, stack_hi;   /* this thread's stack, for longjmp reconciliation */
    unsigned char *chunk;    /* process-local: the mapped frame buffer */
    struct piano_thread *next;      /* process-local: list of live threads */
};

struct piano_chunk_hdr {
    uint64_t magic;
    uint64_t used;           /* bytes of complete records after this header */
    uint64_t seq;            /* chunk number K: a buffer holds f<N>.<K> until it is stored */
};

struct piano_frame_rec {     /* followed by `words` 64-bit words: PIANO_FW_* */
    uint64_t start, total;
    uint64_t allocs, alloc_bytes, frees, free_bytes;
    uint32_t nfns, words;    /* functions with self time in the frame; words after the record */
};
/* One word per function of a frame: bits 0-16 its id, bit 17 clear, bits
 * 18-63 its self ticks. A self time of 2^46 ticks or more (hours) sets bit 17
 * and takes the next word whole. Half the bytes of {u32 id, u64 self}: each
 * byte costs a copy into the page cache when the buffer is stored. */
#define PIANO_FW_FN_MASK ((1ull << 17) - 1)
#define PIANO_FW_LONG (1ull << 17)
#define PIANO_FW_SHIFT 18
#define PIANO_FW_SELF_MAX ((1ull << 46) - 1)
_Static_assert(PIANO_FN_CAP <= PIANO_FW_FN_MASK + 1, "function ids fit a frame word");

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
    uint32_t cmd_len, pad;
    char cmd[4096];
};
enum { PIANO_CLOCK_TSC = 0, PIANO_CLOCK_MONO = 1 };

struct piano_spool_fn {      /* followed by name_len + file_len bytes */
    uint32_t id, line, name_len, file_len;
};

#define PIANO_ALIGN_UP(x) (((x) + 4095) & ~(uint64_t)4095)
#define PIANO_OFF_STACK 4096ull
#define PIANO_OFF_NODES PIANO_ALIGN_UP(PIANO_OFF_STACK + (PIANO_STACK_CAP + 1ull) * sizeof(struct piano_slot))
#define PIANO_NODES_TOTAL (PIANO_NODE_CAP + PIANO_FN_CAP)
#define PIANO_OFF_FNS PIANO_ALIGN_UP(PIANO_OFF_NODES + (uint64_t)PIANO_NODES_TOTAL * sizeof(struct piano_node))
#define PIANO_OFF_PAGES PIANO_ALIGN_UP(PIANO_OFF_FNS + (uint64_t)PIANO_FN_CAP * sizeof(struct piano_fnrec))
#define PIANO_OFF_HASH PIANO_ALIGN_UP(PIANO_OFF_PAGES + (uint64_t)PIANO_PAGE_CAP * PIANO_PAGE_WORDS * sizeof(uint64_t))
#define PIANO_OFF_TOUCHED PIANO_ALIGN_UP(PIANO_OFF_HASH + (uint64_t)PIANO_HASH_CAP * sizeof(uint32_t))
#define PIANO_THREAD_FILE_SIZE PIANO_ALIGN_UP(PIANO_OFF_TOUCHED + (uint64_t)PIANO_FN_CAP * sizeof(uint32_t))

#endif
