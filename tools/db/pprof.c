/*
 * pprof.c - `piano-db export --format pprof`: a gzipped profile.proto
 * (github.com/google/pprof, proto/profile.proto), hand-encoded.
 *
 * The message set is small (Profile, ValueType, Sample, Location, Line,
 * Function and the string table), so a few lines of varint code write it;
 * protobuf-c would add a code generator and a library for that. gzip comes
 * from zlib.
 *
 * Contents: sample types calls/count, self/nanoseconds, alloc_space/bytes,
 * alloc_objects/count and, for a run that measured it, cpu/nanoseconds (self
 * CPU time), and for one that tracked heap in use (PIANO_HEAP)
 * inuse_space/bytes, inuse_objects/count, and for a run with spans (include/piano/span.h)
 * wall/nanoseconds, wall_busy/nanoseconds, wall_idle/nanoseconds: busy is the
 * self time of a span's frame and of the calls below it, idle a span's idle
 * time on a sample of its own whose only frame is the span, wall their sum
 * (default: self). One Sample per context path of the
 * merged calling-context tree, its location ids leaf first, its values that
 * context's own figures; so summing a function's flat values gives the
 * report's (uncorrected) calls, self time and allocations. One Function and
 * one Location (id = function id, one Line at the function's line) per
 * function (name, file, line).
 *
 * pprof_build makes the same profile with other sample types (piano-db push
 * sends one per group: wall time and calls, CPU time, allocations and heap in
 * use).
 */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
    unsigned char *b;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->b = xrealloc(b->b, b->cap);
    }
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

static void varint(buf *b, uint64_t v)
{
    unsigned char t[10];
    size_t n = 0;
    do {
        t[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            t[n] |= 0x80;
        n++;
    } while (v);
    put(b, t, n);
}

/* Field of wire type 0 (varint); int64 values are written as two's complement. */
static void f_int(buf *b, unsigned field, int64_t v)
{
    varint(b, (uint64_t)field << 3);
    varint(b, (uint64_t)v);
}

/* Field of wire type 2 (length-delimited). */
static void f_bytes(buf *b, unsigned field, const void *p, size_t n)
{
    varint(b, (uint64_t)field << 3 | 2);
    varint(b, n);
    put(b, p, n);
}

static void f_msg(buf *b, unsigned field, buf *m)
{
    f_bytes(b, field, m->b, m->n);
    m->n = 0;
}

/* ---- string table: "" first, each string once ---- */
typedef struct {
    char **s;
    size_t n, cap;
    int64_t *hash;
    size_t hcap;
} strtab;

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int64_t intern(strtab *t, const char *s)
{
    if (2 * (t->n + 1) > t->hcap) {
        free(t->hash);
        t->hcap = t->hcap ? t->hcap * 2 : 256;
        t->hash = xmalloc(t->hcap * sizeof *t->hash);
        for (size_t i = 0; i < t->hcap; i++)
            t->hash[i] = -1;
        for (size_t i = 0; i < t->n; i++) {
            size_t h = (size_t)str_hash(t->s[i]) & (t->hcap - 1);
            while (t->hash[h] >= 0)
                h = (h + 1) & (t->hcap - 1);
            t->hash[h] = (int64_t)i;
        }
    }
    size_t h = (size_t)str_hash(s) & (t->hcap - 1);
    for (; t->hash[h] >= 0; h = (h + 1) & (t->hcap - 1))
        if (!strcmp(t->s[t->hash[h]], s))
            return t->hash[h];
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->s = xrealloc(t->s, t->cap * sizeof *t->s);
    }
    t->s[t->n] = xstrdup(s);
    t->hash[h] = (int64_t)t->n;
    return (int64_t)t->n++;
}

static void value_type(buf *out, unsigned field, strtab *st, const char *type, const char *unit)
{
    buf m = {0};
    f_int(&m, 1, intern(st, type));
    f_int(&m, 2, intern(st, unit));
    f_msg(out, field, &m);
    free(m.b);
}

/* The figure of context c that field names. */
int64_t pprof_field(const cnode *c, int field)
{
    switch (field) {
    case PPROF_CALLS: return c->calls;
    case PPROF_SELF_NS: return c->self_ns;
    case PPROF_ALLOC_BYTES: return c->alloc_bytes;
    case PPROF_CPU_NS: return c->cpu_ns;
    case PPROF_INUSE_OBJECTS: return c->inuse_objects;
    case PPROF_INUSE_BYTES: return c->inuse_bytes;
    case PPROF_WALL: return sat_add(c->busy_ns, c->idle_ns);
    case PPROF_WALL_BUSY: return c->busy_ns;
    case PPROF_WALL_IDLE: return c->idle_ns;
    default: return c->allocs;
    }
}

static int all_zero(const cnode *c, const pprof_shape *s)
{
    for (int v = 0; v < s->nvalues; v++)
        if (pprof_field(c, s->values[v].field))
            return 0;
    return 1;
}

/* The samples, one per context path (2), its locations leaf first. */
static void put_samples(buf *out, const ctree *t, const pprof_shape *s, size_t *nsamples)
{
    buf m = {0}, locs = {0}, vals = {0};
    *nsamples = 0;
    for (size_t i = 1; i < t->n; i++) {
        const cnode *c = &t->v[i];
        if (s->skip_zero && all_zero(c, s))
            continue;
        for (int n = (int)i; n > 0; n = t->v[n].parent)
            varint(&locs, (uint64_t)t->v[n].key + 1);
        for (int v = 0; v < s->nvalues; v++)
            varint(&vals, (uint64_t)pprof_field(c, s->values[v].field));
        f_bytes(&m, 1, locs.b, locs.n); /* packed */
        f_bytes(&m, 2, vals.b, vals.n);
        f_msg(out, 2, &m);
        locs.n = vals.n = 0;
        ++*nsamples;
    }
    free(m.b);
    free(locs.b);
    free(vals.b);
}

/* 4: location, 5: function; one each per function key (ids from 1). */
static void put_functions(buf *out, strtab *st, const fkeys *k)
{
    buf m = {0}, m2 = {0};
    for (int i = 0; i < k->nkeys; i++) {
        f_int(&m2, 1, i + 1);         /* Line.function_id */
        f_int(&m2, 2, k->lines[i]);   /* Line.line */
        f_int(&m, 1, i + 1);          /* Location.id */
        f_msg(&m, 4, &m2);            /* Location.line */
        f_msg(out, 4, &m);
    }
    for (int i = 0; i < k->nkeys; i++) {
        f_int(&m, 1, i + 1);
        char *shown = name_without_return(k->labels[i]);
        f_int(&m, 2, intern(st, shown));          /* name: as the tables show it */
        free(shown);
        f_int(&m, 3, intern(st, k->names[i]));   /* system_name */
        f_int(&m, 4, intern(st, k->files[i]));   /* filename */
        f_int(&m, 5, k->lines[i]);               /* start_line */
        f_msg(out, 5, &m);
    }
    free(m.b);
    free(m2.b);
}

static unsigned char *gzip_buf(const buf *in, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        pdb_die("pprof: zlib: cannot start compressing");
    uLong bound = deflateBound(&z, (uLong)in->n);
    unsigned char *gz = xmalloc(bound);
    z.next_in = in->b;
    z.avail_in = (uInt)in->n;
    z.next_out = gz;
    z.avail_out = (uInt)bound;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        pdb_die("pprof: zlib: compression failed");
    *len = bound - z.avail_out;
    deflateEnd(&z);
    return gz;
}

unsigned char *pprof_build(const ctree *t, const run_info *r, const pprof_shape *s, size_t *len)
{
    strtab st = {0};
    intern(&st, "");
    buf out = {0};
    for (int v = 0; v < s->nvalues; v++) /* 1: sample_type */
        value_type(&out, 1, &st, s->values[v].type, s->values[v].unit);
    size_t nsamples;
    put_samples(&out, t, s, &nsamples);
    put_functions(&out, &st, &t->keys);

    /* 9 time_nanos, 10 duration_nanos, 11 period_type, 12 period, 13 comment,
     * 14 default_sample_type */
    f_int(&out, 9, r->started_ns);
    f_int(&out, 10, r->duration_ns);
    if (s->period_type) {
        value_type(&out, 11, &st, s->period_type, s->period_unit);
        f_int(&out, 12, 1);
    }
    char cmt[64];
    if (r->id < 0)   /* a set of runs: the next comment says which */
        snprintf(cmt, sizeof cmt, "piano runs summed");
    else
        snprintf(cmt, sizeof cmt, "piano run %lld", (long long)r->id);
    int64_t c1 = intern(&st, cmt), c2 = intern(&st, r->command), dst = intern(&st, s->default_type);
    f_int(&out, 13, c1);
    f_int(&out, 13, c2);
    f_int(&out, 14, dst);
    /* 6: string_table, written last (field order does not matter in protobuf). */
    for (size_t i = 0; i < st.n; i++)
        f_bytes(&out, 6, st.s[i], strlen(st.s[i]));

    unsigned char *gz = nsamples || !s->skip_zero ? gzip_buf(&out, len) : NULL;
    free(out.b);
    for (size_t i = 0; i < st.n; i++)
        free(st.s[i]);
    free(st.s);
    free(st.hash);
    return gz;
}

/* The one sample-type table: each sample type piano writes, in export
 * --format pprof's order, with the metric it carries (its pprof name and unit
 * are the metric's: spool/metrics.h; pprof's own names, so `pprof
 * -sample_index=inuse_space` reads them as Go's heap profiles), the figure of
 * a context it takes, push's group and place in it, and push's name where
 * Pyroscope wants another (its series type "wall"). */
static const struct {
    int metric, field, group, at;
    const char *push_type;
} samples[] = {
    {PIANO_M_calls, PPROF_CALLS, PPROF_GROUP_WALL, 1, NULL},
    {PIANO_M_self_ns, PPROF_SELF_NS, PPROF_GROUP_WALL, 0, "wall"},
    {PIANO_M_alloc_bytes, PPROF_ALLOC_BYTES, PPROF_GROUP_MEMORY, 1, NULL},
    {PIANO_M_allocs, PPROF_ALLOCS, PPROF_GROUP_MEMORY, 0, NULL},
    {PIANO_M_cpu_ns, PPROF_CPU_NS, PPROF_GROUP_CPU, 0, NULL},
    {PIANO_M_inuse_bytes, PPROF_INUSE_BYTES, PPROF_GROUP_MEMORY, 3, NULL},
    {PIANO_M_inuse_objects, PPROF_INUSE_OBJECTS, PPROF_GROUP_MEMORY, 2, NULL},
};
enum { NSAMPLES = sizeof samples / sizeof *samples };
_Static_assert((int)NSAMPLES <= (int)PPROF_NSAMPLES, "room for every sample type");

int pprof_values(int group, int cpu, int heap, pprof_value *out)
{
    static const char *const units[] = {[PIANO_UNIT_COUNT] = "count", [PIANO_UNIT_NS] = "nanoseconds",
                                        [PIANO_UNIT_BYTES] = "bytes"};
    int n = 0;
    for (int at = 0; at < NSAMPLES; at++)   /* export's order; a group's: by `at` */
        for (int i = 0; i < NSAMPLES; i++) {
            const struct piano_metric_info *m = &pdb_metrics[samples[i].metric];
            if (group < 0 ? i != at : samples[i].group != group || samples[i].at != at)
                continue;
            if ((m->when == PIANO_WHEN_CPU && !cpu) || (m->when == PIANO_WHEN_HEAP && !heap))
                continue;
            out[n++] = (pprof_value){group >= 0 && samples[i].push_type ? samples[i].push_type : m->pprof,
                                     units[m->unit], samples[i].field};
        }
    return n;
}

void export_pprof(pdb *p, const pdb_opts *o, const run_info *r, const runset *set, long thread)
{
    /* tracing-prof's names: a span's time in any state, entered, open and not entered */
    static const pprof_value span_values[] = {{"wall", "nanoseconds", PPROF_WALL},
                                              {"wall_busy", "nanoseconds", PPROF_WALL_BUSY},
                                              {"wall_idle", "nanoseconds", PPROF_WALL_IDLE}};
    ctree t;
    if (set)
        pdb_set_ctree(p, set, thread, &t);
    else
        ctree_load(p, r->id, thread, &t);
    if (o->group)
        ctree_group(&t);
    /* CPU time only when the run measured it, heap in use when it tracked it
     * (else they would say 0); spans' times when it had spans (the whole run's) */
    pprof_value v[PPROF_NSAMPLES + 3];
    int nv = pprof_values(-1, t.cpu_known && t.n > 1, r->heap_tracked, v);
    if (!set && thread < 0 && ctree_add_spans(p, &t, r->id) > 0)
        for (int k = 0; k < 3; k++)
            v[nv++] = span_values[k];
    const pprof_shape all = {v, nv, NULL, NULL, "self", 0};
    size_t len;
    unsigned char *gz = pprof_build(&t, r, &all, &len);
    FILE *f = out_open(o, 1);
    fwrite(gz, 1, len, f);
    out_close(f, o);
    free(gz);
    ctree_free(&t);
}

/* ---- a profile made before, read back (piano-db push) ---- */

/* A varint at *p (< end); -1 when it is cut or too long. */
static int read_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char c = *(*p)++;
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

int pprof_inspect(const unsigned char *gz, size_t n, size_t limit, pprof_info *out)
{
    memset(out, 0, sizeof *out);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)   /* gzip or zlib; a raw profile is refused below */
        return -1;
    size_t cap = n * 4 + 1024, len = 0;
    unsigned char *raw = xmalloc(cap);
    z.next_in = (unsigned char *)gz;
    z.avail_in = (uInt)n;
    int rc;
    do {
        if (len == cap) {
            if (cap > limit) {   /* past the limit: its size is enough to say so */
                inflateEnd(&z);
                out->raw = raw;
                out->raw_len = len;
                out->too_big = 1;
                return 0;
            }
            raw = xrealloc(raw, cap *= 2);
        }
        z.next_out = raw + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
    } while (rc == Z_OK);
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(raw);
        return -1;
    }
    out->raw = raw;
    out->raw_len = len;
    out->too_big = len > limit;
    /* The top-level fields: samples (2) counted, time_nanos (9) and
     * duration_nanos (10) read (the last of a field wins, as protobuf says). */
    const unsigned char *p = raw, *end = raw + len;
    while (p < end) {
        uint64_t tag, v;
        if (read_varint(&p, end, &tag))
            return -1;
        switch (tag & 7) {
        case 0:
            if (read_varint(&p, end, &v))
                return -1;
            if (tag >> 3 == 9)
                out->time_ns = (int64_t)v;
            else if (tag >> 3 == 10)
                out->duration_ns = (int64_t)v;
            break;
        case 2:
            if (read_varint(&p, end, &v) || v > (uint64_t)(end - p))
                return -1;
            p += v;
            out->samples += tag >> 3 == 2;
            break;
        case 1: if (end - p < 8) return -1; p += 8; break;
        case 5: if (end - p < 4) return -1; p += 4; break;
        default: return -1;
        }
    }
    return 0;
}

unsigned char *pprof_restamp(pprof_info *in, int64_t time_ns, size_t *len)
{
    buf b = {in->raw, in->raw_len, in->raw_len};
    f_int(&b, 9, time_ns);   /* after the first: protobuf keeps the last */
    in->raw = b.b;
    in->raw_len = b.n;
    in->time_ns = time_ns;
    return gzip_buf(&b, len);
}
