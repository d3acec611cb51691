/*
 * import.c - turns a spool folder (spool.h) into one run in the database.
 *
 * Used by the runtime at exit for its own spool, and by piano-db for the
 * spools of processes that died before they could store theirs. Everything
 * for one run goes in one transaction; a run key already present means the
 * spool was stored before (a crash between commit and clean-up), so it is
 * not stored twice.
 */
#define _GNU_SOURCE
#include "import.h"
#include "fns_blob.h"
#include "hist.h"
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

struct mapping {
    unsigned char *p;
    size_t len;
};

static int map_file(const char *path, struct mapping *m)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    m->p = p;
    m->len = (size_t)st.st_size;
    return 0;
}

static void unmap(struct mapping *m)
{
    if (m->p)
        munmap(m->p, m->len);
    m->p = NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return mono_ns();
#endif
}

/* The boot's id: the TSC rate measured once holds until the next boot. */
static int boot_id(char *out, size_t n)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, out, n - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return -1;
    out[got] = 0;
    return 0;
}

/* Nanoseconds per tick of the run's clock. The run's own span calibrates best;
 * when it is short (or the machine rebooted since), use the rate measured
 * before on this boot (kept in <spool root>/calibration), else measure 20 ms
 * here: the invariant TSC has one rate for the machine. */
static double calibrate(const struct piano_spool_run *run, int complete, const char *dir)
{
    if (run->clock == PIANO_CLOCK_MONO)
        return 1.0;
    uint64_t t1 = ticks(), m1 = mono_ns();
    if (complete && t1 > run->tick0 && m1 > run->mono0 + 20000000ull)
        return (double)(m1 - run->mono0) / (double)(t1 - run->tick0);
    char cache[4400], boot[64], line[160];
    snprintf(cache, sizeof cache, "%s/../calibration", dir);
    int have_boot = boot_id(boot, sizeof boot) == 0;
    if (have_boot) {
        int fd = open(cache, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (got > 0) {
            line[got] = 0;
            char *sep = strchr(line, ' ');
            double npt = sep ? strtod(sep + 1, NULL) : 0;
            if (sep && (size_t)(sep - line) == strcspn(boot, "\n") &&
                strncmp(line, boot, (size_t)(sep - line)) == 0 && npt > 0 && npt < 1e3)
                return npt;
        }
    }
    uint64_t t0 = ticks(), m0 = mono_ns();
    do
        t1 = ticks(), m1 = mono_ns();
    while (m1 - m0 < 20000000ull);
    double npt = (double)(m1 - m0) / (double)(t1 - t0);
    if (have_boot) {
        boot[strcspn(boot, "\n")] = 0;
        int n = snprintf(line, sizeof line, "%s %.17g\n", boot, npt);
        char tmp[4500];
        snprintf(tmp, sizeof tmp, "%s.%d", cache, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            int ok = write(fd, line, (size_t)n) == n;
            close(fd);
            if (!ok || rename(tmp, cache) != 0)
                unlink(tmp);
        }
    }
    return npt;
}

static int64_t to_ns(uint64_t t, double npt)
{
    double v = (double)t * npt;
    return v > 9.2e18 ? INT64_MAX : (int64_t)llround(v);
}

static int64_t since(uint64_t t, uint64_t t0, double npt)
{
    return t > t0 ? to_ns(t - t0, npt) : 0;
}

void piano_spool_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* A run of one thread's frame records, checked by import_chunk: one chunk
 * file's, or the buffer's. A thread's records are in end order; the import
 * merges the threads' by end (insert_frames), so it never holds a frame list. */
struct frame_span {
    const unsigned char *p, *end;
    uint32_t thread;
};

static int by_number(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

struct agg {
    uint64_t calls, self, total, allocs, alloc_bytes, frees, free_bytes, child_calls;
};

/* Everything one import holds; freed in one place. */
struct job {
    sqlite3 *db;
    sqlite3_stmt *fn_st, *thread_st, *ctx_st, *stats_st, *unf_st, *frame_st;
    struct mapping *maps;
    size_t n_maps, cap_maps;
    struct frame_span *spans;
    size_t n_spans, cap_spans;
    struct agg *agg;
    size_t agg_used;   /* agg[0..agg_used) may be non-zero */
    uint64_t *node_total;
    unsigned char *blob;
    uint64_t frames_dropped, samples_dropped, calls_untimed, end_tick;
};

static int keep_map(struct job *j, struct mapping m)
{
    if (j->n_maps == j->cap_maps) {
        size_t cap = j->cap_maps ? j->cap_maps * 2 : 64;
        void *p = realloc(j->maps, cap * sizeof *j->maps);
        if (!p)
            return -1;
        j->maps = p;
        j->cap_maps = cap;
    }
    j->maps[j->n_maps++] = m;
    return 0;
}

static int add_span(struct job *j, const unsigned char *p, const unsigned char *end, uint32_t thread)
{
    if (j->n_spans == j->cap_spans) {
        size_t cap = j->cap_spans ? j->cap_spans * 2 : 64;
        void *q = realloc(j->spans, cap * sizeof *j->spans);
        if (!q)
            return -1;
        j->spans = q;
        j->cap_spans = cap;
    }
    j->spans[j->n_spans++] = (struct frame_span){ p, end, thread };
    return 0;
}

#define STEP(st) (sqlite3_step(st) == SQLITE_DONE ? (sqlite3_reset(st), 0) : (sqlite3_reset(st), -1))

/* Adds the frames of f<number>.<name>, unless its chunk number is below
 * min_seq (stored already). Returns 1 when the file was there, 0 when not (or
 * not a chunk, or skipped), -1 on a database error. */
static int import_chunk(struct job *j, const char *dir, uint32_t number, const char *name, uint32_t thread,
                        uint64_t min_seq)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/f%u.%s", dir, number, name);
    struct mapping c = { 0 };
    if (map_file(path, &c) != 0 || c.len < sizeof(struct piano_chunk_hdr)) {
        unmap(&c);
        return 0;
    }
    keep_map(j, c);
    const struct piano_chunk_hdr *h = (const void *)c.p;
    size_t used = __atomic_load_n(&h->used, __ATOMIC_ACQUIRE), at = sizeof *h;
    if (h->magic != PIANO_SPOOL_MAGIC || used > c.len - sizeof *h || h->seq < min_seq)
        return 0;
    /* The records up to the first malformed one (none, unless the file was
     * damaged: a record is published only once whole). */
    const unsigned char *p = c.p + at, *end = c.p + at + used;
    uint64_t base = 0;
    while (p < end) {
        struct piano_frame_view f;
        const unsigned char *next = piano_frame_read(p, end, base, &f);
        if (!next)
            break;
        base = f.start + f.total;
        if (base > j->end_tick)
            j->end_tick = base;
        p = next;
    }
    if (p > c.p + at && add_span(j, c.p + at, p, thread))
        return -1;
    return 1;
}

/* Adds thread file t<N> of the spool: its contexts, per-function stats,
 * calls in flight and frame chunks. */
static int import_thread(struct job *j, const char *dir, uint32_t number, sqlite3_int64 run,
                         const struct piano_spool_run *hdr, double npt, char *err, size_t errn)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/t%u", dir, number);
    struct mapping m = { 0 };
    if (map_file(path, &m) != 0 || m.len < PIANO_THREAD_FILE_SIZE) {
        unmap(&m);
        return 0;   /* a thread that never got its state file: nothing recorded */
    }
    keep_map(j, m);
    const struct piano_thread *ts = (const void *)m.p;
    if (ts->magic != PIANO_SPOOL_MAGIC || ts->version != PIANO_SPOOL_VERSION) {
        snprintf(err, errn, "%s is not a piano thread record", path);
        return -1;
    }
    const struct piano_node *nodes = (const void *)(m.p + PIANO_OFF_NODES);
    const struct piano_fnrec *fns = (const void *)(m.p + PIANO_OFF_FNS);
    const uint64_t *pages = (const void *)(m.p + PIANO_OFF_PAGES);
    const struct piano_slot *stack = (const void *)(m.p + PIANO_OFF_STACK);
    char name[sizeof ts->name + 1];
    memcpy(name, ts->name, sizeof ts->name);
    name[sizeof ts->name] = 0;

    sqlite3_bind_int64(j->thread_st, 1, run);
    sqlite3_bind_int64(j->thread_st, 2, ts->thread);
    sqlite3_bind_int64(j->thread_st, 3, ts->tid);
    sqlite3_bind_text(j->thread_st, 4, name, -1, SQLITE_TRANSIENT);
    if (STEP(j->thread_st))
        return -1;

    /* Zero what the previous thread used (calloc zeroed the rest): all of it
     * is 8 MiB, most of the time a short run took to store. */
    memset(j->agg, 0, j->agg_used * sizeof *j->agg);
    uint32_t n_nodes = ts->n_nodes < PIANO_NODE_CAP ? ts->n_nodes : PIANO_NODE_CAP;
    /* A context's inclusive time is its self time plus its children's. Summed
     * here rather than on the per-call path, and right even for the context
     * shared by calls deeper than PIANO_CTX_DEPTH, which nests in itself. A
     * child is always made after its parent, so one backward pass does it. */
    for (uint32_t i = 0; i < n_nodes; i++)
        j->node_total[i] = nodes[i].self;
    for (uint32_t i = n_nodes; i-- > 1;)
        if (nodes[i].parent < i)
            j->node_total[nodes[i].parent] += j->node_total[i];
    uint32_t max_fn = 0;
    for (uint32_t pass = 0; pass < 2; pass++) {
        uint32_t lo = pass ? PIANO_NODE_CAP : 1, hi = pass ? PIANO_NODES_TOTAL : n_nodes;
        if (pass && !ts->contexts_truncated)
            break;
        for (uint32_t i = lo; i < hi; i++) {
            const struct piano_node *n = &nodes[i];
            if (!n->fn || n->fn >= PIANO_FN_CAP)
                continue;
            struct agg *a = &j->agg[n->fn];
            a->calls += n->calls, a->self += n->self, a->allocs += n->allocs;
            a->alloc_bytes += n->alloc_bytes, a->frees += n->frees, a->free_bytes += n->free_bytes;
            if (n->fn > max_fn)
                max_fn = n->fn;
            if (!pass && n->parent && n->parent < n_nodes && nodes[n->parent].fn < PIANO_FN_CAP)
                j->agg[nodes[n->parent].fn].child_calls += n->calls;
            /* A function's inclusive time: its contexts with no ancestor of
             * the same function (a recursive call counts once, outermost).
             * Parents precede their children, so the walk up ends. */
            if (pass) {
                a->total += n->self;   /* an orphan context: no tree above it */
            } else {
                uint32_t up = n->parent;
                while (up && up < i && nodes[up].fn != n->fn)
                    up = nodes[up].parent;
                if (!up || up >= i)
                    a->total += j->node_total[i];
            }
            sqlite3_stmt *st = j->ctx_st;
            sqlite3_bind_int64(st, 1, run);
            sqlite3_bind_int64(st, 2, ts->thread);
            sqlite3_bind_int64(st, 3, i);
            if (n->parent && !pass && n->parent < n_nodes)
                sqlite3_bind_int64(st, 4, n->parent);
            else
                sqlite3_bind_null(st, 4);
            sqlite3_bind_int64(st, 5, n->fn);
            sqlite3_bind_int64(st, 6, (sqlite3_int64)n->calls);
            sqlite3_bind_int64(st, 7, to_ns(n->self, npt));
            sqlite3_bind_int64(st, 8, to_ns(pass ? n->self : j->node_total[i], npt));
            sqlite3_bind_int64(st, 9, (sqlite3_int64)n->allocs);
            sqlite3_bind_int64(st, 10, (sqlite3_int64)n->alloc_bytes);
            sqlite3_bind_int64(st, 11, (sqlite3_int64)n->frees);
            sqlite3_bind_int64(st, 12, (sqlite3_int64)n->free_bytes);
            if (STEP(st))
                return -1;
        }
    }
    j->agg_used = (size_t)max_fn + 1;   /* parents' functions are among the nodes' */
    uint32_t n_pages = ts->n_pages < PIANO_PAGE_CAP ? ts->n_pages : PIANO_PAGE_CAP;
    for (uint32_t fn = 1; fn <= max_fn; fn++) {
        const struct agg *a = &j->agg[fn];
        if (!a->calls && !a->allocs && !a->frees)
            continue;
        sqlite3_stmt *st = j->stats_st;
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, ts->thread);
        sqlite3_bind_int64(st, 3, fn);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)a->calls);
        sqlite3_bind_int64(st, 5, to_ns(a->self, npt));
        sqlite3_bind_int64(st, 6, to_ns(a->total, npt));
        sqlite3_bind_int64(st, 7, (sqlite3_int64)a->allocs);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)a->alloc_bytes);
        sqlite3_bind_int64(st, 9, (sqlite3_int64)a->frees);
        sqlite3_bind_int64(st, 10, (sqlite3_int64)a->free_bytes);
        for (int k = 0; k < 2; k++) {   /* 0: self, 1: total, interleaved in each page */
            size_t len = 0;
            /* The thread's latest call is not in the pages yet (runtime.c). */
            unsigned pend = fn == ts->pend_fn
                                ? piano_hist_bucket(k ? ts->pend_total : ts->pend_self)
                                : PIANO_HIST_BUCKETS;
            for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++) {
                uint32_t p = fns[fn].page[o];
                int has_page = p && p < n_pages;
                if (!has_page && pend >> 6 != o)
                    continue;
                uint64_t counts[64];
                for (unsigned b = 0; b < 64; b++)
                    counts[b] = has_page ? pages[(size_t)p * PIANO_PAGE_WORDS + b * 2 + (unsigned)k] : 0;
                if (pend >> 6 == o)
                    counts[pend & 63]++;
                len += piano_hist_encode(counts, o * 64, 64, j->blob + len);
            }
            sqlite3_bind_blob(st, 11 + k, j->blob, (int)len, SQLITE_TRANSIENT);
        }
        sqlite3_bind_int64(st, 13, (sqlite3_int64)a->child_calls);
        if (STEP(st))
            return -1;
    }
    uint64_t last = ts->last_tick;
    uint32_t depth = ts->depth < PIANO_STACK_CAP ? ts->depth : PIANO_STACK_CAP;
    /* The calls in flight started before the end, and so did the last call to
     * end: its slot, just above the top, keeps its end tick (runtime.c). */
    for (uint32_t i = 1; i <= depth + (depth < PIANO_STACK_CAP); i++)
        if (stack[i].t0 > last)
            last = stack[i].t0;
    if (last > j->end_tick)
        j->end_tick = last;
    j->frames_dropped += ts->frames_dropped;
    j->samples_dropped += ts->hist_dropped;
    j->calls_untimed += ts->deep_calls;

    /* The stored chunks (one more than the state says: a crash may come
     * between storing a chunk and counting it), then the buffer, unless its
     * chunk is stored already (runtime.c, buffer_flush). */
    int stored_last = 0;
    for (uint32_t k = 0; k <= ts->chunks; k++) {
        char name[16];
        snprintf(name, sizeof name, "%u", k);
        stored_last = import_chunk(j, dir, number, name, ts->thread, 0);
        if (stored_last < 0)
            return -1;
    }
    if (import_chunk(j, dir, number, "w", ts->thread, ts->chunks + (uint64_t)stored_last) < 0)
        return -1;
    /* The end of the run bounds what is still in flight. */
    uint64_t end = hdr->status == 1 && hdr->end_tick ? hdr->end_tick : j->end_tick;
    for (uint32_t i = 1; i <= depth; i++) {
        sqlite3_stmt *st = j->unf_st;
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, ts->thread);
        sqlite3_bind_int64(st, 3, i);
        sqlite3_bind_int64(st, 4, stack[i].fn);
        sqlite3_bind_int64(st, 5, since(stack[i].t0, hdr->tick0, npt));
        sqlite3_bind_int64(st, 6, since(end, stack[i].t0, npt));
        if (STEP(st))
            return -1;
    }
    return 0;
}

static int import_functions(struct job *j, const char *dir, sqlite3_int64 run)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/fns", dir);
    struct mapping m = { 0 };
    if (map_file(path, &m) != 0)
        return 0;
    size_t at = 0;
    while (at + sizeof(struct piano_spool_fn) <= m.len) {
        struct piano_spool_fn r;
        memcpy(&r, m.p + at, sizeof r);
        size_t size = sizeof r + r.name_len + r.file_len;
        if (at + size > m.len || r.name_len > 4000 || r.file_len > 4000)
            break;
        const char *name = (const char *)m.p + at + sizeof r;
        sqlite3_bind_int64(j->fn_st, 1, run);
        sqlite3_bind_int64(j->fn_st, 2, r.id);
        sqlite3_bind_text(j->fn_st, 3, name, (int)r.name_len, SQLITE_TRANSIENT);
        sqlite3_bind_text(j->fn_st, 4, name + r.name_len, (int)r.file_len, SQLITE_TRANSIENT);
        sqlite3_bind_int64(j->fn_st, 5, r.line);
        if (STEP(j->fn_st)) {
            unmap(&m);
            return -1;
        }
        at += size;
    }
    unmap(&m);
    return 0;
}

/* Binds frame f (number seq in end order, of thread `thread`, in a span
 * ending at end) to the 10 parameters of st from col. Its fns blob is made at
 * j->blob + *at and bound without a copy (it stays there until the statement
 * has run); *at moves past it. */
static void bind_frame(struct job *j, sqlite3_stmt *st, int col, const struct piano_frame_view *f,
                       const unsigned char *end, uint32_t thread, uint64_t seq, sqlite3_int64 run,
                       uint64_t tick0, double npt, size_t *at)
{
    const unsigned char *p = f->fns;
    unsigned char *blob = j->blob + *at;
    size_t len = 0;
    uint32_t fn = 0;
    for (uint32_t k = 0; k < f->nfns; k++) {
        uint64_t ticks = 0;
        p = piano_frame_fn(p, end, &fn, &ticks);   /* checked by import_chunk */
        len += piano_fns_put(blob + len, fn, (uint64_t)to_ns(ticks, npt));
    }
    sqlite3_bind_int64(st, col, run);
    sqlite3_bind_int64(st, col + 1, (sqlite3_int64)seq);
    sqlite3_bind_int64(st, col + 2, thread);
    sqlite3_bind_int64(st, col + 3, since(f->start, tick0, npt));
    sqlite3_bind_int64(st, col + 4, to_ns(f->total, npt));
    sqlite3_bind_int64(st, col + 5, (sqlite3_int64)f->allocs);
    sqlite3_bind_int64(st, col + 6, (sqlite3_int64)f->alloc_bytes);
    sqlite3_bind_int64(st, col + 7, (sqlite3_int64)f->frees);
    sqlite3_bind_int64(st, col + 8, (sqlite3_int64)f->free_bytes);
    sqlite3_bind_blob(st, col + 9, blob, (int)len, SQLITE_STATIC);
    *at += len;
}

/* Frames go in FRAME_BATCH rows per statement: per-row statement overhead is
 * most of the cost of storing a run with many frames. */
#define FRAME_BATCH 64
/* j->blob's size: a batch's fns blobs, or one frame's (at most PIANO_FN_CAP
 * functions, PIANO_FNS_ENTRY_MAX bytes each), or one histogram's records. */
#define FRAME_BLOB_SIZE ((size_t)PIANO_CHUNK_SIZE)
#define FRAME_COLUMNS "run,seq,thread,start_ns,total_ns,allocs,alloc_bytes,frees,free_bytes,fns"

/* One thread's frames, read in order across its spans. */
struct frame_cursor {
    const struct frame_span *span, *last;   /* the current span; one past the thread's last */
    const unsigned char *p, *next;          /* the current record; the one after it */
    uint64_t base, end;                     /* the tick p's start is coded from; p's end */
    struct piano_frame_view f;
};

/* Reads the record at c->p, going on to the thread's next span at the end of
 * one. Returns 0 when the thread has no more frames. */
static int cursor_read(struct frame_cursor *c)
{
    while (c->p >= c->span->end) {
        if (++c->span == c->last)
            return 0;
        c->p = c->span->p;
        c->base = 0;   /* each span is one buffer's records: coded from tick 0 */
    }
    c->next = piano_frame_read(c->p, c->span->end, c->base, &c->f);   /* checked by import_chunk */
    c->end = c->f.start + c->f.total;
    return 1;
}

static int cursor_before(const struct frame_cursor *a, const struct frame_cursor *b)
{
    return a->end != b->end ? a->end < b->end : a->span->thread < b->span->thread;
}

static void heap_down(struct frame_cursor **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && cursor_before(h[l], h[m]))
            m = l;
        if (l + 1 < n && cursor_before(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        struct frame_cursor *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Inserts every frame, numbered in end order (ties: by thread), merging the
 * threads' frames, each already in end order, through a heap of cursors. */
static int insert_frames(struct job *j, sqlite3_int64 run, uint64_t tick0, double npt)
{
    if (!j->n_spans)
        return 0;
    struct frame_cursor *cur = calloc(j->n_spans, sizeof *cur);
    struct frame_cursor **heap = calloc(j->n_spans, sizeof *heap);
    sqlite3_stmt *batch = NULL;
    int rc = -1;
    if (!cur || !heap)
        goto out;
    size_t n = 0;
    for (size_t i = 0, k; i < j->n_spans; i = k) {   /* a thread's spans are adjacent */
        for (k = i + 1; k < j->n_spans && j->spans[k].thread == j->spans[i].thread; k++)
            ;
        struct frame_cursor *c = &cur[n];
        *c = (struct frame_cursor){ .span = &j->spans[i], .last = &j->spans[k], .p = j->spans[i].p };
        if (cursor_read(c))
            heap[n++] = c;
    }
    for (size_t i = n / 2; i-- > 0;)
        heap_down(heap, n, i);

    char sql[64 * 24 + 128];
    int len = snprintf(sql, sizeof sql, "INSERT INTO frames(" FRAME_COLUMNS ") VALUES");
    for (int k = 0; k < FRAME_BATCH; k++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, "%s(?,?,?,?,?,?,?,?,?,?)", k ? "," : "");
    if (sqlite3_prepare_v2(j->db, sql, -1, &batch, NULL) != SQLITE_OK)
        goto out;
    struct pending {
        struct piano_frame_view f;
        const unsigned char *end;
        uint32_t thread;
    } pend[FRAME_BATCH];
    uint64_t seq = 0;
    while (n) {
        int got = 0;
        size_t need = 0;
        for (; got < FRAME_BATCH && n; got++) {
            struct frame_cursor *c = heap[0];
            pend[got] = (struct pending){ c->f, c->span->end, c->span->thread };
            need += (size_t)PIANO_FNS_ENTRY_MAX * c->f.nfns;
            c->base = c->end;
            c->p = c->next;
            if (!cursor_read(c))
                heap[0] = heap[--n];
            heap_down(heap, n, 0);
        }
        if (got == FRAME_BATCH && need <= FRAME_BLOB_SIZE) {
            size_t at = 0;
            for (int k = 0; k < got; k++)
                bind_frame(j, batch, 1 + 10 * k, &pend[k].f, pend[k].end, pend[k].thread, ++seq, run, tick0,
                           npt, &at);
            if (STEP(batch))
                goto out;
        } else {   /* the last frames, or rows of many functions: one statement each */
            for (int k = 0; k < got; k++) {
                size_t at = 0;
                bind_frame(j, j->frame_st, 1, &pend[k].f, pend[k].end, pend[k].thread, ++seq, run, tick0, npt,
                           &at);
                if (STEP(j->frame_st))
                    goto out;
            }
        }
    }
    rc = 0;
out:
    sqlite3_finalize(batch);
    free(cur);
    free(heap);
    return rc;
}

static void job_free(struct job *j)
{
    sqlite3_finalize(j->fn_st);
    sqlite3_finalize(j->thread_st);
    sqlite3_finalize(j->ctx_st);
    sqlite3_finalize(j->stats_st);
    sqlite3_finalize(j->unf_st);
    sqlite3_finalize(j->frame_st);
    for (size_t i = 0; i < j->n_maps; i++)
        unmap(&j->maps[i]);
    free(j->maps);
    free(j->spans);
    free(j->agg);
    free(j->node_total);
    free(j->blob);
}

int piano_import_spool(sqlite3 *db, const char *dir, int complete, char *err, size_t errn)
{
    char path[4400];
    struct piano_spool_run run;
    snprintf(path, sizeof path, "%s/run", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, &run, sizeof run) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof run || run.magic != PIANO_SPOOL_MAGIC) {
        snprintf(err, errn, "%s is missing or not a piano run record", path);
        return -1;
    }
    if (run.version != PIANO_SPOOL_VERSION) {
        snprintf(err, errn, "written by another version of piano (spool version %u, this one reads %u); "
                 "store it with that version or remove the folder", run.version, PIANO_SPOOL_VERSION);
        return -1;
    }
    run.key[sizeof run.key - 1] = 0;
    run.parent_key[sizeof run.parent_key - 1] = 0;
    run.cmd[sizeof run.cmd - 1] = 0;
    complete = complete || run.status == 1;
    double npt = calibrate(&run, complete, dir);

    struct job j = { .db = db };
    j.agg = calloc(PIANO_FN_CAP, sizeof *j.agg);
    j.node_total = malloc(PIANO_NODE_CAP * sizeof *j.node_total);
    /* A blob holds at most one histogram's records or one frame's functions. */
    _Static_assert((uint64_t)PIANO_FN_CAP * PIANO_FNS_ENTRY_MAX <= PIANO_CHUNK_SIZE,
                   "a frame's functions fit the blob");
    j.blob = malloc(PIANO_CHUNK_SIZE > PIANO_HIST_BUCKETS * PIANO_HIST_RECORD ? PIANO_CHUNK_SIZE
                                                                               : PIANO_HIST_BUCKETS * PIANO_HIST_RECORD);
    uint32_t *threads = NULL;
    size_t n_threads = 0, cap_threads = 0;
    int rc = -1;
    if (!j.agg || !j.blob || !j.node_total) {
        snprintf(err, errn, "out of memory");
        goto out;
    }
    /* One big transaction: a page cache that holds it avoids reading pages
     * back, and WAL with synchronous=NORMAL never corrupts, only defers
     * durability to the next checkpoint. */
    sqlite3_exec(db, "PRAGMA cache_size=-16384; PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto sql_error;
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO runs(key, parent_key, pid, command, started_ns, duration_ns, status, "
                           "clock, ns_per_tick, overhead_ns) VALUES(?,?,?,?,?,0,?,?,?,?) ON CONFLICT(key) DO NOTHING",
                           -1, &ins, NULL) != SQLITE_OK)
        goto sql_error_rollback;
    sqlite3_bind_text(ins, 1, run.key, -1, SQLITE_STATIC);
    if (run.parent_key[0])
        sqlite3_bind_text(ins, 2, run.parent_key, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(ins, 2);
    sqlite3_bind_int64(ins, 3, run.pid);
    sqlite3_bind_text(ins, 4, run.cmd, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 5, (sqlite3_int64)run.start_real_ns);
    sqlite3_bind_text(ins, 6, complete ? "complete" : "recovered", -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 7, run.clock == PIANO_CLOCK_TSC ? "tsc" : "monotonic", -1, SQLITE_STATIC);
    sqlite3_bind_double(ins, 8, npt);
    sqlite3_bind_double(ins, 9, run.overhead_ticks > 0 && run.overhead_ticks < 1e6 ? run.overhead_ticks * npt : 0);
    int step = sqlite3_step(ins);
    sqlite3_finalize(ins);
    if (step != SQLITE_DONE)
        goto sql_error_rollback;
    if (sqlite3_changes(db) == 0) {   /* stored before */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = 0;
        goto out;
    }
    sqlite3_int64 run_id = sqlite3_last_insert_rowid(db);
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO functions(run,id,name,file,line) VALUES(?,?,?,?,?)", -1,
                           &j.fn_st, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO threads(run,thread,tid,name) VALUES(?,?,?,?)", -1, &j.thread_st,
                           NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO contexts(run,thread,id,parent,fn,calls,self_ns,total_ns,allocs,"
                           "alloc_bytes,frees,free_bytes) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &j.ctx_st, NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,"
                           "free_bytes,hist_self,hist_total,child_calls) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &j.stats_st, NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO unfinished(run,thread,depth,fn,start_ns,elapsed_ns) VALUES(?,?,?,?,?,?)",
                           -1, &j.unf_st, NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO frames(" FRAME_COLUMNS ") VALUES(?,?,?,?,?,?,?,?,?,?)",
                           -1, &j.frame_st, NULL))
        goto sql_error_rollback;
    if (import_functions(&j, dir, run_id))
        goto sql_error_rollback;

    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errn, "cannot read %s: %s", dir, strerror(errno));
        goto rollback;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        if (e->d_name[0] != 't')
            continue;
        unsigned long n = strtoul(e->d_name + 1, &end, 10);
        if (*end || end == e->d_name + 1)
            continue;
        if (n_threads == cap_threads) {
            cap_threads = cap_threads ? cap_threads * 2 : 16;
            uint32_t *p = realloc(threads, cap_threads * sizeof *threads);
            if (!p)
                break;
            threads = p;
        }
        threads[n_threads++] = (uint32_t)n;
    }
    closedir(d);
    qsort(threads, n_threads, sizeof *threads, by_number);
    j.end_tick = run.tick0;
    for (size_t i = 0; i < n_threads; i++) {
        err[0] = 0;
        if (import_thread(&j, dir, threads[i], run_id, &run, npt, err, errn)) {
            if (err[0])
                goto rollback;
            goto sql_error_rollback;
        }
    }
    if (insert_frames(&j, run_id, run.tick0, npt))
        goto sql_error_rollback;
    uint64_t end_tick = complete && run.end_tick ? run.end_tick : j.end_tick;
    sqlite3_stmt *upd = NULL;
    if (sqlite3_prepare_v2(db,
                           "UPDATE runs SET duration_ns=?, frames_dropped=?, samples_dropped=?, "
                           "calls_untimed=? WHERE id=?",
                           -1, &upd, NULL))
        goto sql_error_rollback;
    sqlite3_bind_int64(upd, 1, since(end_tick, run.tick0, npt));
    sqlite3_bind_int64(upd, 2, (sqlite3_int64)j.frames_dropped);
    sqlite3_bind_int64(upd, 3, (sqlite3_int64)j.samples_dropped);
    sqlite3_bind_int64(upd, 4, (sqlite3_int64)j.calls_untimed);
    sqlite3_bind_int64(upd, 5, run_id);
    step = sqlite3_step(upd);
    sqlite3_finalize(upd);
    if (step != SQLITE_DONE || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto sql_error_rollback;
    rc = 1;
    goto out;

sql_error_rollback:
    snprintf(err, errn, "%s", sqlite3_errmsg(db));
rollback:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    goto out;
sql_error:
    snprintf(err, errn, "%s", sqlite3_errmsg(db));
out:
    free(threads);
    job_free(&j);
    return rc;
}

int piano_import_recover(sqlite3 *db, const char *db_path, char *err, size_t errn)
{
    char root[4200];
    snprintf(root, sizeof root, "%s.spool", db_path);
    DIR *d = opendir(root);
    if (!d)
        return 0;
    int imported = 0, failed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;   /* '.', '..', and spools still being made */
        char dir[4400], lock[4500];
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root, e->d_name) >= sizeof dir)
            continue;   /* not a name piano makes */
        snprintf(lock, sizeof lock, "%s/lock", dir);
        int fd = open(lock, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);   /* its process is alive */
            continue;
        }
        char why[512];
        int r = piano_import_spool(db, dir, 0, why, sizeof why);
        if (r >= 0) {
            imported += r;
            piano_spool_remove(dir);
        } else {
            snprintf(err, errn, "cannot recover %s: %s", dir, why);
            failed = 1;
        }
        close(fd);
    }
    closedir(d);
    return failed ? -1 : imported;
}
