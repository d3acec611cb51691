/*
 * stats_blob.c - a thread's per-function stats as one blob: the writer (the
 * import), the reader (piano-db, through the table-valued function
 * piano_stats, and the TEMP view stats over it, which piano-db and
 * `piano-db sql` make on their connection). The format is stats_blob.h's.
 */
#include "stats_blob.h"
#include "blob_table.h"
#include "byte_buf.h"
#include "fns_blob.h"
#include "hist.h"   /* piano_varint_put / piano_varint_get */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int fields[] = {PIANO_STATS_FIELDS};
static const int fields_v3[] = {PIANO_STATS_FIELDS_V3};
#define NF ((int)(sizeof fields / sizeof *fields))
_Static_assert(sizeof fields_v3 == sizeof fields, "PIANO_STATS_FIELDS_V3 (stats_blob.h) lists another number of fields");

#define PIANO_STATS_COUNT(id, unit, when, where, ...) PIANO_IF(STATS, where, +1)
enum { N_STATS_METRICS = 0 PIANO_METRICS(PIANO_STATS_COUNT) };
_Static_assert(sizeof fields / sizeof *fields == N_STATS_METRICS + 1,
               "a metric is missing from PIANO_STATS_FIELDS (stats_blob.h): add it at the end");
_Static_assert(sizeof fields / sizeof *fields < PIANO_STATS_V3_NF, "a blob's header holds at most 30 fields");

static const struct piano_metric_info info[] = {PIANO_METRIC_INFO};

static enum piano_metric_when when_of(int m)
{
    return m == PIANO_STATS_CHILD ? PIANO_WHEN_ALWAYS : info[m].when;
}

/* ------------------------------------------------------------------ writing */

/* Room for more bytes after w->len: 0, or -1 when w->failed (byte_buf.h). */
static int grow(piano_stats_writer *w, size_t more)
{
    return piano_byte_buf_grow(&w->buf, &w->cap, w->len + more, 8192, &w->failed);
}

void piano_stats_begin(piano_stats_writer *w, int flags)
{
    w->len = 0;
    w->last_fn = -1;
    w->failed = 0;
    if (grow(w, 2) == 0) {
        w->buf[w->len++] = (unsigned char)(flags | PIANO_STATS_V3_NF << 2 | PIANO_STATS_HIST_V2);
        w->buf[w->len++] = (unsigned char)NF;
    }
}

static void put(piano_stats_writer *w, uint64_t v)
{
    w->len += piano_varint_put(w->buf + w->len, v);
}

/* Appends histogram h (h_len bytes, any format) as its length + add, then its
 * compact v2 buckets: a v2 blob's as they are (hist.h piano_hist_v2_items),
 * another format's made (piano_hist_items); *at where they start, *n their
 * length. Returns 0, or -1 when it is malformed (w->failed set). */
static int put_hist(piano_stats_writer *w, const void *h, size_t h_len, unsigned add, size_t *at, size_t *n)
{
    const unsigned char *items = piano_hist_v2_items(h, h_len, n);
    if (items) {
        put(w, *n + add);
        memcpy(w->buf + w->len, items, *n);
    } else {
        unsigned char *made = w->buf + w->len + 10;   /* (room for the length before them) */
        *n = piano_hist_items(h, h_len, made);
        if (*n == (size_t)-1) {
            w->failed = 1;
            return -1;
        }
        put(w, *n + add);
        memmove(w->buf + w->len, made, *n);
    }
    *at = w->len;
    w->len += *n;
    return 0;
}

void piano_stats_put(piano_stats_writer *w, int64_t fn, const int64_t v[PIANO_STATS_NV], const void *hs,
                     size_t hs_len, const void *ht, size_t ht_len)
{
    if (grow(w, (size_t)(3 + NF) * 10 + 2 * (hs_len + ht_len) + 64))
        return;
    int64_t f[NF];
    for (int i = 0; i < NF; i++)
        f[i] = v[fields_v3[i]] > 0 ? v[fields_v3[i]] : 0;
    /* total_ns as its difference from self_ns, zigzag: 0 for a leaf */
    uint64_t d = (uint64_t)f[2] - (uint64_t)f[1];
    f[2] = (int64_t)(f[2] >= f[1] ? d << 1 : ((uint64_t)(f[1] - f[2]) << 1) - 1);
    int k = NF;
    while (k > 0 && f[k - 1] == 0)
        k--;
    size_t start = w->len;
    put(w, (uint64_t)(fn - w->last_fn - 1) << 5 | (uint64_t)k);
    for (int i = 0; i < k; i++)
        put(w, (uint64_t)f[i]);
    size_t hs_at = 0, hs_n = 0, ht_start = 0, ht_at, ht_n;
    if (!hs)
        put(w, 0);
    else if (put_hist(w, hs, hs_len, 1, &hs_at, &hs_n))
        goto failed;
    ht_start = w->len;
    if (!ht)
        put(w, 0);
    else if (put_hist(w, ht, ht_len, 2, &ht_at, &ht_n))
        goto failed;
    else if (hs && ht_n == hs_n && memcmp(w->buf + hs_at, w->buf + ht_at, hs_n) == 0) {
        w->len = ht_start;   /* hist_total equal to hist_self (a leaf function): 1, no bytes */
        put(w, 1);
    }
    w->last_fn = fn;
    return;
failed:
    w->len = start;
}

/* ------------------------------------------------------------------ reading */

int piano_stats_open(piano_stats_reader *r, const void *b, size_t len)
{
    memset(r, 0, sizeof *r);
    if (!b || len < 1)
        return -1;
    r->b = b;
    r->len = len;
    r->at = 1;
    r->flags = r->b[0] & 3;
    r->nf = (r->b[0] >> 2) & 31;
    r->hist_v2 = (r->b[0] & PIANO_STATS_HIST_V2) != 0;
    r->order = fields;
    r->fn = -1;
    if (r->nf == PIANO_STATS_V3_NF) {   /* v3: the real nf follows */
        if (len < 2 || r->b[1] >= PIANO_STATS_V3_NF)
            return -1;
        r->nf = r->b[1];
        r->order = fields_v3;
        r->at = 2;
    }
    return 0;
}

static int get(piano_stats_reader *r, uint64_t *v)
{
    return piano_varint_get(r->b, r->len, &r->at, 10, v) != 0 || *v > (uint64_t)INT64_MAX ? -1 : 0;
}

int piano_stats_next(piano_stats_reader *r, piano_stats_row *row)
{
    if (r->at >= r->len)
        return 0;
    uint64_t head, x;
    if (get(r, &head))
        return -1;
    uint64_t step = (head >> 5) + 1, k = head & 31;
    if (step > (uint64_t)(INT64_MAX - (r->fn + 1)) + 1 || k > (uint64_t)r->nf)   /* (r->fn >= -1) */
        return -1;
    memset(row, 0, sizeof *row);
    row->fn = r->fn + (int64_t)step;
    for (int i = 0; i < NF || (uint64_t)i < k; i++) {
        x = 0;
        if ((uint64_t)i < k && (i == 2 ? piano_varint_get(r->b, r->len, &r->at, 10, &x) != 0 : get(r, &x)))
            return -1;
        if (i >= NF)
            continue;   /* (a field this reader does not know) */
        if (i == 2) {   /* total_ns: self_ns + the zigzag difference */
            uint64_t self = (uint64_t)row->v[r->order[1]], t = x & 1 ? self - (x >> 1) - 1 : self + (x >> 1);
            if (x & 1 ? (x >> 1) + 1 > self : t < self || t > (uint64_t)INT64_MAX)
                return -1;
            x = t;
        }
        int m = r->order[i];
        enum piano_metric_when when = when_of(m);
        row->v[m] = (int64_t)x;
        row->null[m] = (when == PIANO_WHEN_CPU && !(r->flags & PIANO_STATS_CPU)) ||
                       (when == PIANO_WHEN_HEAP && !(r->flags & PIANO_STATS_HEAP)) ||
                       (i >= r->nf && when != PIANO_WHEN_ALWAYS);
    }
    /* the histograms */
    uint64_t hs, ht;
    if (get(r, &hs) || (hs && hs - 1 > r->len - r->at))
        return -1;
    if (hs) {
        row->hs = r->b + r->at;
        row->hs_len = (size_t)(hs - 1);
        r->at += row->hs_len;
    }
    if (get(r, &ht) || (ht > 1 && ht - 2 > r->len - r->at) || (ht == 1 && !hs))
        return -1;
    if (ht == 1) {
        row->ht = row->hs;
        row->ht_len = row->hs_len;
    } else if (ht > 1) {
        row->ht = r->b + r->at;
        row->ht_len = (size_t)(ht - 2);
        r->at += row->ht_len;
    }
    r->fn = row->fn;
    return 1;
}

/* ----------------------------------------------------------- the columns */

/* The stats view's columns after run and thread, in the order of schema
 * 17's table: fn, the CTX metrics measured always, hist_self, hist_total,
 * child_calls, the FN metrics, the CPU ones, the heap ones. */
enum col_kind { C_FN, C_FIG, C_HS, C_HT };
static struct col {
    enum col_kind kind;
    int m;   /* C_FIG: its figure (PIANO_M_* or PIANO_STATS_CHILD) */
    const char *name;
} col[PIANO_STATS_NV + 3];
static int n_cols;

static void add_col(enum col_kind kind, int m, const char *name)
{
    col[n_cols++] = (struct col){kind, m, name};
}

static void init_cols(void)
{
    if (n_cols)
        return;
    add_col(C_FN, 0, "fn");
    for (int m = 0; m < PIANO_M_N; m++)
        if (info[m].where == PIANO_WHERE_CTX && info[m].when == PIANO_WHEN_ALWAYS)
            add_col(C_FIG, m, info[m].id);
    add_col(C_HS, 0, "hist_self");
    add_col(C_HT, 0, "hist_total");
    add_col(C_FIG, PIANO_STATS_CHILD, "child_calls");
    for (int m = 0; m < PIANO_M_N; m++)
        if (info[m].where == PIANO_WHERE_FN)
            add_col(C_FIG, m, info[m].id);
    for (int m = 0; m < PIANO_M_N; m++)
        if (info[m].where == PIANO_WHERE_CTX && info[m].when == PIANO_WHEN_CPU)
            add_col(C_FIG, m, info[m].id);
    for (int m = 0; m < PIANO_M_N; m++)
        if (info[m].where == PIANO_WHERE_CTX && info[m].when == PIANO_WHEN_HEAP)
            add_col(C_FIG, m, info[m].id);
}

/* "fn, calls, ..." with prefix p ("", "s." or "NEW.") before each name. */
static size_t cols(char *s, size_t n, const char *p)
{
    init_cols();
    size_t k = 0;
    for (int c = 0; c < n_cols; c++)
        k += (size_t)snprintf(s + k, n - k, "%s%s%s", c ? ", " : "", p, col[c].name);
    return k;
}

/* ------------------------------------------- the table-valued function */

typedef struct {
    piano_stats_reader r;
    piano_stats_row row;
} st_state;

static int st_declare(char *sql, size_t n)
{
    char a[1024];
    cols(a, sizeof a, "");
    snprintf(sql, n, "CREATE TABLE x(%s, fns HIDDEN)", a);
    return n_cols;
}

static int st_open(void *state, const unsigned char *b, size_t len)
{
    return piano_stats_open(&((st_state *)state)->r, b, len);
}

static int st_next(void *state)
{
    st_state *s = state;
    return piano_stats_next(&s->r, &s->row);
}

/* A histogram column: blobs with v2 buckets as a whole v2 blob (hist.h). */
static void result_hist(sqlite3_context *ctx, const unsigned char *h, size_t n, int v2)
{
    if (!v2 || !n) {
        sqlite3_result_blob(ctx, n ? (const void *)h : "", (int)n, SQLITE_TRANSIENT);
        return;
    }
    unsigned char *b = sqlite3_malloc64(n + 2);
    if (!b) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_blob(ctx, b, (int)piano_hist_wrap(h, n, b), sqlite3_free);
}

static void st_column(const void *state, sqlite3_context *ctx, int i)
{
    const piano_stats_row *r = &((const st_state *)state)->row;
    const struct col *c = i >= 0 && i < n_cols ? &col[i] : NULL;
    if (c && c->kind == C_FN)
        sqlite3_result_int64(ctx, r->fn);
    else if (c && c->kind == C_FIG && !r->null[c->m])
        sqlite3_result_int64(ctx, r->v[c->m]);
    else if (c && (c->kind == C_HS || c->kind == C_HT) && (c->kind == C_HS ? r->hs : r->ht))
        result_hist(ctx, c->kind == C_HS ? r->hs : r->ht, c->kind == C_HS ? r->hs_len : r->ht_len,
                    ((const st_state *)state)->r.hist_v2);
    else
        sqlite3_result_null(ctx);
}

static const piano_blob_table st_table = {
    .declare = st_declare,
    .open = st_open,
    .next = st_next,
    .column = st_column,
    .state_size = sizeof(st_state),
    .rows = 200,
    .malformed = "a thread's stats (stat_trees.fns) are malformed",
};

int piano_stats_register(sqlite3 *db)
{
    char a[1024], b[1024], sql[3072];
    cols(a, sizeof a, "");
    cols(b, sizeof b, "s.");
    snprintf(sql, sizeof sql,
             "CREATE TEMP VIEW IF NOT EXISTS stats AS SELECT run, thread, %s FROM main.stat_rows"
             " UNION ALL SELECT t.run, t.thread, %s FROM main.stat_trees t, piano_stats(t.fns) s",
             a, b);
    return piano_blob_table_register(db, "piano_stats", &st_table, sql);
}

/* ------------------------------------------- writing through the view */

int piano_stats_make_triggers(sqlite3 *db)
{
    init_cols();
    piano_view_col vc[PIANO_STATS_NV + 3];
    for (int c = 0; c < n_cols; c++)
        vc[c] = (piano_view_col){col[c].name, col[c].kind == C_FIG && when_of(col[c].m) == PIANO_WHEN_ALWAYS};
    return piano_blob_view_triggers(db, "stats", "stat_rows", "stat_trees", "fn", vc, n_cols);
}
