/*
 * ctxtree.c - a run's calling contexts merged across threads into one tree
 * keyed by function paths, for flamegraph and export.
 *
 * The contexts table holds one tree per thread (parent ids; a child is always
 * stored after its parent, with a larger id). Contexts past the runtime's cap
 * are stored without a parent: they become children of the root here. Two
 * function ids with the same (name, file, line) are one key, as in report.
 * Figures are the stored ones (no overhead correction), so the folded and
 * pprof exports add up to exactly what the table holds.
 */
#include "piano_db.h"
#include "span_spool.h"
#include <stdlib.h>
#include <string.h>

static size_t hslot(const ctree *t, int parent, int key)
{
    uint64_t h = ((uint64_t)(uint32_t)parent * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(uint32_t)key * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 29;
    return (size_t)(h & (t->hcap - 1));
}

int ctree_child(const ctree *t, int parent, int key)
{
    for (size_t s = hslot(t, parent, key);; s = (s + 1) & (t->hcap - 1)) {
        int64_t n = t->hash[s];
        if (n < 0)
            return -1;
        if (t->v[n].parent == parent && t->v[n].key == key)
            return (int)n;
    }
}

static void hput(ctree *t, int node)
{
    size_t s = hslot(t, t->v[node].parent, t->v[node].key);
    while (t->hash[s] >= 0)
        s = (s + 1) & (t->hcap - 1);
    t->hash[s] = node;
}

static int add_node(ctree *t, int parent, int key)
{
    int c = ctree_child(t, parent, key);
    if (c >= 0)
        return c;
    if (t->n == t->cap) {
        t->cap *= 2;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    if (2 * (t->n + 1) > t->hcap) {
        free(t->hash);
        t->hcap *= 2;
        t->hash = xmalloc(t->hcap * sizeof *t->hash);
        for (size_t i = 0; i < t->hcap; i++)
            t->hash[i] = -1;
        for (size_t i = 1; i < t->n; i++)
            hput(t, (int)i);
    }
    int id = (int)t->n++;
    cnode *n = &t->v[id];
    memset(n, 0, sizeof *n);
    n->key = key;
    n->parent = parent;
    n->depth = t->v[parent].depth + 1;
    n->first_child = n->last_child = n->next_sibling = -1;
    /* Appended at the end of the sibling list: children keep their first-seen order. */
    cnode *pa = &t->v[parent];
    if (pa->last_child >= 0)
        t->v[pa->last_child].next_sibling = id;
    else
        pa->first_child = id;
    pa->last_child = id;
    hput(t, id);
    return id;
}

int ctree_add(ctree *t, int parent, int key)
{
    return add_node(t, parent, key);
}

/* t as an empty tree: its root only (keys untouched). */
static void ctree_init(ctree *t)
{
    t->cap = 256;
    t->v = xmalloc(t->cap * sizeof *t->v);
    t->hcap = 512;
    t->hash = xmalloc(t->hcap * sizeof *t->hash);
    for (size_t i = 0; i < t->hcap; i++)
        t->hash[i] = -1;
    t->n = 1;
    memset(&t->v[0], 0, sizeof t->v[0]);
    t->v[0].key = -1;
    t->v[0].parent = -1;
    t->v[0].first_child = t->v[0].last_child = t->v[0].next_sibling = -1;
}

/* cnode's field of each CTX metric (spool/metrics.h), as an offset + 1 (0:
 * not a CTX metric, no field). */
static size_t cnode_off[PIANO_M_N];
static void cnode_offsets(void)
{
#define CN_OFF(id, unit, when, where, ...) PIANO_IF(WHERE, where, cnode_off[PIANO_M_##id] = offsetof(cnode, id) + 1;)
    PIANO_METRICS(CN_OFF)
#undef CN_OFF
}

/* Adds o's metric figures into c's. */
static void cnode_add(cnode *c, const cnode *o)
{
    for (int m = 0; m < PIANO_M_N; m++)
        if (cnode_off[m])
            *(int64_t *)(void *)((char *)c + cnode_off[m] - 1) += *(const int64_t *)(const void *)((const char *)o + cnode_off[m] - 1);
}

void ctree_load(pdb *p, int64_t run, long thread, ctree *t)
{
    memset(t, 0, sizeof *t);
    fkeys_load(p, run, &t->keys);
    ctree_init(t);
    cnode_offsets();
    t->cpu_known = p->has_cpu;
    /* The CTX metrics' columns, in the list's order: a CPU one NULL in a
     * database without them, a heap one 0 when not tracked. */
    char sql[2048];
    int col[PIANO_M_N], ncol = 0, cpu_col = -1;
    size_t k = (size_t)snprintf(sql, sizeof sql, "SELECT thread, id, parent, fn");
    for (int m = 0; m < PIANO_M_N; m++) {
        if (!cnode_off[m])
            continue;
        const char *id = pdb_metrics[m].id;
        enum piano_metric_when w = pdb_metrics[m].when;
        if (m == PIANO_M_cpu_ns)
            cpu_col = 4 + ncol;
        col[ncol++] = m;
        if (w == PIANO_WHEN_CPU)
            k += (size_t)snprintf(sql + k, sizeof sql - k, ", %s", t->cpu_known ? id : "NULL");
        else if (w == PIANO_WHEN_HEAP)
            k += (size_t)(p->has_inuse ? snprintf(sql + k, sizeof sql - k, ", coalesce(%s, 0)", id)
                                       : snprintf(sql + k, sizeof sql - k, ", 0"));
        else
            k += (size_t)snprintf(sql + k, sizeof sql - k, ", %s", id);
    }
    snprintf(sql + k, sizeof sql - k, " FROM contexts WHERE run = ?1 AND (?2 < 0 OR thread = ?2) ORDER BY thread, id");
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, thread);
    /* Per thread: context id -> merged node, in id order (binary search). */
    int64_t *ids = NULL;
    int *nodes = NULL;
    size_t nids = 0, cap = 0;
    int64_t cur_thread = -1;
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t th = sqlite3_column_int64(st, 0), id = sqlite3_column_int64(st, 1);
        if (th != cur_thread) {
            cur_thread = th;
            nids = 0;
        }
        int parent = 0;
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
            int64_t pid = sqlite3_column_int64(st, 2);
            size_t lo = 0, hi = nids;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (ids[mid] < pid)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < nids && ids[lo] == pid && pid < id)
                parent = nodes[lo];
        }
        int key = fkeys_find(&t->keys, sqlite3_column_int64(st, 3));
        int n = add_node(t, parent, key);
        cnode *c = &t->v[n];
        for (int i = 0; i < ncol; i++)
            *(int64_t *)(void *)((char *)c + cnode_off[col[i]] - 1) += sqlite3_column_int64(st, 4 + i);
        t->cpu_known &= sqlite3_column_type(st, cpu_col) != SQLITE_NULL;
        if (nids == cap) {
            cap = cap ? cap * 2 : 1024;
            ids = xrealloc(ids, cap * sizeof *ids);
            nodes = xrealloc(nodes, cap * sizeof *nodes);
        }
        /* Ids come ascending within a thread. */
        ids[nids] = id;
        nodes[nids++] = n;
    }
    sqlite3_finalize(st);
    free(ids);
    free(nodes);
    cnode *root = &t->v[0];
    for (int c = root->first_child; c >= 0; c = t->v[c].next_sibling)
        root->total_ns += t->v[c].total_ns;
}

void ctree_use_metric(ctree *t, const char *metric, int64_t run)
{
    if (!metric || !strcmp(metric, "wall"))
        return;
    int cpu = !strcmp(metric, "cpu");
    if (!cpu && strcmp(metric, "offcpu"))
        pdb_usage_die("unknown metric '%s' (" PDB_METRICS ")", metric);
    if (!t->cpu_known && t->n > 1)
    {
        if (run < 0)   /* a set of runs */
            pdb_die("a run of the set has no CPU time (recorded without PIANO_CPU=1, or perf_event_open was refused)");
        pdb_die("run %lld has no CPU time (recorded without PIANO_CPU=1, or perf_event_open was refused)",
                (long long)run);
    }
    for (size_t i = 1; i < t->n; i++) {
        cnode *c = &t->v[i];
        int64_t off = c->self_ns > c->cpu_ns ? c->self_ns - c->cpu_ns : 0;
        c->self_ns = cpu ? c->cpu_ns : off;
    }
    /* Inclusive from the new self figures: children come after their parent. */
    for (size_t i = 0; i < t->n; i++)
        t->v[i].total_ns = i ? t->v[i].self_ns : 0;
    for (size_t i = t->n; i-- > 1;)
        t->v[t->v[i].parent].total_ns += t->v[i].total_ns;
}

void ctree_free(ctree *t)
{
    fkeys_free(&t->keys);
    free(t->v);
    free(t->hash);
    memset(t, 0, sizeof *t);
}

char *ctree_path(const ctree *t, int node, const char *sep)
{
    size_t len = 1, seplen = strlen(sep);
    for (int n = node; n > 0; n = t->v[n].parent)
        len += strlen(t->keys.labels[t->v[n].key]) + seplen;
    char *s = xmalloc(len);
    size_t end = len - 1;
    s[end] = 0;
    for (int n = node; n > 0; n = t->v[n].parent) {
        const char *l = t->keys.labels[t->v[n].key];
        size_t ll = strlen(l);
        end -= ll;
        memcpy(s + end, l, ll);
        if (t->v[n].parent > 0) {
            end -= seplen;
            memcpy(s + end, sep, seplen);
        }
    }
    if (end)
        memmove(s, s + end, len - end);
    return s;
}

/* ---- --group template: instantiations of one template as one function ---- */

typedef struct {
    char *name;   /* name_group of the key's name */
    int old;      /* the key */
} gkey;

static int cmp_gkey(const void *x, const void *y)
{
    const gkey *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : a->old - b->old;
}

void ctree_group(ctree *t)
{
    cnode_offsets();
    fkeys *k = &t->keys;
    int nk = k->nkeys - 1;   /* the last key is "(unknown)": kept last */
    gkey *g = xmalloc((size_t)(nk > 0 ? nk : 1) * sizeof *g);
    for (int i = 0; i < nk; i++)
        g[i] = (gkey){name_group(k->names[i]), i};
    if (nk > 1)
        qsort(g, (size_t)nk, sizeof *g, cmp_gkey);
    /* New keys: one per (group name, file), in (name, file) order. */
    int *map = xmalloc((size_t)(nk + 1) * sizeof *map);
    char **names = xmalloc((size_t)(nk + 1) * sizeof *names), **files = xmalloc((size_t)(nk + 1) * sizeof *files);
    int64_t *lines = xmalloc((size_t)(nk + 1) * sizeof *lines);
    int n = 0;
    /* within one name, files in order: a pass per name run */
    for (int i = 0; i < nk;) {
        int j = i;
        while (j < nk && !strcmp(g[j].name, g[i].name))
            j++;
        for (int a = i; a < j; a++) {
            int found = -1;
            for (int b = n - 1; b >= 0 && !strcmp(names[b], g[i].name); b--)
                if (!strcmp(files[b], k->files[g[a].old]))
                    found = b;
            if (found < 0) {
                names[n] = xstrdup(g[i].name);
                files[n] = xstrdup(k->files[g[a].old]);
                lines[n] = k->lines[g[a].old];
                found = n++;
            }
            map[g[a].old] = found;
        }
        i = j;
    }
    map[nk] = n;   /* (unknown) */
    names[n] = xstrdup(k->names[nk]);
    files[n] = xstrdup(k->files[nk]);
    lines[n] = 0;
    n++;
    char **labels = fn_labels((const char *const *)names, (const char *const *)files, NULL, (size_t)n, 0);
    for (int i = 0; i < nk; i++)
        free(g[i].name);
    free(g);
    for (size_t i = 0; i < k->nids; i++)
        k->key_of[i] = map[k->key_of[i]];
    for (int i = 0; i < k->nkeys; i++) {
        free(k->names[i]);
        free(k->files[i]);
        free(k->labels[i]);
    }
    free(k->names);
    free(k->files);
    free(k->labels);
    free(k->lines);
    k->names = names;
    k->files = files;
    k->lines = lines;
    k->labels = labels;
    k->nkeys = n;
    /* The tree again, paths of the new keys: nodes of one path merge (children come after their parent). */
    ctree old = *t;
    t->cap = old.cap;
    t->v = xmalloc(t->cap * sizeof *t->v);
    t->hcap = 512;
    t->hash = xmalloc(t->hcap * sizeof *t->hash);
    for (size_t i = 0; i < t->hcap; i++)
        t->hash[i] = -1;
    t->n = 1;
    t->v[0] = old.v[0];
    t->v[0].first_child = t->v[0].last_child = t->v[0].next_sibling = -1;
    int *to = xmalloc(old.n * sizeof *to);
    to[0] = 0;
    for (size_t i = 1; i < old.n; i++) {
        const cnode *o = &old.v[i];
        int m = add_node(t, to[o->parent], map[o->key]);
        cnode *c = &t->v[m];
        cnode_add(c, o);
        to[i] = m;
    }
    free(to);
    free(map);
    free(old.v);
    free(old.hash);
}

/* ---- a set of runs: their trees merged ---- */

void ctree_empty(ctree *t)
{
    memset(t, 0, sizeof *t);
    ctree_init(t);
    t->cpu_known = 1;
}

void ctree_merge(ctree *into, const ctree *from, const int *keymap)
{
    cnode_offsets();
    int *to = xmalloc((from->n ? from->n : 1) * sizeof *to);
    to[0] = 0;
    for (size_t i = 1; i < from->n; i++) {
        const cnode *o = &from->v[i];
        int m = add_node(into, to[o->parent], keymap[o->key]);
        cnode *c = &into->v[m];
        cnode_add(c, o);
        to[i] = m;
    }
    free(to);
    into->cpu_known = into->cpu_known && (from->cpu_known || from->n <= 1);
    into->v[0].total_ns += from->v[0].total_ns;
}

/* Spans of a window: see piano_db.h. */
int ctree_add_window_spans(pdb *p, ctree *t, const run_info *r, const pdb_window *w)
{
    sqlite3_stmt *st = pdb_window_spans(p, r, w);
    int n = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 1) == SQLITE_NULL)
            continue;
        /* the window's tree is flat: key k's node is k + 1 (pdb_window_tree) */
        int node = fkeys_find(&t->keys, sqlite3_column_int64(st, 1)) + 1;
        if (node <= 0 || (size_t)node >= t->n)
            continue;
        int64_t wall = sqlite3_column_int64(st, 2 + PIANO_SPAN_F_wall), busy = sqlite3_column_int64(st, 2 + PIANO_SPAN_F_busy);
        if (busy > wall)
            busy = wall;
        t->v[node].busy_ns = sat_add(t->v[node].busy_ns, busy);
        t->v[node].idle_ns = sat_add(t->v[node].idle_ns, wall - busy);
        n++;
    }
    sqlite3_finalize(st);
    return n;
}

/* Spans (doc/spans.md): see piano_db.h. */
int ctree_add_spans(pdb *p, ctree *t, int64_t run)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT fn, wall_ns - busy_ns FROM spans WHERE run = ?1 AND count > 0 AND fn "
                                      "IS NOT NULL ORDER BY wall_ns DESC, name");
    sqlite3_bind_int64(st, 1, run);
    int n = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        int key = fkeys_find(&t->keys, sqlite3_column_int64(st, 0));
        int node = ctree_add(t, 0, key);
        int64_t idle = sqlite3_column_int64(st, 1);
        t->v[node].idle_ns = sat_add(t->v[node].idle_ns, idle > 0 ? idle : 0);
        n++;
    }
    sqlite3_finalize(st);
    if (!n)
        return 0;
    /* Children come after their parent: a span's frame marks its subtree. */
    unsigned char *in = xcalloc(t->n, 1);
    for (size_t i = 1; i < t->n; i++) {
        cnode *c = &t->v[i];
        const char *file = c->key >= 0 && c->key < t->keys.nkeys ? t->keys.files[c->key] : "";
        in[i] = in[c->parent] || !strcmp(file, "<span>");
        c->busy_ns = in[i] ? c->self_ns : 0;
    }
    free(in);
    return n;
}
