/*
 * runset.c - sets of runs: the hundreds of runs of a test suite read as one.
 *
 * A set is named by a list of run ids and ranges ("3..40,45"), by a tag that
 * names several runs (`tag NAME 3..40`, `tag NAME --command jq`: the table
 * tag_runs of the schema), or by report's --all-runs and
 * --command NAME. Runs that recorded nothing (a call, an allocation or a
 * frame) are left out of a set, and counted.
 *
 * Summing: each run's rows are read as for a report of that run
 * (pdb_load_functions: threads merged, the overhead correction with the run's
 * own overhead and child calls), then added up per function: calls, self and
 * inclusive times, allocations, frees, CPU and heap figures. A figure a run did
 * not measure (CPU, heap in use) makes the set's figure unknown (null), never
 * a partial sum. p50/p99 come from the histograms of every call of every run,
 * merged: each run's buckets read as that run's report reads them (its
 * ns_per_tick, each call's correction: call_fix), then the nearest rank over
 * all of them, so a set of one run shows that run's p50/p99. For diff's test
 * the calls are also binned anew in ns (ns_per_tick 1, no further correction),
 * within the histograms' 1%.
 *
 * flamegraph SET and export SET (folded, pprof, callgrind) merge the runs'
 * calling contexts (pdb_set_ctree): their function keys united by (name, file,
 * line), each path one node, its figures summed.
 *
 * `runs --group command|parent` counts the runs per program or per parent run.
 */
#include "piano_db.h"
#include "hist.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- naming a set ---- */

void runset_free(runset *s)
{
    free(s->ids);
    free(s->what);
    memset(s, 0, sizeof *s);
}

int64_t pdb_tag_runs_count(pdb *p, const char *name)
{
    if (!p->has_tag_runs)
        return 0;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM tag_runs WHERE name = ?");
    pdb_bind_text(st, 1, name);
    int64_t n = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

/* Whether s is a list of run ids and ranges: "3..40", "3,5,7", "3..40,45". */
static int is_id_list(const char *s)
{
    int sep = 0;
    const char *c = s;
    while (*c) {
        if (!isdigit((unsigned char)*c))
            return 0;
        while (isdigit((unsigned char)*c))
            c++;
        if (c[0] == '.' && c[1] == '.') {
            c += 2;
            sep = 1;
            if (!isdigit((unsigned char)*c))
                return 0;
            while (isdigit((unsigned char)*c))
                c++;
        }
        if (*c == ',') {
            c++;
            sep = 1;
            if (!*c)
                return 0;
        } else if (*c) {
            return 0;
        }
    }
    return sep;
}

int pdb_is_set_spec(const char *s)
{
    return is_id_list(s);
}

static void set_add(runset *s, size_t *cap, int64_t id)
{
    if (s->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        s->ids = xrealloc(s->ids, *cap * sizeof *s->ids);
    }
    s->ids[s->n++] = id;
}

/* The runs st yields (id, recorded: 0 or 1) into s, those that recorded nothing counted apart. */
static void set_fill(pdb *p, sqlite3_stmt *st, runset *s)
{
    size_t cap = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        if (sqlite3_column_int(st, 1))
            set_add(s, &cap, sqlite3_column_int64(st, 0));
        else
            s->empty++;
        s->total++;
    }
    sqlite3_finalize(st);
}

/* Whether run r recorded something: the rule of the runs commands pick by default. */
#define RECORDED "(EXISTS (SELECT 1 FROM stats s WHERE s.run = r.id AND (s.calls > 0 OR s.allocs > 0)) " \
                 "OR EXISTS (SELECT 1 FROM frame_blocks f WHERE f.run = r.id) " \
                 "OR EXISTS (SELECT 1 FROM frame_rows f WHERE f.run = r.id))"

/* The runs of an id list (sorted, each once). */
static void set_from_list(pdb *p, const char *spec, runset *s)
{
    int64_t *lo = NULL, *hi = NULL;
    size_t n = 0;
    for (const char *c = spec; *c;) {
        char *end;
        int64_t a = strtoll(c, &end, 10), b = a;
        if (end[0] == '.' && end[1] == '.')
            b = strtoll(end + 2, &end, 10);
        if (b < a)
            pdb_usage_die("%.*s: runs backwards (A..B with A <= B)", (int)(end - c), c);
        lo = xrealloc(lo, (n + 1) * sizeof *lo);
        hi = xrealloc(hi, (n + 1) * sizeof *hi);
        lo[n] = a;
        hi[n++] = b;
        c = *end == ',' ? end + 1 : end;
    }
    /* One statement over the union, so each run is counted once. */
    static const char head[] = "SELECT r.id, " RECORDED " FROM runs r WHERE 0";
    size_t cap = sizeof head + n * 80 + 32, used = sizeof head - 1;
    char *sql = xmalloc(cap);
    memcpy(sql, head, sizeof head);
    for (size_t i = 0; i < n; i++)   /* at most 17 + 20 + 5 + 20 characters each */
        used += (size_t)snprintf(sql + used, cap - used, " OR r.id BETWEEN %lld AND %lld", (long long)lo[i],
                                 (long long)hi[i]);
    strcat(sql, " ORDER BY r.id");
    set_fill(p, pdb_prepare(p, sql), s);
    free(sql);
    free(lo);
    free(hi);
    s->what = xstrdup(spec);
}

/* The base name of a command's argv[0], as `runs` shows it (a new string);
 * a daemon's title "PROGRAM: ROLE" ("nginx: worker process", written over
 * argv[0] by setproctitle) names PROGRAM, without its colon. */
static char *program_of(const char *cmd)
{
    const char *sp = strchr(cmd, ' ');
    size_t n0 = sp ? (size_t)(sp - cmd) : strlen(cmd);
    if (n0 > 1 && cmd[n0 - 1] == ':' && cmd[n0 - 2] != '/')
        n0--;
    const char *base = cmd;
    for (const char *c = cmd; c < cmd + n0; c++)
        if (*c == '/' && c + 1 < cmd + n0)
            base = c + 1;
    char *out = xmalloc((size_t)(cmd + n0 - base) + 1);
    memcpy(out, base, (size_t)(cmd + n0 - base));
    out[cmd + n0 - base] = 0;
    return out;
}

/* Whether the run's command is that of program `name`: its argv[0]'s base
 * name, or with a '/' in name, its argv[0]. */
static int command_matches(const char *cmd, const char *name)
{
    if (strchr(name, '/')) {
        size_t n = strlen(name);
        return !strncmp(cmd, name, n) && (cmd[n] == 0 || cmd[n] == ' ');
    }
    char *prog = program_of(cmd);
    int same = !strcmp(prog, name);
    free(prog);
    return same;
}

/* --all-runs (command NULL) or --command NAME: every stored run, or those of a program. */
static void set_from_runs(pdb *p, const char *command, runset *s)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT r.id, " RECORDED ", r.command FROM runs r ORDER BY r.id");
    size_t cap = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        if (command && !command_matches(pdb_col_text(st, 2), command))
            continue;
        s->total++;
        if (sqlite3_column_int(st, 1))
            set_add(s, &cap, sqlite3_column_int64(st, 0));
        else
            s->empty++;
    }
    sqlite3_finalize(st);
    if (command) {
        s->what = xmalloc(strlen(command) + 16);
        sprintf(s->what, "--command %s", command);
    } else {
        s->what = xstrdup("--all-runs");
    }
}

static void set_from_tag(pdb *p, const char *name, runset *s)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT r.id, " RECORDED " FROM tag_runs t JOIN runs r ON r.id = t.run "
                                      "WHERE t.name = ? ORDER BY r.id");
    pdb_bind_text(st, 1, name);
    set_fill(p, st, s);
    s->what = xmalloc(strlen(name) + 8);
    sprintf(s->what, "tag %s", name);
}

int pdb_set_arg(pdb *p, const char *arg, runset *s)
{
    memset(s, 0, sizeof *s);
    if (is_id_list(arg))
        set_from_list(p, arg, s);
    else if (pdb_tag_runs_count(p, arg) > 0)
        set_from_tag(p, arg, s);
    else
        return 0;
    return 1;
}

/* Says what was left out; dies when nothing is left. */
static void set_check(pdb *p, const runset *s)
{
    if (s->n)
        return;
    char *what = esc_ctrl(s->what);
    if (s->total)
        pdb_die("%s: its %zu run%s recorded nothing", what, s->total, s->total == 1 ? "" : "s");
    pdb_die("%s: no such runs in %s", what, p->path);
}

int pdb_set_pick(pdb *p, const pdb_opts *o, int first, runset *s)
{
    memset(s, 0, sizeof *s);
    int given = o->npos - first;
    if (o->all_runs || o->command_sel) {
        if (given > 0)
            pdb_usage_die("%s: --%s names the runs: no RUN besides it", o->cmd, o->all_runs ? "all-runs" : "command");
        if (o->all_runs && o->command_sel)
            pdb_usage_die("%s: --all-runs and --command exclude each other", o->cmd);
        set_from_runs(p, o->command_sel, s);
    } else if (given != 1 || !pdb_set_arg(p, o->pos[first], s)) {
        return 0;
    }
    set_check(p, s);
    return 1;
}

void pdb_set_describe(const runset *s, char *buf, size_t n)
{
    char *what = esc_ctrl(s->what);
    int w = snprintf(buf, n, "%zu run%s summed (%s", s->n, s->n == 1 ? "" : "s", what);
    if (s->empty && w > 0 && (size_t)w < n)
        w += snprintf(buf + w, n - (size_t)w, "; %zu that recorded nothing left out", s->empty);
    if (w > 0 && (size_t)w < n)
        snprintf(buf + w, n - (size_t)w, ")");
    free(what);
}

/* ---- summing a set ---- */

/* A run's row, on its way into the set's: its key (name, or its template
 * group), and the run's clock. */
typedef struct {
    char *key;
    fnrow row;
    double nspt;
} entry;

static int by_line_cmp;   /* qsort has no state: set by pdb_set_load */

static int cmp_entry(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    if (c)
        return c;
    c = strcmp(a->row.file, b->row.file);
    if (c)
        return c;
    if (by_line_cmp && a->row.line != b->row.line)
        return a->row.line < b->row.line ? -1 : 1;
    return strcmp(a->row.name, b->row.name);
}

/* Adds hist (ticks of nspt ns, each call corrected by fix) into h, in ns. */
static void hist_add_ns(piano_hist *h, const hbin *v, size_t n, double nspt, call_fix fix)
{
    for (size_t i = 0; i < n; i++) {
        double ns = call_fix_ns((double)piano_hist_value(v[i].b) * nspt, fix);
        uint64_t u = ns >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(ns);
        h->count[piano_hist_bucket(u)] += v[i].c;
        h->total += v[i].c;
    }
}

/* A call time and how many calls took it: the quantiles of a set are read
 * from these, each as the run's own report reads it (so a set of one run
 * shows that run's p50/p99). */
typedef struct {
    int64_t ns;
    uint64_t c;
} vcount;
/* Each time once, its calls added up: runs of one machine share their clock's
 * calibration, so a function's bins over 472 runs are a few dozen times, not
 * 14,000 entries to sort (jq's test suite: 23% of report --all-runs). at: an
 * open-addressing table of 1 + the index in v of each time, 0 empty. */
typedef struct {
    vcount *v;
    size_t n, cap;
    uint64_t total;
    uint32_t *at;
    size_t nat;   /* a power of two, at least twice n */
} vlist;

static size_t vlist_slot(const vlist *l, int64_t ns)
{
    size_t s = (size_t)(((uint64_t)ns * 0x9E3779B97F4A7C15ull) >> 32) & (l->nat - 1);
    while (l->at[s] && l->v[l->at[s] - 1].ns != ns)
        s = (s + 1) & (l->nat - 1);
    return s;
}

static void vlist_put(vlist *l, int64_t ns, uint64_t c)
{
    l->total += c;
    if (2 * (l->n + 1) > l->nat) {
        l->nat = l->nat ? 2 * l->nat : 128;
        free(l->at);
        l->at = xcalloc(l->nat, sizeof *l->at);
        for (size_t i = 0; i < l->n; i++)
            l->at[vlist_slot(l, l->v[i].ns)] = (uint32_t)(i + 1);
    }
    size_t s = vlist_slot(l, ns);
    if (l->at[s]) {
        l->v[l->at[s] - 1].c += c;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (vcount){ns, c};
    l->at[s] = (uint32_t)l->n;
}

static void vlist_clear(vlist *l)
{
    if (l->at)
        memset(l->at, 0, l->nat * sizeof *l->at);
    l->n = 0;
    l->total = 0;
}

static void vlist_add(vlist *l, const hbin *v, size_t n, double nspt, call_fix fix, int fixed)
{
    for (size_t i = 0; i < n; i++) {
        /* as aggregate.c's finish_row: ticks to ns, then the call's correction */
        double ns = (double)llround((double)piano_hist_value(v[i].b) * nspt);
        if (fixed)
            ns = (double)llround(call_fix_ns(ns, fix));
        vlist_put(l, (int64_t)ns, v[i].c);
    }
}

static int cmp_vcount(const void *x, const void *y)
{
    const vcount *a = x, *b = y;
    return a->ns < b->ns ? -1 : a->ns > b->ns;
}

/* Nearest rank, as piano_hist_quantile; 0 without calls. */
static int64_t vlist_quantile(vlist *l, double q, int sorted)
{
    if (!l->total)
        return 0;
    if (!sorted && l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, cmp_vcount);
    uint64_t rank = (uint64_t)ceil(q * (double)l->total), seen = 0;
    if (rank < 1)
        rank = 1;
    for (size_t i = 0; i < l->n; i++) {
        seen += l->v[i].c;
        if (seen >= rank)
            return l->v[i].ns;
    }
    return l->v[l->n - 1].ns;
}

static hbin *bins_of(const piano_hist *h, size_t *n)
{
    size_t k = 0;
    for (unsigned b = 0; b < PIANO_HIST_BUCKETS; b++)
        k += h->count[b] != 0;
    hbin *v = xmalloc((k ? k : 1) * sizeof *v);
    *n = 0;
    for (unsigned b = 0; b < PIANO_HIST_BUCKETS; b++)
        if (h->count[b])
            v[(*n)++] = (hbin){(uint16_t)b, h->count[b]};
    return v;
}

/* Adds run row e into the set's row cur. */
static void row_add(fnrow *cur, const fnrow *r)
{
    int64_t *const to[] = {&cur->calls, &cur->self_ns, &cur->total_ns, &cur->allocs, &cur->alloc_bytes,
                           &cur->frees, &cur->free_bytes, &cur->child_calls, &cur->unfinished};
    const int64_t from[] = {r->calls, r->self_ns, r->total_ns, r->allocs, r->alloc_bytes,
                            r->frees, r->free_bytes, r->child_calls, r->unfinished};
    for (size_t k = 0; k < sizeof from / sizeof *from; k++)
        *to[k] = sat_add(*to[k], from[k]);
    cur->cpu_known = cur->cpu_known && r->cpu_known;
    int64_t *const cto[] = {&cur->cpu_ns, &cur->cpu_total_ns, &cur->cpu_user_ns, &cur->cpu_sys_ns, &cur->offcpu_ns};
    const int64_t cfrom[] = {r->cpu_ns, r->cpu_total_ns, r->cpu_user_ns, r->cpu_sys_ns, r->offcpu_ns};
    for (int k = 0; k < 5; k++)
        *cto[k] = cur->cpu_known ? sat_add(*cto[k], cfrom[k]) : 0;
    cur->inuse_known = cur->inuse_known && r->inuse_known;
    cur->inuse_objects = cur->inuse_known ? sat_add(cur->inuse_objects, r->inuse_objects) : 0;
    cur->inuse_bytes = cur->inuse_known ? sat_add(cur->inuse_bytes, r->inuse_bytes) : 0;
    cur->peak_inuse_bytes = cur->inuse_known ? sat_add(cur->peak_inuse_bytes, r->peak_inuse_bytes) : 0;
}

/* A forked child's calls inherited from its parent: the calls its parent was
 * in at the fork, in flight in the child from its first tick. The import
 * counts them in the child's run (1*, no self time: import_state.c), which a
 * report of that run shows; in a set the call is the parent's (the run that
 * made it), so the child's rows here lose that call and its unfinished mark,
 * keeping their times. Known from what is stored: a run with a parent, its
 * thread 0's unfinished calls from depth 1 on that all started at the same
 * instant (the fork's tick), each a function its parent run called (the
 * outermost one at the root of a calling context of the parent).
 * inherited_calls lists them, outermost first (n new entries: inh_free). */
typedef struct {
    char *name, *file;
    int64_t line;
} inh_fn;

static size_t inherited_calls(pdb *p, int64_t run, long thread, inh_fn **out)
{
    *out = NULL;
    if (thread >= 0 && thread != 0)
        return 0;
    /* The parent run first, then its contexts alone: with the parent found
     * inside the query, SQLite read every stored run's contexts and functions
     * for each run of the set (a set of N runs cost N^2 blob decodes: 472 jq
     * test runs took minutes). */
    sqlite3_stmt *st = pdb_prepare(p, "SELECT q.id FROM runs r JOIN runs q ON q.key = r.parent_key WHERE r.id = ?1");
    sqlite3_bind_int64(st, 1, run);
    int64_t parent = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (parent < 0)
        return 0;
    st = pdb_prepare(p,
        "SELECT u.depth, u.start_ns, f.name, f.file, f.line, "
        "EXISTS (SELECT 1 FROM contexts c JOIN functions g ON g.run = ?2 AND g.id = +c.fn "
        "WHERE c.run = ?2 AND (u.depth > 1 OR c.parent IS NULL) AND g.name = f.name AND g.file = f.file "
        "AND g.line = f.line) "
        "FROM unfinished u JOIN functions f ON f.run = u.run AND f.id = u.fn "
        "WHERE u.run = ?1 AND u.thread = 0 ORDER BY u.depth");
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, parent);
    int64_t depth = 1, start = -1;
    size_t n = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t d = sqlite3_column_int64(st, 0), t = sqlite3_column_int64(st, 1);
        if (d != depth || (start >= 0 && t != start) || !sqlite3_column_int(st, 5))
            break;
        start = t;
        depth++;
        *out = xrealloc(*out, (n + 1) * sizeof **out);
        (*out)[n++] = (inh_fn){xstrdup((const char *)sqlite3_column_text(st, 2)),
                               xstrdup((const char *)sqlite3_column_text(st, 3)), sqlite3_column_int64(st, 4)};
    }
    sqlite3_finalize(st);
    return n;
}

static void inh_free(inh_fn *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].file);
    }
    free(v);
}

static void drop_inherited(pdb *p, const run_info *r, long thread, int by_line, fnset *f)
{
    inh_fn *v;
    size_t n = inherited_calls(p, r->id, thread, &v);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < f->n; k++) {
            fnrow *w = &f->v[k];
            if (strcmp(w->name, v[i].name) || strcmp(w->file, v[i].file) || (by_line && w->line != v[i].line))
                continue;
            if (w->calls > 0)
                w->calls--;
            if (w->unfinished > 0)
                w->unfinished--;
            break;
        }
    inh_free(v, n);
}

/* The same in a run's calling contexts: the inherited path's nodes lose a call. */
static void drop_inherited_ctree(pdb *p, int64_t run, long thread, ctree *t)
{
    inh_fn *v;
    size_t n = inherited_calls(p, run, thread, &v);
    int node = 0;
    for (size_t i = 0; i < n && node >= 0; i++) {
        int key = -1;
        for (int k = 0; k < t->keys.nkeys && key < 0; k++)
            if (!strcmp(t->keys.names[k], v[i].name) && !strcmp(t->keys.files[k], v[i].file) &&
                t->keys.lines[k] == v[i].line)
                key = k;
        node = key < 0 ? -1 : ctree_child(t, node, key);
        if (node >= 0 && t->v[node].calls > 0)
            t->v[node].calls--;
    }
    inh_free(v, n);
}

void pdb_set_load(pdb *p, const runset *s, long thread, int flags, fnset *out)
{
    memset(out, 0, sizeof *out);
    int group = (flags & AGG_GROUP) != 0, by_line = !group && (flags & AGG_BY_LINE);
    int run_flags = (flags & AGG_CORRECTED) | AGG_KEEP_HIST | (by_line ? AGG_BY_LINE : 0);
    entry *e = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->n; i++) {
        run_info r;
        pdb_run_load(p, s->ids[i], &r);
        fnset f;
        pdb_load_functions(p, &r, thread, run_flags, &f);
        drop_inherited(p, &r, thread, by_line, &f);
        if (n + f.n > cap) {
            cap = (n + f.n) * 2;
            e = xrealloc(e, cap * sizeof *e);
        }
        for (size_t k = 0; k < f.n; k++) {
            e[n].row = f.v[k];
            e[n].key = group ? name_group(f.v[k].name) : xstrdup(f.v[k].name);
            e[n].nspt = r.ns_per_tick;
            n++;
        }
        free(f.v);
        pdb_run_free(&r);
    }
    by_line_cmp = by_line;
    if (n > 1)
        qsort(e, n, sizeof *e, cmp_entry);
    int keep = (flags & AGG_KEEP_HIST) != 0;
    piano_hist *hs = xcalloc(1, sizeof *hs), *ht = xcalloc(1, sizeof *ht);
    vlist ls = {0}, lt = {0};
    for (size_t i = 0; i < n;) {
        size_t j = i;
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 64;
            out->v = xrealloc(out->v, out->cap * sizeof *out->v);
        }
        fnrow *cur = &out->v[out->n++];
        memset(cur, 0, sizeof *cur);
        cur->name = xstrdup(e[i].key);
        cur->file = xstrdup(e[i].row.file);
        cur->line = e[i].row.line;
        cur->cpu_known = cur->inuse_known = 1;
        cur->fix = (call_fix){0, 1};
        for (; j < n && !strcmp(e[j].key, e[i].key) && !strcmp(e[j].row.file, e[i].row.file) &&
               (!by_line || e[j].row.line == e[i].row.line);
             j++) {
            const fnrow *r = &e[j].row;
            row_add(cur, r);
            if (group && (j == i || strcmp(e[j - 1].row.name, r->name)))
                cur->instances++;
            if (keep) {   /* diff's test: the calls binned anew in ns */
                hist_add_ns(hs, r->hist, r->nhist, e[j].nspt, r->fix);
                hist_add_ns(ht, r->hist_total, r->nhist_total, e[j].nspt, (call_fix){0, 1});
            }
            /* finish_row corrects a run's quantiles when its correction moved them */
            int fixed = r->fix.shift_ns > 0 || r->fix.keep != 1;
            vlist_add(&ls, r->hist, r->nhist, e[j].nspt, r->fix, fixed);
            vlist_add(&lt, r->hist_total, r->nhist_total, e[j].nspt, (call_fix){0, 1}, 0);
        }
        if (!group)
            cur->instances = 1;
        cur->p50_ns = vlist_quantile(&ls, 0.50, 0);
        cur->p99_ns = vlist_quantile(&ls, 0.99, 1);
        cur->p50_total_ns = vlist_quantile(&lt, 0.50, 0);
        cur->p99_total_ns = vlist_quantile(&lt, 0.99, 1);
        vlist_clear(&ls);
        vlist_clear(&lt);
        if (keep) {
            cur->hist = bins_of(hs, &cur->nhist);
            cur->hist_total = bins_of(ht, &cur->nhist_total);
            memset(hs, 0, sizeof *hs);
            memset(ht, 0, sizeof *ht);
        }
        for (size_t k = i; k < j; k++) {
            free(e[k].key);
            fnset_row_free(&e[k].row);
        }
        i = j;
    }
    free(hs);
    free(ht);
    free(ls.v);
    free(lt.v);
    free(ls.at);
    free(lt.at);
    free(e);
    fnset_label(out, by_line);
}

int64_t pdb_set_frames(pdb *p, const runset *s, long thread)
{
    int64_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n = sat_add(n, pdb_frame_count(p, s->ids[i], thread));
    return n;
}

/* ---- tag NAME SET ---- */

static void exec_or_die(pdb *p, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(p->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", err ? err : sqlite3_errmsg(p->db));
        sqlite3_free(err);
        sqlite3_exec(p->db, "ROLLBACK", NULL, NULL, NULL);
        pdb_die("cannot write %s: %s", p->path, msg);
    }
}

/* A list of ids as "3..40,45" (runs of consecutive ids as ranges) into a new string. */
static char *ids_spec(const int64_t *ids, size_t n)
{
    char *out = xmalloc(n * 48 + 1);
    out[0] = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        char *at = out + strlen(out);
        if (j == i)
            sprintf(at, "%s%lld", i ? "," : "", (long long)ids[i]);
        else
            sprintf(at, "%s%lld..%lld", i ? "," : "", (long long)ids[i], (long long)ids[j]);
        i = j + 1;
    }
    return out;
}

int runset_tag(pdb *p, const pdb_opts *o, const char *name)
{
    runset s;
    memset(&s, 0, sizeof s);
    size_t cap = 0;
    if (o->all_runs || o->command_sel) {
        if (!pdb_set_pick(p, o, 1, &s))
            return -1;
    } else {
        /* RUN... : runs, id lists and tags (each of their runs) */
        for (int i = 1; i < o->npos; i++) {
            runset part;
            if (pdb_set_arg(p, o->pos[i], &part)) {
                for (size_t k = 0; k < part.n; k++)
                    set_add(&s, &cap, part.ids[k]);
                s.empty += part.empty;
                runset_free(&part);
            } else {
                set_add(&s, &cap, pdb_resolve_run(p, o->pos[i]));
            }
        }
        s.what = xstrdup("runs");
    }
    if (s.n == 0)
        pdb_die("tag: the runs named recorded nothing: '%s' not made", name);
    exec_or_die(p, "BEGIN IMMEDIATE");
    /* A tag names one run (tags) or several (tag_runs): making it anew replaces either. */
    sqlite3_stmt *st = pdb_prepare(p, "DELETE FROM tags WHERE name = ?");
    pdb_bind_text(st, 1, name);
    pdb_step(p, st);
    sqlite3_finalize(st);
    st = pdb_prepare(p, "DELETE FROM tag_runs WHERE name = ?");
    pdb_bind_text(st, 1, name);
    pdb_step(p, st);
    sqlite3_finalize(st);
    st = pdb_prepare(p, "INSERT OR IGNORE INTO tag_runs(name, run) VALUES(?1, ?2)");
    pdb_bind_text(st, 1, name);
    for (size_t i = 0; i < s.n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 2, s.ids[i]);
        pdb_step(p, st);
    }
    sqlite3_finalize(st);
    exec_or_die(p, "COMMIT");
    int64_t held = pdb_tag_runs_count(p, name);
    int64_t *ids = xmalloc((size_t)(held + 1) * sizeof *ids);
    st = pdb_prepare(p, "SELECT run FROM tag_runs WHERE name = ? ORDER BY run");
    pdb_bind_text(st, 1, name);
    size_t k = 0;
    while (pdb_step(p, st) == SQLITE_ROW && (int64_t)k < held)
        ids[k++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    char *spec = ids_spec(ids, k);
    char *shown = esc_ctrl(name);
    printf("tagged '%s' -> %zu run%s (%s)", shown, k, k == 1 ? "" : "s", spec);
    if (s.empty)
        printf("; %zu that recorded nothing left out", s.empty);
    putchar('\n');
    free(shown);
    free(spec);
    free(ids);
    runset_free(&s);
    return 0;
}

/* ---- runs --group command|parent ---- */

typedef struct {
    char *key;          /* the program, or the parent run's id as text ("" none) */
    int64_t parent;     /* --group parent: the parent run (-1 none) */
    char *pcommand;     /* its command */
    int64_t runs, empty, recovered, running, duration, first, last;
    int64_t *ids;
    size_t nids, cap;
} rgroup;

static const emit_col group_cols_command[] = {
    {.head = "Command", .key = "command", .type = COL_TEXT, .flags = COL_LEFT, .cut = 40},
    {.head = "Runs", .key = "runs", .type = COL_INT},
    {.head = "Empty", .key = "empty", .type = COL_INT},
    {.head = "Recovered", .key = "recovered", .type = COL_INT},
    {.head = "Running", .key = "running", .type = COL_INT},
    {.head = "Time", .key = "duration_ns", .type = COL_NS},
    {.head = "First", .key = "first_started", .type = COL_TIME},
    {.head = "Last", .key = "last_started", .type = COL_TIME},
    {.head = "Set", .key = "set", .type = COL_TEXT, .flags = COL_LEFT, .cut = 30},
};
static const emit_col group_cols_parent[] = {
    {.head = "Parent", .key = "parent", .type = COL_INT},
    {.head = "Command", .key = "command", .type = COL_TEXT, .flags = COL_LEFT | COL_FIT_COMMAND},
    {.head = "Runs", .key = "runs", .type = COL_INT},
    {.head = "Empty", .key = "empty", .type = COL_INT},
    {.head = "Recovered", .key = "recovered", .type = COL_INT},
    {.head = "Running", .key = "running", .type = COL_INT},
    {.head = "Time", .key = "duration_ns", .type = COL_NS},
    {.head = "First", .key = "first_started", .type = COL_TIME},
    {.head = "Last", .key = "last_started", .type = COL_TIME},
    {.head = "Set", .key = "set", .type = COL_TEXT, .flags = COL_LEFT, .cut = 30},
};

static int cmp_group_key(const void *x, const void *y)
{
    const rgroup *a = x, *b = y;
    return strcmp(a->key, b->key);
}

/* Most recent group first, as `runs` lists runs. */
static int cmp_group_last(const void *x, const void *y)
{
    const rgroup *a = x, *b = y;
    if (a->last != b->last)
        return a->last > b->last ? -1 : 1;
    return strcmp(a->key, b->key);
}

int runs_grouped(pdb *p, const pdb_opts *o)
{
    int by_parent = !strcmp(o->group, "parent");
    sqlite3_stmt *st = pdb_prepare(p,
        "SELECT r.id, r.command, r.status, r.duration_ns, r.started_ns, " RECORDED ", "
        "(SELECT q.id FROM runs q WHERE q.key = r.parent_key), "
        "(SELECT q.command FROM runs q WHERE q.key = r.parent_key) FROM runs r ORDER BY r.id");
    rgroup *g = NULL;
    size_t n = 0, cap = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        char key[32];
        char *k;
        if (by_parent) {
            if (sqlite3_column_type(st, 6) == SQLITE_NULL)
                key[0] = 0;
            else
                snprintf(key, sizeof key, "%020lld", (long long)sqlite3_column_int64(st, 6));
            k = xstrdup(key);
        } else {
            k = program_of(pdb_col_text(st, 1));
        }
        size_t i = 0;
        while (i < n && strcmp(g[i].key, k))   /* groups are few: a scan */
            i++;
        if (i == n) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                g = xrealloc(g, cap * sizeof *g);
            }
            memset(&g[n], 0, sizeof g[n]);
            g[n].key = k;
            g[n].parent = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
            g[n].pcommand = xstrdup(pdb_col_text(st, 7));
            g[n].first = INT64_MAX;
            g[n].last = INT64_MIN;
            n++;
        } else {
            free(k);
        }
        rgroup *c = &g[i];
        const char *status = pdb_col_text(st, 2);
        int64_t started = sqlite3_column_int64(st, 4);
        c->runs++;
        c->empty += !sqlite3_column_int(st, 5);
        c->recovered += !strcmp(status, "recovered");
        c->running += !strcmp(status, "running");
        c->duration = sat_add(c->duration, sqlite3_column_int64(st, 3));
        if (started < c->first)
            c->first = started;
        if (started > c->last)
            c->last = started;
        if (c->nids == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 16;
            c->ids = xrealloc(c->ids, c->cap * sizeof *c->ids);
        }
        c->ids[c->nids++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (n > 1) {
        qsort(g, n, sizeof *g, cmp_group_key);
        qsort(g, n, sizeof *g, cmp_group_last);
    }
    const emit_col *cols = by_parent ? group_cols_parent : group_cols_command;
    int ncols = by_parent ? (int)(sizeof group_cols_parent / sizeof *cols) : (int)(sizeof group_cols_command / sizeof *cols);
    emitter e;
    emit_begin(&e, stdout, emit_mode_of(o), cols, ncols, p->color ? EMIT_COLOR : 0);
    for (size_t i = 0; i < n; i++) {
        rgroup *c = &g[i];
        char *spec = ids_spec(c->ids, c->nids);
        emit_val v[10];
        memset(v, 0, sizeof v);
        int at = 0;
        if (by_parent) {
            v[at++] = (emit_val){.i = c->parent, .null = c->parent < 0};
            v[at++] = (emit_val){.s = c->pcommand, .null = c->parent < 0};
        } else {
            v[at++] = (emit_val){.s = c->key};
        }
        const int64_t fig[] = {c->runs, c->empty, c->recovered, c->running, c->duration, c->first, c->last};
        for (int k = 0; k < 7; k++)
            v[at++] = (emit_val){.i = fig[k]};
        v[at++] = (emit_val){.s = spec};
        emit_row(&e, v, NULL);
        free(spec);
        free(c->key);
        free(c->pcommand);
        free(c->ids);
    }
    free(g);
    char none[sizeof p->path + 32];
    snprintf(none, sizeof none, "no runs stored in %s yet\n", p->path);
    emit_end(&e, none);
    if (emit_mode_of(o) == EMIT_TABLE && n)
        fputs("\nSet: the runs, as report and diff take them (piano-db report SET sums them; tag NAME SET names them)\n",
              stdout);
    return 0;
}

void runs_hint(pdb *p, size_t shown)
{
    if (shown < 50)
        return;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT command FROM runs");
    char **progs = NULL;
    size_t *counts = NULL, n = 0, most = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        char *prog = program_of(pdb_col_text(st, 0));
        size_t i = 0;
        while (i < n && strcmp(progs[i], prog))
            i++;
        if (i == n) {
            if (n == 64) {   /* many programs: no hint is needed to tell them apart */
                free(prog);
                break;
            }
            progs = xrealloc(progs, (n + 1) * sizeof *progs);
            counts = xrealloc(counts, (n + 1) * sizeof *counts);
            progs[n] = prog;
            counts[n++] = 0;
        } else {
            free(prog);
        }
        if (++counts[i] > most)
            most = counts[i];
    }
    sqlite3_finalize(st);
    if (most >= 10 && n < 64)
        printf("\n%zu runs of %zu program%s: piano-db runs --group command counts them per program; "
               "report --command NAME sums a program's runs\n", shown, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        free(progs[i]);
    free(progs);
    free(counts);
}

/* ---- a set's calling contexts (flamegraph, export) ---- */

/* The union of the runs' function keys: (name, file, line) -> key of the set's tree. */
typedef struct {
    fkeys *k;
    size_t cap;        /* of k's arrays */
    int *slot;         /* open addressing: key or -1 */
    size_t nslot;
} keyunion;

static uint64_t key_hash(const char *name, const char *file, int64_t line)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)line;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *c = file; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

static int keyunion_get(keyunion *u, const char *name, const char *file, int64_t line)
{
    fkeys *k = u->k;
    if (2 * ((size_t)k->nkeys + 1) > u->nslot) {
        free(u->slot);
        u->nslot = u->nslot ? u->nslot * 2 : 1024;
        u->slot = xmalloc(u->nslot * sizeof *u->slot);
        for (size_t i = 0; i < u->nslot; i++)
            u->slot[i] = -1;
        for (int i = 0; i < k->nkeys; i++) {
            size_t s = key_hash(k->names[i], k->files[i], k->lines[i]) & (u->nslot - 1);
            while (u->slot[s] >= 0)
                s = (s + 1) & (u->nslot - 1);
            u->slot[s] = i;
        }
    }
    size_t s = key_hash(name, file, line) & (u->nslot - 1);
    for (; u->slot[s] >= 0; s = (s + 1) & (u->nslot - 1)) {
        int i = u->slot[s];
        if (k->lines[i] == line && !strcmp(k->names[i], name) && !strcmp(k->files[i], file))
            return i;
    }
    if ((size_t)k->nkeys == u->cap) {
        u->cap = u->cap ? u->cap * 2 : 64;
        k->names = xrealloc(k->names, u->cap * sizeof *k->names);
        k->files = xrealloc(k->files, u->cap * sizeof *k->files);
        k->lines = xrealloc(k->lines, u->cap * sizeof *k->lines);
    }
    int i = k->nkeys++;
    k->names[i] = xstrdup(name);
    k->files[i] = xstrdup(file);
    k->lines[i] = line;
    u->slot[s] = i;
    return i;
}

static const fkeys *sort_keys_of;   /* qsort has no state */
static int cmp_key_index(const void *x, const void *y)
{
    const fkeys *k = sort_keys_of;
    int a = *(const int *)x, b = *(const int *)y;
    int c = strcmp(k->names[a], k->names[b]);
    if (c)
        return c;
    c = strcmp(k->files[a], k->files[b]);
    if (c)
        return c;
    return k->lines[a] < k->lines[b] ? -1 : k->lines[a] > k->lines[b];
}

void pdb_set_ctree(pdb *p, const runset *s, long thread, ctree *t)
{
    ctree_empty(t);
    keyunion u = {&t->keys, 0, NULL, 0};
    for (size_t i = 0; i < s->n; i++) {
        ctree one;
        ctree_load(p, s->ids[i], thread, &one);
        drop_inherited_ctree(p, s->ids[i], thread, &one);
        int *map = xmalloc((size_t)(one.keys.nkeys + 1) * sizeof *map);
        for (int k = 0; k < one.keys.nkeys; k++)
            map[k] = keyunion_get(&u, one.keys.names[k], one.keys.files[k], one.keys.lines[k]);
        ctree_merge(t, &one, map);
        free(map);
        ctree_free(&one);
    }
    free(u.slot);
    fkeys *k = &t->keys;
    /* Labels as for one run: names sorted, a name on several keys with its place. */
    int *order = xmalloc((size_t)(k->nkeys + 1) * sizeof *order);
    for (int i = 0; i < k->nkeys; i++)
        order[i] = i;
    sort_keys_of = k;
    if (k->nkeys > 1)
        qsort(order, (size_t)k->nkeys, sizeof *order, cmp_key_index);
    const char **names = xmalloc((size_t)(k->nkeys + 1) * sizeof *names);
    const char **files = xmalloc((size_t)(k->nkeys + 1) * sizeof *files);
    int64_t *lines = xmalloc((size_t)(k->nkeys + 1) * sizeof *lines);
    for (int i = 0; i < k->nkeys; i++) {
        names[i] = k->names[order[i]];
        files[i] = k->files[order[i]];
        lines[i] = k->lines[order[i]];
    }
    char **sorted = fn_labels(names, files, lines, (size_t)k->nkeys, 0);
    k->labels = xmalloc((size_t)(k->nkeys + 1) * sizeof *k->labels);
    for (int i = 0; i < k->nkeys; i++)
        k->labels[order[i]] = sorted[i];
    free(sorted);
    free(names);
    free(files);
    free(lines);
    free(order);
    k->ids = xmalloc(sizeof *k->ids);
    k->key_of = xmalloc(sizeof *k->key_of);
    k->nids = 0;
}

int pdb_pick_run_or_set(pdb *p, const pdb_opts *o, const char *usage, run_info *r, runset *s)
{
    memset(s, 0, sizeof *s);
    if (!pdb_set_pick(p, o, 0, s)) {
        int64_t id;
        pdb_pick_runs(p, o, 0, 1, usage, &id);
        pdb_run_load(p, id, r);
        return 0;
    }
    /* A run of the set's: the first's clock; its command says what the set is; its time spans them. */
    pdb_run_load(p, s->ids[0], r);
    char desc[512];
    pdb_set_describe(s, desc, sizeof desc);
    free(r->command);
    r->command = xstrdup(desc);
    r->id = -1;
    int64_t end = r->started_ns + r->duration_ns, peak = 0;
    int tracked = 0;
    for (size_t i = 0; i < s->n; i++) {
        run_info x;
        pdb_run_load(p, s->ids[i], &x);
        if (x.started_ns < r->started_ns)
            r->started_ns = x.started_ns;
        if (x.started_ns + x.duration_ns > end)
            end = x.started_ns + x.duration_ns;
        if (x.heap_tracked && x.heap_peak_bytes > peak)
            peak = x.heap_peak_bytes;
        tracked |= x.heap_tracked;
        pdb_run_free(&x);
    }
    r->duration_ns = end - r->started_ns;
    r->heap_peak_bytes = peak;
    r->heap_tracked = tracked;
    return 1;
}
