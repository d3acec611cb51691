/*
 * budget.c - the frame budget: which frame records a run keeps.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* PIANO_FRAMES=all|N|off (default PIANO_FRAMES_DEFAULT). Every completed frame
 * is counted and put in its thread's frame histogram, so the count and the
 * distribution (p50, p99, the spike threshold) are exact whatever is kept.
 * Records are kept for the run's first N frames (threads take leases of the
 * budget: one atomic add per lease, none per frame: a short run is kept
 * whole), then for the frames that stand out and for a sample:
 * - spike candidates: frames longer than 2x the thread's median and, from
 *   level L = 1, than its quantile 1 - 1%/2^(L-1) (p99 at L = 1), both read
 *   from its histogram every 4,096 frames. When the run's candidates reach N,
 *   L goes up (from 1, the candidates' rate halves: 2x the median alone marks
 *   15% of 1-us frames) and their count restarts at N/2; the import keeps
 *   those over the run's final threshold (store/import_frames.c), about N at
 *   most: the longest frames, not the first;
 * - frames whose number on their thread is a multiple of K, a power of two
 *   that doubles whenever the run's sample reaches N/4 records: the import
 *   keeps those of the final K, a uniform 1-in-K sample (spool.h PIANO_KEPT_*).
 * The default keeps a run of any length in at most about 2.25 N rows (18,000,
 * under a megabyte), so storing stays a small part of a long run of tiny frames. */
#define PIANO_FRAMES_DEFAULT 8000ull
#define FRAME_LEASE_MIN 16u
#define FRAME_LEASE_MAX 4096u
static uint64_t g_frames_budget = PIANO_FRAMES_DEFAULT;   /* UINT64_MAX: all; 0: off */
static uint64_t g_frames_leased;    /* budget given out (atomic) */
static uint64_t g_frames_sampled;   /* sample records at the current K, about (atomic) */
static uint64_t g_spikes_kept;      /* spike candidates at the current level, about (atomic) */
static uint32_t g_sample_shift;     /* log2 K (atomic) */
static uint32_t g_spike_level;      /* L (atomic) */

void frames_budget_init(void)
{
    const char *v = getenv("PIANO_FRAMES");
    if (!v || !*v)
        return;
    if (!strcmp(v, "all")) {
        g_frames_budget = UINT64_MAX;
        return;
    }
    if (!strcmp(v, "off")) {
        g_frames_budget = 0;
        return;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] >= '0' && v[0] <= '9' && !*end && !errno) {
        g_frames_budget = n;   /* 0: as off */
        return;
    }
    say("piano: PIANO_FRAMES='%s' is not all, off or a number; keeping the first %llu frames, spikes "
        "and a sample", v, PIANO_FRAMES_DEFAULT);
}

/* A forked child is a run of its own, with a budget of its own. */
void frames_budget_reset(struct piano_thread *ts)
{
    __atomic_store_n(&g_frames_leased, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_frames_sampled, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_spikes_kept, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_sample_shift, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_spike_level, 0, __ATOMIC_RELAXED);
    ts->spike_level = 0;
    ts->frames_all = ts->spike_ticks = ts->spikes_unkept = ts->chunk_last_n = 0;
    ts->keep_left = ts->lease = ts->sample_shift = 0;
    memset(ts->frame_pages, 0, sizeof ts->frame_pages);
}

/* The thread's spike threshold: the larger of 2x the median of its frames so
 * far and (level >= 1) their quantile 1 - 1%/2^(level-1), from its histogram.
 * Not the quantile at level 0: a run's first frames are often its slowest
 * (cold caches, page faults), and the p99 of a few thousand frames would be
 * theirs, over a real spike. */
static uint64_t frame_spike_ticks(const struct piano_thread *ts, uint32_t level)
{
    uint64_t n = 0, seen = 0, med = 0;
    int carried = (int)__atomic_load_n(&ts->hist_carried, __ATOMIC_ACQUIRE);
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++)
        if (ts->frame_pages[o])
            for (unsigned b = 0; b < PIANO_HIST_SUB; b++)
                n += piano_hist_word(ts, carried, (size_t)ts->frame_pages[o] * PIANO_PAGE_WORDS + b * 2 + 1);
    if (!n)
        return UINT64_MAX;
    uint64_t above = !level ? n : level < 40 ? n / (100ull << (level - 1)) : 0;   /* frames over the quantile */
    uint64_t median_rank = (n + 1) / 2, q_rank = n - above;
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++)
        if (ts->frame_pages[o])
            for (unsigned b = 0; b < PIANO_HIST_SUB; b++) {
                uint64_t c = piano_hist_word(ts, carried, (size_t)ts->frame_pages[o] * PIANO_PAGE_WORDS + b * 2 + 1);
                if (!c)
                    continue;
                seen += c;
                if (!med && seen >= median_rank)
                    med = 2 * piano_hist_value(o * PIANO_HIST_SUB + b);
                if (med && seen >= q_rank) {
                    uint64_t q = piano_hist_value(o * PIANO_HIST_SUB + b);
                    return q > med ? q : med;
                }
            }
    return med ? med : UINT64_MAX;
}

/* Whether to keep a record of the frame that just ended, numbered
 * ts->frames_all on its thread: 1 + PIANO_KEPT_*, or 0. Called when the
 * thread's lease of the budget is used up. */
__attribute__((noinline)) uint32_t frame_keep(struct piano_thread *ts, uint64_t total)
{
    uint64_t budget = g_frames_budget;
    if (!budget) {   /* off: frame_close asks again only every FRAME_SPIKE_REFRESH frames */
        ts->spike_ticks = UINT64_MAX;
        ts->sample_shift = 63;
        return 0;
    }
    if (__atomic_load_n(&g_frames_leased, __ATOMIC_RELAXED) < budget) {
        uint32_t want = ts->lease < FRAME_LEASE_MIN ? FRAME_LEASE_MIN : ts->lease;
        uint64_t old = __atomic_fetch_add(&g_frames_leased, want, __ATOMIC_RELAXED);
        if (old < budget) {
            uint64_t got = budget - old < want ? budget - old : want;
            ts->lease = want < FRAME_LEASE_MAX ? want * 2 : FRAME_LEASE_MAX;
            ts->keep_left = (uint32_t)got - 1;
            return 1 + PIANO_KEPT_BUDGET;
        }
    }
    uint64_t n = ts->frames_all;
    uint32_t level = __atomic_load_n(&g_spike_level, __ATOMIC_RELAXED);
    if (UNLIKELY(!ts->spike_ticks) || n % FRAME_SPIKE_REFRESH == 0 || level != ts->spike_level) {
        ts->spike_level = level;
        ts->spike_ticks = frame_spike_ticks(ts, level);
    }
    uint64_t quarter = budget / 4 ? budget / 4 : 1;
    if (total > ts->spike_ticks) {
        /* A candidate; past N of them at this level, the next level. */
        if (__atomic_add_fetch(&g_spikes_kept, 1, __ATOMIC_RELAXED) >= budget && level < 39) {
            uint32_t seen = level;
            if (__atomic_compare_exchange_n(&g_spike_level, &seen, level + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                __atomic_store_n(&g_spikes_kept, budget / 2, __ATOMIC_RELAXED);
        }
        return 1 + PIANO_KEPT_SPIKE;
    }
    uint32_t shift = __atomic_load_n(&g_sample_shift, __ATOMIC_RELAXED);
    if (shift > ts->sample_shift)
        ts->sample_shift = shift;
    if (n & ((1ull << shift) - 1))
        return 0;
    /* About half of the sample survives each doubling of K. */
    if (__atomic_add_fetch(&g_frames_sampled, 1, __ATOMIC_RELAXED) >= quarter && shift < 63) {
        uint32_t seen = shift;
        if (__atomic_compare_exchange_n(&g_sample_shift, &seen, shift + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            __atomic_store_n(&g_frames_sampled, quarter / 2, __ATOMIC_RELAXED);
    }
    return 1 + PIANO_KEPT_SAMPLE;
}
