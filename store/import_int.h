/*
 * import_int.h - what the pieces of the spool import share (not for piano-db).
 *
 * The import (import.h) reads a spool folder as untrusted input and stores it
 * as one run, in two phases:
 *   spool_files.c  opening a spool's folders and files safely; its run header;
 *                  removing a folder
 *   calibrate.c    the run's clock: nanoseconds per tick
 *   spool_read.c   phase 1, before the database is locked: the threads, their
 *                  live buffers (copied under the seqlock) and chunk files
 *   import_state.c phase 2: a thread's contexts, stats, histograms and calls
 *                  in flight
 *   import_frames.c phase 2: the frames of every thread, merged in end order
 *   import_snaps.c phase 2: the snapshots (PIANO_INTERVAL)
 *   import.c       the job: one transaction per run (runs, threads, functions)
 *   recover.c      the spools of processes that are gone (piano-db)
 */
#ifndef PIANO_IMPORT_INT_H
#define PIANO_IMPORT_INT_H
#include "contexts_blob.h"
#include "functions_blob.h"
#include "stats_blob.h"
#include "hist.h"
#include "import.h"
#include "metrics.h"
#include "spool.h"
#include "store.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/types.h>

/* ---------------------------------------------------------------- sizes */

/* The longest path the import builds: a database path, its spool root's
 * suffix, a run folder's name (at most NAME_MAX) and the suffix of a damaged
 * one. */
#define IMPORT_PATH_MAX                                                                                          \
    (PIANO_DB_PATH_MAX + sizeof PIANO_SPOOL_SUFFIX + 1 + NAME_MAX + sizeof PIANO_SPOOL_DAMAGED)
/* What could not be read of a run, for a warning. */
#define IMPORT_NOTE_MAX 1024
/* A one-line message naming a run folder: its path, a reason, a note. */
#define IMPORT_LINE_MAX (IMPORT_PATH_MAX + IMPORT_NOTE_MAX + 256)
/* A message naming a run folder twice, with a line about it. */
#define IMPORT_MSG_MAX (2 * IMPORT_PATH_MAX + IMPORT_LINE_MAX)

/* ---------------------------------------------------------------- files (spool_files.c) */

struct mapping {
    unsigned char *p;
    size_t len;
};

int spool_open_file_at(int dfd, const char *name, off_t *size);
int spool_map_at(int dfd, const char *name, size_t max, struct mapping *m);
int spool_map_range(int fd, uint64_t off, size_t len, struct mapping *m);
struct job;
void spool_packed_release(struct job *j);   /* the job's decoded packed records' mappings, given back */
void spool_unmap(struct mapping *m);
int spool_open_own_dir(int at, const char *name, const char *shown, char *err, size_t errn);
/* A folder's entries, read with getdents64 into a buffer of piano's own
 * (mmap): no opendir, whose DIR comes from the program's malloc (a program's
 * allocator may be anything by the time a run is stored at its exit). */
struct spool_listing {
    int fd;
    char *buf;
    size_t len, pos;
};
int spool_listing_open(int dfd, struct spool_listing *l);
const char *spool_listing_next(struct spool_listing *l);
void spool_listing_close(struct spool_listing *l);
void spool_remove_files_at(int dfd);
/* Stored run folder `name` (dfd) of spool root root_fd: renamed to a spare
 * (spool.h), or removed when every spare name is taken. */
void spool_retire_at(int root_fd, int dfd, const char *name);
int spool_read_run(int dfd, const char *shown, struct piano_spool_run *run, char *err, size_t errn);

/* ---------------------------------------------------------------- clock (calibrate.c) */

uint64_t spool_clock_now(uint32_t clock);
double spool_calibrate(const struct piano_spool_run *run, int complete, int root_fd);

static inline int64_t to_ns(uint64_t t, double npt)
{
    double v = (double)t * npt;
    return v > 9.2e18 ? INT64_MAX : (int64_t)llround(v);
}

static inline int64_t since(uint64_t t, uint64_t t0, double npt)
{
    return t > t0 ? to_ns(t - t0, npt) : 0;
}

static inline sqlite3_int64 count64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

/* Binds the allocation figures (allocs, alloc_bytes, frees, free_bytes) to
 * parameters col.. of st (a frames row). */
static inline void bind_allocs(sqlite3_stmt *st, int col, uint64_t allocs, uint64_t alloc_bytes,
                               uint64_t frees, uint64_t free_bytes)
{
    sqlite3_bind_int64(st, col, count64(allocs));
    sqlite3_bind_int64(st, col + 1, count64(alloc_bytes));
    sqlite3_bind_int64(st, col + 2, count64(frees));
    sqlite3_bind_int64(st, col + 3, count64(free_bytes));
}

/* A function's or context's CPU figures (cpu_ns, cpu_total_ns, cpu_user_ns,
 * cpu_sys_ns, offcpu_ns) into out, from its self and inclusive time (ns) and
 * its self and inclusive off-CPU and inclusive (sampled) user ns. Reading the clocks at a switch is not instantaneous, and the user time is
 * sampled: figures are clamped so that CPU + off-CPU = inclusive time and
 * user + system = CPU. */
static inline void cpu_figures(int64_t self_ns, int64_t total_ns, uint64_t off_self, uint64_t off_total,
                               uint64_t user_total, int64_t out[5])
{
    int64_t cpu_self = self_ns - (int64_t)(off_self < (uint64_t)INT64_MAX ? off_self : INT64_MAX);
    int64_t cpu_total = total_ns - (int64_t)(off_total < (uint64_t)INT64_MAX ? off_total : INT64_MAX);
    cpu_self = cpu_self > 0 ? cpu_self : 0;
    cpu_total = cpu_total > 0 ? cpu_total : 0;
    if (cpu_self > cpu_total)
        cpu_total = cpu_self;
    int64_t user = user_total < (uint64_t)cpu_total ? (int64_t)user_total : cpu_total;
    out[0] = cpu_self;
    out[1] = cpu_total;
    out[2] = user;
    out[3] = cpu_total - user;
    out[4] = total_ns > cpu_total ? total_ns - cpu_total : 0;
}

/* ---------------------------------------------------------------- the job */

/* A run of one thread's frame records, checked when found: a chunk file's, or
 * the copy of the buffer. A thread's records are in end order; the import
 * merges the threads' by end (import_frames), so it never holds a frame list. */
struct frame_span {
    const unsigned char *p, *end;
    uint32_t thread;
};

/* One thread of the spool, as found in phase 1 (collect_thread). */
struct thread_in {
    uint32_t number;          /* N of states[N] / f<N>.<K>: the thread's number in the run */
    int has_state, has_hdr;   /* its state in states[N] is whole; its header is readable */
    int live;                 /* a thread of this process that may still be recording */
    const struct piano_thread *mem;   /* its state in this process's memory, not in states */
    const unsigned char *slot;    /* its slot of states, mapped (slot_len bytes: the file may end inside it) */
    size_t slot_len;
    uint32_t slot_index;      /* ... that slot's number (a reused slot's differs from the thread's) */
    const unsigned char *ended;   /* or its record in the ended file (checked), whose parts are its
                                   * state in the job's scratch between ended_state and ended_release */
    int packed;               /* slot: a packed record of the ended file decoded (spool_read.c pool) */
    struct piano_thread hdr;  /* a copy of the header, read once */
    const unsigned char *state;   /* its state: the slot's start, or mem (has_state) */
    int has_buf;              /* the buffer was copied: buf_seq is its chunk number */
    uint64_t buf_seq;
    unsigned char *buf;       /* the copy of the frame buffer's records */
    size_t buf_len;
};

/* A chunk file f<number>.<k>, or a record of the chunks file that stands
 * for it (rec: the chunk's bytes, len of them; NULL for a file). */
struct chunk_name {
    uint32_t number;
    uint64_t k;
    const unsigned char *rec;
    size_t len;
};

struct agg {
    uint64_t calls, self, total, allocs, alloc_bytes, frees, free_bytes, child_calls, unfinished;
    uint64_t off, user, off_total, user_total;   /* ns: self and inclusive (as self and total) */
    uint64_t inuse_objects, inuse_bytes, peak_inuse_bytes;
    uint32_t inflight;        /* an in-flight call of it was seen below (import_inflight) */
    uint32_t fn;              /* whose sums these are (agg_of) */
    uint64_t counter[PIANO_C_N + 1];   /* PIANO_NODE_COUNTERS (spool/metrics.h), summed */
};

/* A context's tree links, checked (a parent precedes its child), and the
 * figures its inclusive sums are made of, read once from its node (a live
 * thread may be adding to them) with its calls in flight added: 24 bytes a
 * context where a copy of the node was 128 (a short run's import touched
 * 37 pages of copies for jq's 1,182 contexts: bench/README.md, issue 23).
 * Its off-CPU and user ns (PIANO_CPU) are in node_cpu, written only for a
 * context that has them: a run without them touches none of its pages. */
struct node_fig {
    uint32_t parent, fn;
    uint64_t calls, self;
};
struct node_cpu {
    uint64_t off, user;
};

/* An in-flight call's histogram samples. */
struct sample {
    uint32_t fn;
    uint16_t self, total;     /* buckets */
};

/* Everything one import holds; freed in one place. */
struct job {
    sqlite3 *db;
    int dfd;                  /* the run folder */
    const char *shown;        /* its name, for messages */
    const struct piano_spool_run *run;
    const struct piano_import_mem *mem;   /* states held in memory, or NULL */
    const struct spool_parents *parents;  /* the spool root's, or NULL */
    double npt;
    sqlite3_int64 run_id;
    sqlite3_stmt *name_find_st, *name_add_st, *fn_st, *thread_st, *ctx_st, *stats_st, *unf_st;
    piano_fnlist_writer fn_blob;  /* the run's functions (fn_st: into fn_lists) */
    piano_ctx_writer ctx_blob;    /* a thread's contexts (ctx_st: into context_trees) */
    piano_stats_writer stats_blob;   /* its functions' stats (stats_st: into stat_trees) */
    unsigned char *packed;        /* a blob packed for storing (blob_pack.h), cap_packed bytes */
    size_t cap_packed;
    struct mapping *maps;
    size_t n_maps, cap_maps;
    struct frame_span *spans;
    size_t n_spans, cap_spans;
    struct thread_in *threads;
    size_t n_threads, cap_threads;
    struct chunk_name *chunks;
    size_t n_chunks, cap_chunks;
    /* A thread's per-function sums, dense in the order its functions are
     * first seen (agg_of): agg[agg_slot[fn]], 0 = none yet; agg[1..agg_n]
     * in use. Indexed by function id, a short run's import touched a page
     * for every 28 ids registered, called or not (jq: 20 pages for 560 ids). */
    struct agg *agg;
    uint32_t *agg_slot;
    uint32_t agg_n;
    const struct piano_node *nodes;   /* the thread's nodes, read in place (its state) */
    struct node_fig *fig;     /* their tree, checked, and figures read once (import_state.c) */
    struct node_cpu *node_cpu;   /* ... their CPU figures, 0 but below node_cpu_used */
    uint32_t node_cpu_used;
    uint64_t *node_total;
    uint64_t *node_off, *node_user;   /* contexts' inclusive off-CPU and (sampled) user ns */
    unsigned char *cpu_threads;      /* per thread number: 1 when it measured CPU time */
    uint32_t n_cpu_threads;
    struct sample *samples;
    size_t cap_samples;
    /* PIANO_HIST_BUCKETS counters of a histogram's samples that are not in
     * its pages (its first ones, the pending one, its calls in flight), zero
     * between uses: 32 bits, at most a shadow stack's depth plus 32 (15 KiB,
     * a short run's import touches a page or two of it). */
    uint32_t *dense;
    const struct thread_in *oct_thread;   /* encode_hist: the octaves with pages of function */
    uint32_t oct_fn;                      /* oct_fn of that thread, found for its self histogram */
    uint64_t oct_mask;
    unsigned char *used;      /* bit per function id named by a stored row: only those are stored */
    unsigned char *blob;
    void *tables;             /* one mapping holding agg..blob (job_alloc) */
    unsigned char *scratch;   /* a zeroed slot-shaped state for a thread of the ended file, or NULL */
    size_t tables_len;
    uint64_t frames_dropped, samples_dropped, calls_untimed, end_tick, end;
    /* The frame budget (rt/budget.c frame_keep): every frame counted, the run's
     * frame histogram, the final sample rate 2^sample_shift and spike level,
     * the spike threshold; the threshold a spike candidate is kept over (ticks). */
    uint64_t frames_all, frames_kept, spikes_unkept, spike_keep_ticks;
    uint32_t sample_shift, spike_level;
    piano_hist *frame_hist;   /* the run's, summed over its threads */
    int frame_hist_any;       /* a thread's frame pages were added to it (else it is all 0, never touched) */
    int cpu_any;              /* a context of the thread has off-CPU or user time (read_nodes) */
    double spike_ns;          /* a frame longer is a spike (piano_frame_spike_ns) */
    uint64_t seen;            /* when the states of live threads were read: their calls ended before */
    int recorded;             /* a call, frame or allocation of this process's own */
    /* Heap in use (rt/heap.c): tracked or not; the number of the run's last
     * peak copy (a context's peak_bytes counts when its peak_gen is this one)
     * and the run's heap peak: the largest any thread state holds. */
    int heap_on;
    uint32_t heap_gen;
    uint64_t heap_peak;
    int live;                 /* the process is running: stored as 'running', in the caller's transaction */
    int depth;                /* 0, or a dry import that deep (import.c has_child: would it be stored?) */
    unsigned parts;           /* PIANO_LIVE_*: what is read besides the run's row and totals (all unless live) */
    char note[IMPORT_NOTE_MAX];   /* what could not be read, for a warning; "" when all was */
};

/* Binds a context's or function's heap in use (NULL when the run did not
 * track it). */
/* Function fn is named by a row of this run. */
static inline void use_fn(struct job *j, uint64_t fn)
{
    if (fn < PIANO_FN_CAP)
        j->used[fn >> 3] |= (unsigned char)(1u << (fn & 7));
}

#define STEP(st) (sqlite3_step(st) == SQLITE_DONE ? (sqlite3_reset(st), 0) : (sqlite3_reset(st), -1))

/* Phase 1 (spool_read.c). */
void import_note(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int import_collect(struct job *j, int complete, char *err, size_t errn);

/* Phase 2 (import_state.c, import_frames.c). */
int import_state(struct job *j, const struct thread_in *t);
size_t import_thread_frames(struct job *j, const struct thread_in *t);
int ended_state(struct job *j, struct thread_in *t);
void ended_release(struct job *j, struct thread_in *t);
int import_frames(struct job *j, int dry);
int import_snapshots(struct job *j);   /* import_snaps.c */
int import_spans(struct job *j);       /* import_spans.c */
int import_prepare_unfinished(struct job *j);   /* import.c: made at the first call in flight */
/* Binds blob raw (n bytes) to parameter col of st, packed when that makes it
 * shorter (blob_pack.h); valid until the next call. import.c */
int import_bind_blob(struct job *j, sqlite3_stmt *st, int col, const unsigned char *raw, size_t n);

/* import.c: import_dir's results besides 1, 0 and -1. */
#define IMPORT_NO_RUN 2     /* the folder has no run header */
#define IMPORT_LIVE 2       /* import_run_folder's `complete` for a live process's run */
/* The spool root's folders and the parent each names, read once for a whole
 * recovery: without it, each run that recorded nothing reads every folder's
 * header to learn whether a run was forked from it (has_child), quadratic on
 * a spool of thousands of killed runs. */
struct spool_parent {
    char parent_key[64];
    char name[NAME_MAX + 1];   /* the folder, checked again at use: it may be gone */
};
struct spool_parents {
    struct spool_parent *of;   /* sorted by parent_key */
    size_t n;
};
int spool_parents_read(int root_fd, struct spool_parents *p);   /* 0, or -1: p empty, scan instead */
void spool_parents_free(struct spool_parents *p);
/* parents: the root's, or NULL (has_child lists the root itself). */
int import_run_folder(sqlite3 *db, int root_fd, int dfd, const char *shown, int complete, unsigned parts,
                      const struct piano_import_mem *mem, const struct spool_parents *parents, char *err,
                      size_t errn, char *note_out, size_t noten);

#endif
