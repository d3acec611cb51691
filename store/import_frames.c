/*
 * import_frames.c - phase 2 of the import: the frames of every thread,
 * merged into one sequence in end order and stored in blocks
 * (frame_blocks, store/frames_blob.h).
 */
#include "fns_blob.h"
#include "frames_blob.h"
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>

/* Appends frame f (number seq in end order, of thread `thread`, in a span
 * ending at end) to block w. Its fns blob is made at j->blob first. */
static void put_frame(struct job *j, piano_frames_writer *w, const struct piano_frame_view *f,
                      const unsigned char *end, uint32_t thread, uint64_t seq)
{
    const unsigned char *p = f->fns;
    size_t len = 0;
    uint32_t fn = 0;
    for (uint32_t k = 0; k < f->nfns; k++) {
        uint64_t ticks = 0;
        if (!(p = piano_frame_fn(p, end, &fn, &ticks)))
            break;   /* checked when found: the bytes changed since (not piano's) */
        len += piano_fns_put(j->blob + len, fn, (uint64_t)to_ns(ticks, j->npt));
        use_fn(j, fn);
    }
    /* Both ends rounded alike: a frame ending at the end of the run ends within it. */
    int64_t start = since(f->start, j->run->tick0, j->npt), stop = since(f->start + f->total, j->run->tick0, j->npt);
    int64_t total = stop > start ? stop - start : 0;
    piano_frame_row row = {
        .seq = count64(seq), .thread = thread, .start_ns = start, .total_ns = total,
        .allocs = count64(f->allocs), .alloc_bytes = count64(f->alloc_bytes),
        .frees = count64(f->frees), .free_bytes = count64(f->free_bytes),
        .thread_seq = count64(f->n), .has_thread_seq = 1,
        .spike = (double)total > j->spike_ns,
        .fns = j->blob, .fns_len = len,
    };
    if (thread < j->n_cpu_threads && j->cpu_threads[thread]) {
        int64_t off = f->off_ns < (uint64_t)total ? (int64_t)f->off_ns : total;
        row.cpu_ns = total - off;
        row.has_cpu = 1;
    }
    piano_frames_put(w, &row);
}

/* A batch of kept frames taken off the heap at a time. */
#define FRAME_BATCH 64

/* One thread's frames, read in order across its spans. */
struct frame_cursor {
    const struct frame_span *span, *last;   /* the current span; one past the thread's last */
    const unsigned char *p, *next;          /* the current record; the one after it */
    uint64_t base, end;                     /* the tick p's start is coded from; p's end */
    uint64_t base_n;                        /* the frame number p's is coded from */
    struct piano_frame_view f;
};

/* Reads the record at c->p, going on to the thread's next span at the end of
 * one (or at a record that no longer reads: a chunk file is mapped, and
 * something other than piano may have changed it since it was checked).
 * Returns 0 when the thread has no more frames. */
static int cursor_read(struct frame_cursor *c)
{
    for (;;) {
        if (c->p < c->span->end && (c->next = piano_frame_read(c->p, c->span->end, c->base, c->base_n, &c->f))) {
            c->end = c->f.start + c->f.total;
            return 1;
        }
        if (++c->span == c->last)
            return 0;
        c->p = c->span->p;
        c->base = 0;   /* each span is one buffer's records: coded from tick 0 */
        c->base_n = 0;
    }
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

/* Whether the import keeps record f: a sample record only when its number
 * is a multiple of the final K (the sample is then a uniform 1 in K); a spike
 * candidate when it is longer than the run's final threshold (or is in the
 * sample: its number a multiple of K). */
static int frame_kept(const struct job *j, const struct piano_frame_view *f)
{
    if (f->kept == PIANO_KEPT_BUDGET)
        return 1;
    return (f->n & ((1ull << j->sample_shift) - 1)) == 0 ||
           (f->kept == PIANO_KEPT_SPIKE && f->total > j->spike_keep_ticks);
}

/* The threshold in ticks over which a spike candidate (rt/budget.c) is kept:
 * the larger of 2x the median of the run's frames (the spike mark), their
 * quantile 1 - 1%/2^(L-1) at the run's final spike level L (p99 at levels 0
 * and 1: the runtime raised L as its candidates passed the budget N, so about
 * N frames at most are over it), and a floor far above the clock's resolution: 100 times the
 * measured cost of an instrumented call and at least 1 us, under which a
 * frame's length is mostly the clock's and piano's own. */
static uint64_t spike_keep_ticks(const struct job *j)
{
    const piano_hist *h = j->frame_hist;
    if (!h->total)
        return UINT64_MAX;
    uint32_t level = j->spike_level ? j->spike_level - 1 : 0;
    uint64_t above = level < 40 ? h->total / (100ull << level) : 0;
    uint64_t t = 2 * piano_hist_quantile(h, 0.5), seen = 0;
    for (unsigned b = 0; b < PIANO_HIST_BUCKETS; b++)
        if ((seen += h->count[b]) >= h->total - above) {
            if (piano_hist_value(b) > t)
                t = piano_hist_value(b);
            break;
        }
    double oh = j->run->overhead_ticks > 0 && j->run->overhead_ticks < 1e6 ? j->run->overhead_ticks : 0;
    double floor = j->npt > 0 ? 1000.0 / j->npt : 0;   /* 1 us in ticks */
    if (100 * oh > floor)
        floor = 100 * oh;
    return floor > (double)t ? (uint64_t)floor : t;
}

/* A kept frame waiting for its batch. */
struct pending {
    struct piano_frame_view f;
    const unsigned char *end;
    uint32_t thread;
};

/* Opens a cursor on each thread's first frame (cur, one per span at most)
 * and makes heap of them. Returns how many threads have frames. */
static size_t start_cursors(const struct job *j, struct frame_cursor *cur, struct frame_cursor **heap)
{
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
    return n;
}

/* Takes the next FRAME_BATCH kept frames (fewer at the end) off the heap of
 * *n cursors into pend. Returns how many. */
static int next_batch(const struct job *j, struct frame_cursor **heap, size_t *n, struct pending *pend)
{
    int got = 0;
    while (got < FRAME_BATCH && *n) {
        struct frame_cursor *c = heap[0];
        if (frame_kept(j, &c->f)) {
            pend[got++] = (struct pending){ c->f, c->span->end, c->span->thread };
        }
        c->base = c->end;
        c->base_n = c->f.n;
        c->p = c->next;
        if (!cursor_read(c))
            heap[0] = heap[--*n];
        heap_down(heap, *n, 0);
    }
    return got;
}

/* Inserts every frame, numbered in end order (ties: by thread), merging the
 * threads' frames, each already in end order, through a heap of cursors.
 * dry: counts them instead (into j->frames_kept), for a run stored without its frames. */
int import_frames(struct job *j, int dry)
{
    if (!j->n_spans)
        return 0;
    struct frame_cursor *cur = calloc(j->n_spans, sizeof *cur);
    struct frame_cursor **heap = calloc(j->n_spans, sizeof *heap);
    sqlite3_stmt *ins = NULL;
    piano_frames_writer w = {0};
    piano_frames_begin(&w);
    int rc = -1;
    if (!cur || !heap ||
        (!dry && sqlite3_prepare_v2(j->db, PIANO_FRAMES_INSERT, -1, &ins, NULL)))
        goto out;
    /* Which threads measured CPU time (their frames' cpu_ns; NULL otherwise). */
    uint32_t max_thread = 0;
    for (size_t i = 0; i < j->n_threads; i++)
        if (j->threads[i].has_hdr && j->threads[i].number >= max_thread)
            max_thread = j->threads[i].number + 1;
    free(j->cpu_threads);
    j->cpu_threads = calloc(max_thread ? max_thread : 1, 1);
    if (!j->cpu_threads)
        goto out;
    j->n_cpu_threads = max_thread;
    for (size_t i = 0; i < j->n_threads; i++)
        if (j->threads[i].has_hdr)
            j->cpu_threads[j->threads[i].number] = j->run->cpu_mode != PIANO_CPU_OFF && j->threads[i].hdr.cpu_ok;
    j->spike_keep_ticks = spike_keep_ticks(j);
    size_t n = start_cursors(j, cur, heap);
    struct pending pend[FRAME_BATCH];
    uint64_t seq = 0;
    while (n) {
        int got = next_batch(j, heap, &n, pend);
        if (dry) {
            seq += (uint64_t)got;
            continue;
        }
        for (int k = 0; k < got; k++) {
            put_frame(j, &w, &pend[k].f, pend[k].end, pend[k].thread, ++seq);
            if (piano_frames_full(&w) && piano_frames_store(ins, j->run_id, &w) != SQLITE_OK)
                goto out;
        }
    }
    if (!dry && piano_frames_store(ins, j->run_id, &w) != SQLITE_OK)
        goto out;
    rc = 0;
    j->frames_kept = seq;
out:
    sqlite3_finalize(ins);
    free(w.buf);
    free(cur);
    free(heap);
    return rc;
}
