/*
 * push_profiles.c - piano-db push's profiles: a run's (or a window's) calling
 * contexts as one gzipped pprof per sample-type group (wall, cpu, memory,
 * spans), a profile past Pyroscope's samples limit folded first.
 */
#include "push_int.h"
#include <stdlib.h>
#include <string.h>

/* ---- pushing a run ---- */

/* The groups, each a profile of its own. Pyroscope names a pprof's series
 * after its sample types (any "wall": wall; "cpu": process_cpu; alloc_* or
 * inuse_*: memory), so each group shows as the profile type Go programs
 * have: wall, process_cpu:cpu:nanoseconds:cpu:nanoseconds, and memory with
 * Go's heap profile's four types (its period type space/bytes). Heap in use
 * rides in the memory group, not a group of its own: its series would be
 * memory:inuse_* either way, and one profile keeps a run's allocations and
 * the heap they left in use together (sent, or kept, as one). */
/* A run with spans has a fourth profile, its spans' times as export's pprof
 * has them (tracing-prof's wall, wall_busy, wall_idle, the span the root
 * frame). Its series is named "spans", not "wall": Pyroscope names a series
 * __name__:type:unit:period, and the wall group's self time already goes as
 * wall:wall:nanoseconds:wall:nanoseconds; the span's wall under the same name
 * would be added up with it. So: spans:wall, spans:wall_busy, spans:wall_idle
 * (each :nanoseconds:wall:nanoseconds). */
const char *const group_kind[NGROUPS] = {"wall", "cpu", "memory", "spans"};

/* Group g's shape for a tree: NULL when it did not measure g's figures (CPU
 * time without PIANO_CPU; in use without PIANO_HEAP: only alloc_*). */
static const pprof_shape *group_shape(int g, const ctree *t, int inuse_known, pprof_shape *s)
{
    /* the sample types of pprof.c's table, per group (the group's own shape: CPU time is asked below) */
    static pprof_value values[NGROUPS][PPROF_NSAMPLES];
    static const pprof_value span_values[] = {{"wall", "nanoseconds", PPROF_WALL},
                                              {"wall_busy", "nanoseconds", PPROF_WALL_BUSY},
                                              {"wall_idle", "nanoseconds", PPROF_WALL_IDLE}};
    if (g == GROUP_SPANS) {   /* only asked of a tree with its spans added */
        *s = (pprof_shape){span_values, 3, "wall", "nanoseconds", "wall", 1};
        return s;
    }
    int n = pprof_values(g, 1, inuse_known, values[g]);
    switch (g) {
    case GROUP_WALL: *s = (pprof_shape){values[g], n, "wall", "nanoseconds", "wall", 1}; break;
    case GROUP_CPU: *s = (pprof_shape){values[g], n, "cpu", "nanoseconds", "cpu", 1}; break;
    default: *s = (pprof_shape){values[g], n, "space", "bytes", "alloc_space", 1}; break;
    }
    return g == GROUP_CPU && !(t->cpu_known && t->n > 1) ? NULL : s;
}

/* Moves node i's own figures onto node to. */
static void fold_into(cnode *to, cnode *c)
{
    to->calls += c->calls, to->self_ns += c->self_ns, to->allocs += c->allocs, to->alloc_bytes += c->alloc_bytes;
    to->frees += c->frees, to->free_bytes += c->free_bytes, to->cpu_ns += c->cpu_ns;
    to->inuse_objects += c->inuse_objects, to->inuse_bytes += c->inuse_bytes;
    to->peak_inuse_bytes += c->peak_inuse_bytes;
    to->busy_ns += c->busy_ns, to->idle_ns += c->idle_ns;
    c->calls = c->self_ns = c->allocs = c->alloc_bytes = c->frees = c->free_bytes = c->cpu_ns = 0;
    c->inuse_objects = c->inuse_bytes = c->peak_inuse_bytes = 0;
    c->busy_ns = c->idle_ns = 0;
}

static const int64_t *fold_weight;   /* for by_weight: each node's weight */
static int by_weight(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (fold_weight[i] != fold_weight[j])
        return fold_weight[i] > fold_weight[j] ? -1 : 1;
    return i - j;   /* a parent before its children (they come after it) */
}

/* When shape s would make more than MAX_SAMPLES samples of t: t's lightest
 * calling contexts (by the weight of their subtree in s's first figure, then
 * calls) folded into their nearest kept caller, so a sample of that caller
 * holds them; every figure's totals are kept. Top-level functions are never
 * folded (nothing above them). Returns how many were folded; -1 when the
 * top-level functions alone are too many. */
static long fold_light(ctree *t, const pprof_shape *s)
{
    size_t samples = 0, roots = 0;
    for (size_t i = 1; i < t->n; i++) {
        int any = 0;
        for (int v = 0; v < s->nvalues && !any; v++)
            any = pprof_field(&t->v[i], s->values[v].field) != 0;
        samples += any;
        roots += t->v[i].parent == 0;
    }
    if (samples <= MAX_SAMPLES)
        return 0;
    if (roots > MAX_SAMPLES)
        return -1;
    int64_t *w = xmalloc(t->n * sizeof *w);
    for (size_t i = 0; i < t->n; i++) {
        const cnode *c = &t->v[i];
        int f = s->values[0].field;
        w[i] = f == PPROF_SELF_NS ? c->self_ns : f == PPROF_CPU_NS ? c->cpu_ns : f == PPROF_WALL ? pprof_field(c, f)
                                                                                                 : c->alloc_bytes;
        w[i] = w[i] * 4 + (c->calls > 0 || c->allocs > 0);   /* ties: what happened at all first */
    }
    for (size_t i = t->n - 1; i >= 1; i--)   /* subtree weights: children come after their parent */
        if (t->v[i].parent > 0)
            w[t->v[i].parent] += w[i];
    /* Kept: the top-level functions, then the heaviest contexts (a parent
     * always before its children: its weight is at least theirs, ties by
     * index), up to MAX_SAMPLES nodes in all. */
    char *keep = calloc(t->n, 1);
    int *order = xmalloc(t->n * sizeof *order);
    size_t m = 0, kept = 0;
    for (size_t i = 1; i < t->n; i++) {
        if (t->v[i].parent == 0)
            keep[i] = 1, kept++;
        else
            order[m++] = (int)i;
    }
    fold_weight = w;
    qsort(order, m, sizeof *order, by_weight);
    for (size_t k = 0; k < m && kept < MAX_SAMPLES; k++)
        if (keep[t->v[order[k]].parent])
            keep[order[k]] = 1, kept++;
    long folded = 0;
    for (size_t i = t->n - 1; i >= 1; i--) {
        if (keep[i])
            continue;
        int to = t->v[i].parent;
        while (!keep[to])
            to = t->v[to].parent;
        fold_into(&t->v[to], &t->v[i]);
        folded++;
    }
    free(keep);
    free(order);
    free(w);
    return folded;
}

/* The profiles of tree t (run r's, or a window as a run) per group: gz[g]
 * NULL where g was not measured or left no sample. Past MAX_SAMPLES, a copy
 * of t with its lightest contexts folded (said on stdout). */
void build_group(const ctree *t, const run_info *r, int inuse_known, int g, unsigned char *gz[NGROUPS],
                        size_t len[NGROUPS])
{
    pprof_shape s;
    gz[g] = NULL;
    if (!group_shape(g, t, inuse_known, &s))
        return;
    ctree f = *t;
    f.v = xmalloc(t->n * sizeof *f.v);
    memcpy(f.v, t->v, t->n * sizeof *f.v);
    long folded = fold_light(&f, &s);
    if (folded < 0)
        fprintf(stderr, "piano-db: push: run %lld's %s profile has more than %d top-level functions "
                        "(Pyroscope takes up to %d samples a profile): not sent\n",
                (long long)r->id, group_kind[g], MAX_SAMPLES, MAX_SAMPLES);
    else
        gz[g] = pprof_build(&f, r, &s, &len[g]);
    if (folded > 0)
        printf("run %lld's %s profile: its %ld lightest calling contexts folded into their callers "
               "(Pyroscope takes up to %d samples a profile; totals kept)\n",
               (long long)r->id, group_kind[g], folded, MAX_SAMPLES);
    free(f.v);
}

/* The groups of functions' figures (not spans: gz[GROUP_SPANS] NULL). */
void build_groups(const ctree *t, const run_info *r, int inuse_known, unsigned char *gz[NGROUPS],
                         size_t len[NGROUPS])
{
    for (int g = 0; g < NGROUPS; g++)
        if (g == GROUP_SPANS)
            gz[g] = NULL;
        else
            build_group(t, r, inuse_known, g, gz, len);
}
