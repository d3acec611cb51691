/*
 * contexts_blob.c - a thread's calling contexts as one blob: the writer (the
 * import), the reader (piano-db, through the table-valued function
 * piano_contexts, and the TEMP view contexts over it, which piano-db and
 * `piano-db sql` make on their connection). The format is contexts_blob.h's.
 */
#include "contexts_blob.h"
#include "blob_table.h"
#include "byte_buf.h"
#include "fns_blob.h"   /* piano_varint_put / piano_varint_get */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int fields[] = {PIANO_CTX_FIELDS};
#define NF ((int)(sizeof fields / sizeof *fields))

#define PIANO_CTX_COUNT(id, unit, when, where, ...) PIANO_IF(WHERE, where, +1)
enum { N_CTX_METRICS = 0 PIANO_METRICS(PIANO_CTX_COUNT) };
_Static_assert(sizeof fields / sizeof *fields == N_CTX_METRICS,
               "a CTX metric is missing from PIANO_CTX_FIELDS (contexts_blob.h): add it at the end");
_Static_assert(sizeof fields / sizeof *fields < 32, "a blob's header holds at most 31 fields");

static const struct piano_metric_info info[] = {PIANO_METRIC_INFO};

/* ------------------------------------------------------------------ writing */

/* Room for more bytes after w->len: 0, or -1 when w->failed (byte_buf.h). */
static int grow(piano_ctx_writer *w, size_t more)
{
    return piano_byte_buf_grow(&w->buf, &w->cap, w->len + more, 4096, &w->failed);
}

/* ------------------------------------------------ ancestry (v2) */

static void tree_free(piano_ctx_tree *t)
{
    free(t->id);
    free(t->up);
    free(t->chain);
    memset(t, 0, sizeof *t);
}

static int tree_grow(int64_t **a, size_t *cap, size_t need, int64_t **b)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    int64_t *x = realloc(*a, c * sizeof *x);
    if (!x)
        return -1;
    *a = x;
    if (b) {
        int64_t *y = realloc(*b, c * sizeof *y);
        if (!y)
            return -1;
        *b = y;
    }
    *cap = c;
    return 0;
}

/* Index of context id in t, or -1. */
static int64_t tree_find(const piano_ctx_tree *t, int64_t id)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->id[lo] == id ? (int64_t)lo : -1;
}

/* The head's c for a context (id, parent) after the last one: >= 1, or 0. */
static uint64_t tree_code(const piano_ctx_tree *t, int64_t step, int64_t parent)
{
    if (step != 0)
        return 0;
    if (parent < 0)
        return t->depth + 1;
    for (size_t j = t->depth; j-- > 0;)
        if (t->id[t->chain[j]] == parent)
            return t->depth - j;
        else if (t->id[t->chain[j]] < parent)
            break;   /* (ids ascend from the root down) */
    return 0;
}

/* Adds context id (ascending) under the context of index pidx (-1: none in
 * the blob); its ancestry becomes the last one. keep: the chain's first keep
 * entries are its parent's ancestry (else rebuilt from pidx). 0, or -1 out of
 * memory. */
static int tree_add(piano_ctx_tree *t, int64_t id, int64_t pidx, size_t keep, int known)
{
    if (tree_grow(&t->id, &t->cap, t->n + 1, &t->up))
        return -1;
    size_t self = t->n++;
    t->id[self] = id;
    t->up[self] = pidx;
    if (!known) {   /* the parent's ancestry, from its parents */
        keep = 0;
        for (int64_t q = pidx; q >= 0; q = t->up[q])
            keep++;
        if (tree_grow(&t->chain, &t->chain_cap, keep + 1, NULL))
            return -1;
        size_t k = keep;
        for (int64_t q = pidx; q >= 0; q = t->up[q])
            t->chain[--k] = q;
    }
    if (tree_grow(&t->chain, &t->chain_cap, keep + 1, NULL))
        return -1;
    t->chain[keep] = (int64_t)self;
    t->depth = keep + 1;
    return 0;
}

void piano_ctx_writer_free(piano_ctx_writer *w)
{
    free(w->buf);
    tree_free(&w->tree);
    memset(w, 0, sizeof *w);
}

void piano_ctx_begin(piano_ctx_writer *w, int flags)
{
    w->len = 0;
    w->last_id = 0;
    w->last_fn = 0;
    w->failed = 0;
    w->tree.n = 0;
    w->tree.depth = 0;
    if (grow(w, 1) == 0)
        w->buf[w->len++] = (unsigned char)(flags | NF << 2 | PIANO_CTX_V2);
}

static void put(piano_ctx_writer *w, int64_t v)
{
    w->len += piano_varint_put(w->buf + w->len, v > 0 ? (uint64_t)v : 0);
}

void piano_ctx_put(piano_ctx_writer *w, int64_t id, int64_t parent, int64_t fn, const int64_t v[PIANO_M_N])
{
    if (grow(w, (size_t)(4 + NF) * 10))
        return;
    /* total_ns as its difference from self_ns, zigzag: 0 for a leaf */
    int64_t f[NF];
    for (int i = 0; i < NF; i++)
        f[i] = v[fields[i]] > 0 ? v[fields[i]] : 0;
    uint64_t d = (uint64_t)f[2] - (uint64_t)f[1];
    f[2] = (int64_t)(f[2] >= f[1] ? d << 1 : ((uint64_t)(f[1] - f[2]) << 1) - 1);
    int k = NF;
    while (k > 0 && f[k - 1] == 0)
        k--;
    piano_ctx_tree *t = &w->tree;
    /* (the first context's previous id is 0, as in v1) */
    uint64_t code = tree_code(t, id - w->last_id - 1, parent);
    w->len += piano_varint_put(w->buf + w->len, code << 5 | (uint64_t)k);
    if (!code) {
        put(w, id - w->last_id - 1);
        put(w, parent < 0 ? 0 : id - parent);
    }
    fn = fn > 0 ? fn : 0;
    w->len += piano_varint_put(w->buf + w->len, fn >= w->last_fn ? (uint64_t)(fn - w->last_fn) << 1
                                                                  : ((uint64_t)(w->last_fn - fn) << 1) - 1);
    w->last_fn = fn;
    int64_t pidx = code ? (code > t->depth ? -1 : t->chain[t->depth - code]) : parent < 0 ? -1 : tree_find(t, parent);
    if (tree_add(t, id, pidx, code ? t->depth + 1 - code : 0, code != 0)) {
        w->failed = 1;
        return;
    }
    for (int i = 0; i < k; i++)
        w->len += piano_varint_put(w->buf + w->len, (uint64_t)f[i]);
    w->last_id = id;
}

/* ------------------------------------------------------------------ reading */

int piano_ctx_open(piano_ctx_reader *r, const void *b, size_t len)
{
    piano_ctx_tree t = r->tree;
    memset(r, 0, sizeof *r);
    r->tree = t;
    r->tree.n = 0;
    r->tree.depth = 0;
    if (!b || len < 1)
        return -1;
    r->b = b;
    r->len = len;
    r->at = 1;
    r->flags = r->b[0] & 3;
    r->nf = (r->b[0] >> 2) & 31;
    r->v2 = (r->b[0] & PIANO_CTX_V2) != 0;
    return 0;
}

void piano_ctx_close(piano_ctx_reader *r)
{
    tree_free(&r->tree);
}

static int get(piano_ctx_reader *r, uint64_t *v)
{
    return piano_varint_get(r->b, r->len, &r->at, 10, v) != 0 || *v > (uint64_t)INT64_MAX ? -1 : 0;
}

int piano_ctx_next(piano_ctx_reader *r, piano_ctx_row *row)
{
    if (r->at >= r->len)
        return 0;
    uint64_t head, up = 0, fn, x, step, code = 0;
    if (get(r, &head))
        return -1;
    uint64_t k = head & 31;
    piano_ctx_tree *tr = &r->tree;
    if (!r->v2) {
        step = (head >> 5) + 1;
        if (get(r, &up))
            return -1;
    } else if ((code = head >> 5) == 0) {
        if (get(r, &step) || step == UINT64_MAX || get(r, &up))
            return -1;
        step++;
    } else {
        step = 1;
        if (code > tr->depth + 1)
            return -1;
    }
    if (piano_varint_get(r->b, r->len, &r->at, 10, &fn) != 0 || (!r->v2 && fn > (uint64_t)INT64_MAX) ||
        step > (uint64_t)(INT64_MAX - r->id) || up > r->id + step || k > (uint64_t)r->nf)
        return -1;
    if (r->v2) {   /* fn: the previous one's plus the zigzag difference, within 0..INT64_MAX */
        uint64_t d = fn >> 1;
        if (fn & 1 ? d + 1 > (uint64_t)r->fn : d > (uint64_t)(INT64_MAX - r->fn))
            return -1;
        fn = (uint64_t)(fn & 1 ? r->fn - (int64_t)d - 1 : r->fn + (int64_t)d);
    }
    memset(row, 0, sizeof *row);
    row->id = r->id + (int64_t)step;
    row->fn = (int64_t)fn;
    if (code) {
        int64_t pidx = code > tr->depth ? -1 : tr->chain[tr->depth - code];
        row->parent = pidx < 0 ? -1 : tr->id[pidx];
        if (tree_add(tr, row->id, pidx, tr->depth + 1 - code, 1))
            return -1;
    } else {
        row->parent = up ? row->id - (int64_t)up : -1;
        if (r->v2 && tree_add(tr, row->id, row->parent < 0 ? -1 : tree_find(tr, row->parent), 0, 0))
            return -1;
    }
    for (int i = 0; i < NF || (uint64_t)i < k; i++) {
        x = 0;
        if ((uint64_t)i < k && (i == 2 ? piano_varint_get(r->b, r->len, &r->at, 10, &x) != 0 : get(r, &x)))
            return -1;
        if (i >= NF)
            continue;   /* (a field this reader does not know) */
        if (i == 2) {   /* total_ns: self_ns + the zigzag difference */
            uint64_t self = (uint64_t)row->v[fields[1]], t = x & 1 ? self - (x >> 1) - 1 : self + (x >> 1);
            x = (x & 1 ? (x >> 1) + 1 > self : t < self || t > (uint64_t)INT64_MAX) ? UINT64_MAX : t;
            if (x == UINT64_MAX)
                return -1;
        }
        int m = fields[i];
        enum piano_metric_when when = info[m].when;
        row->v[m] = (int64_t)x;
        row->null[m] = (when == PIANO_WHEN_CPU && !(r->flags & PIANO_CTX_CPU)) ||
                       (when == PIANO_WHEN_HEAP && !(r->flags & PIANO_CTX_HEAP)) ||
                       (i >= r->nf && when != PIANO_WHEN_ALWAYS);
    }
    r->id = row->id;
    r->fn = row->fn;
    return 1;
}

/* ------------------------------------------- the table-valued function */

/* Its columns: id, parent, fn, the CTX metrics (PIANO_METRICS order), nodes (hidden). */
static int col_metric[PIANO_M_N + 3], n_cols;

static void init_cols(void)
{
    if (n_cols)
        return;
    int c = 3;
    for (int m = 0; m < PIANO_M_N; m++)
        if (info[m].where == PIANO_WHERE_CTX)
            col_metric[c++] = m;
    n_cols = c;   /* the hidden column nodes is n_cols */
}

typedef struct {
    piano_ctx_reader r;
    piano_ctx_row row;
} ctx_state;

static int ctx_declare(char *sql, size_t n)
{
    init_cols();
    size_t k = (size_t)snprintf(sql, n, "CREATE TABLE x(id, parent, fn");
    for (int c = 3; c < n_cols; c++)
        k += (size_t)snprintf(sql + k, n - k, ", %s", info[col_metric[c]].id);
    snprintf(sql + k, n - k, ", nodes HIDDEN)");
    return n_cols;
}

static int ctx_open(void *state, const unsigned char *b, size_t len)
{
    return piano_ctx_open(&((ctx_state *)state)->r, b, len);
}

static void ctx_close(void *state)
{
    piano_ctx_close(&((ctx_state *)state)->r);
}

static int ctx_next(void *state)
{
    ctx_state *s = state;
    return piano_ctx_next(&s->r, &s->row);
}

static void ctx_column(const void *state, sqlite3_context *ctx, int col)
{
    const piano_ctx_row *r = &((const ctx_state *)state)->row;
    if (col == 0)
        sqlite3_result_int64(ctx, r->id);
    else if (col == 1 && r->parent >= 0)
        sqlite3_result_int64(ctx, r->parent);
    else if (col == 2)
        sqlite3_result_int64(ctx, r->fn);
    else if (col >= 3 && col < n_cols && !r->null[col_metric[col]])
        sqlite3_result_int64(ctx, r->v[col_metric[col]]);
    else
        sqlite3_result_null(ctx);
}

static const piano_blob_table ctx_table = {
    .declare = ctx_declare,
    .open = ctx_open,
    .next = ctx_next,
    .column = ctx_column,
    .close = ctx_close,
    .state_size = sizeof(ctx_state),
    .rows = 1000,
    .malformed = "a calling context tree (context_trees.nodes) is malformed",
};

/* "run, thread, id, parent, fn, calls, ..." with prefix p ("" or "c.") for
 * the columns from id on; each name as in PIANO_METRICS. */
static size_t cols(char *s, size_t n, const char *p)
{
    size_t k = (size_t)snprintf(s, n, "%sid, %sparent, %sfn", p, p, p);
    for (int m = 0; m < PIANO_M_N; m++)
        if (info[m].where == PIANO_WHERE_CTX)
            k += (size_t)snprintf(s + k, n - k, ", %s%s", p, info[m].id);
    return k;
}

int piano_contexts_register(sqlite3 *db)
{
    char a[1024], b[1024], sql[3072];
    cols(a, sizeof a, "");
    cols(b, sizeof b, "c.");
    snprintf(sql, sizeof sql,
             "CREATE TEMP VIEW IF NOT EXISTS contexts AS SELECT run, thread, %s FROM main.context_rows"
             " UNION ALL SELECT t.run, t.thread, %s FROM main.context_trees t, piano_contexts(t.nodes) c",
             a, b);
    return piano_blob_table_register(db, "piano_contexts", &ctx_table, sql);
}

/* ------------------------------------------- writing through the view */

int piano_contexts_make_triggers(sqlite3 *db)
{
    init_cols();
    piano_view_col vc[PIANO_M_N + 3] = {{"id", 0}, {"parent", 0}, {"fn", 0}};
    for (int c = 3; c < n_cols; c++)
        vc[c] = (piano_view_col){info[col_metric[c]].id, info[col_metric[c]].when == PIANO_WHEN_ALWAYS};
    return piano_blob_view_triggers(db, "contexts", "context_rows", "context_trees", "id", vc, n_cols);
}

/* ------------------------------------------ rows of older schemas, packed */

/* The thread's rows read so far can go in a blob: whole integers >= 0, a
 * parent before its child, each group of metrics NULL in all rows or none. */
typedef struct {
    int64_t run, thread;
    int ok, rows, null_cpu, null_heap;   /* null_*: -1 not seen yet, else 0 / 1 */
} pack_state;

static int pack_flush(sqlite3 *db, sqlite3_stmt *ins, piano_ctx_writer *w, const pack_state *g)
{
    if (!g->rows || !g->ok)
        return SQLITE_OK;
    if (w->failed)
        return SQLITE_NOMEM;
    /* The flags were not known when the blob began: its header is set now. */
    w->buf[0] = (unsigned char)((g->null_cpu == 0 ? PIANO_CTX_CPU : 0) | (g->null_heap == 0 ? PIANO_CTX_HEAP : 0) |
                                NF << 2 | PIANO_CTX_V2);
    sqlite3_bind_int64(ins, 1, g->run);
    sqlite3_bind_int64(ins, 2, g->thread);
    sqlite3_bind_blob(ins, 3, w->buf, (int)w->len, SQLITE_STATIC);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    (void)db;
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int piano_contexts_pack(sqlite3 *db)
{
    char a[1024], sql[1400];
    cols(a, sizeof a, "");
    snprintf(sql, sizeof sql, "SELECT run, thread, %s FROM context_rows ORDER BY run, thread, id", a);
    sqlite3_stmt *st = NULL, *ins = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO context_trees(run, thread, nodes) VALUES(?1, ?2, ?3)", -1, &ins,
                                NULL);
    init_cols();
    piano_ctx_writer w = {0};
    pack_state g = {0};
    while (rc == SQLITE_OK) {
        int step = sqlite3_step(st);
        if (step != SQLITE_ROW && step != SQLITE_DONE) {
            rc = step;
            break;
        }
        int64_t run = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        int64_t thread = step == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
        if (step == SQLITE_DONE || !g.rows || run != g.run || thread != g.thread) {
            rc = pack_flush(db, ins, &w, &g);
            if (rc != SQLITE_OK || step == SQLITE_DONE)
                break;
            g = (pack_state){.run = run, .thread = thread, .ok = 1, .null_cpu = -1, .null_heap = -1};
            piano_ctx_begin(&w, 0);
        }
        g.rows++;
        if (!g.ok)
            continue;
        /* id, parent, fn, metrics: columns 2.. */
        for (int c = 0; c < n_cols && g.ok; c++) {
            int type = sqlite3_column_type(st, 2 + c);
            int64_t x = sqlite3_column_int64(st, 2 + c);
            if (type == SQLITE_NULL) {
                if (c == 1)
                    continue;   /* a root */
                enum piano_metric_when when = c >= 3 ? info[col_metric[c]].when : PIANO_WHEN_ALWAYS;
                int *seen = when == PIANO_WHEN_CPU ? &g.null_cpu : when == PIANO_WHEN_HEAP ? &g.null_heap : NULL;
                g.ok = seen && *seen != 0;
                if (seen)
                    *seen = 1;
                continue;
            }
            g.ok = type == SQLITE_INTEGER && x >= 0;
            if (c >= 3) {
                enum piano_metric_when when = info[col_metric[c]].when;
                int *seen = when == PIANO_WHEN_CPU ? &g.null_cpu : when == PIANO_WHEN_HEAP ? &g.null_heap : NULL;
                if (seen) {
                    g.ok &= *seen != 1;
                    *seen = 0;
                }
            }
        }
        int64_t id = sqlite3_column_int64(st, 2);
        int has_parent = sqlite3_column_type(st, 3) != SQLITE_NULL;
        int64_t parent = has_parent ? sqlite3_column_int64(st, 3) : -1;
        g.ok &= id > w.last_id || (g.rows == 1 && id >= 0);
        g.ok &= !has_parent || parent < id;
        if (!g.ok)
            continue;
        int64_t v[PIANO_M_N] = {0};
        for (int c = 3; c < n_cols; c++)
            v[col_metric[c]] = sqlite3_column_int64(st, 2 + c);
        /* (under 2^55: what the plain-SQL view of schemas 17 and 18 read exactly) */
        int64_t diff = v[PIANO_M_total_ns] - v[PIANO_M_self_ns];   /* both >= 0: no overflow */
        if (diff >= (int64_t)1 << 55 || diff <= -((int64_t)1 << 55)) {
            g.ok = 0;
            continue;
        }
        piano_ctx_put(&w, id, parent, sqlite3_column_int64(st, 4), v);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    piano_ctx_writer_free(&w);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db,
                          "DELETE FROM context_rows WHERE EXISTS (SELECT 1 FROM context_trees t"
                          " WHERE t.run = context_rows.run AND t.thread = context_rows.thread)",
                          NULL, NULL, NULL);
    return rc;
}
