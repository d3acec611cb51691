/*
 * query.c - what the commands read, in one place: runs (lookup, the default
 * runs, a run's row), function keys and their labels, the frames of a run
 * (the bounded view, the spike threshold, the fns blobs decoded).
 */
#include "fns_blob.h"
#include "piano_db.h"
#include "frames_blob.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- runs ---- */

static int64_t lookup_id(pdb *p, const char *sql, const char *arg, int as_int)
{
    sqlite3_stmt *st = pdb_prepare(p, sql);
    if (as_int)
        sqlite3_bind_int64(st, 1, strtoll(arg, NULL, 10));
    else
        pdb_bind_text(st, 1, arg);
    int64_t id = -1;
    if (pdb_step(p, st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return id;
}

/* Order of lookup: a run id (digits), a run key, then a tag name. */
int64_t pdb_resolve_run(pdb *p, const char *arg)
{
    int digits = *arg != 0 && strlen(arg) < 19;
    for (const char *c = arg; *c; c++)
        if (!isdigit((unsigned char)*c))
            digits = 0;
    int64_t id = -1;
    if (digits)
        id = lookup_id(p, "SELECT id FROM runs WHERE id = ?", arg, 1);
    if (id < 0)
        id = lookup_id(p, "SELECT id FROM runs WHERE key = ?", arg, 0);
    if (id < 0)
        id = lookup_id(p, "SELECT run FROM tags WHERE name = ?", arg, 0);
    if (id < 0 && p->has_tag_runs) {
        /* a tag naming several runs (runset.c): report and diff sum them */
        int64_t n = lookup_id(p, "SELECT count(*) FROM tag_runs WHERE name = ?", arg, 0);
        if (n > 0)
            pdb_die("tag '%s' names %lld runs: report, diff, flamegraph and export take a set of runs, "
                    "not this command", esc_ctrl(arg), (long long)n);
    }
    if (id < 0 && strspn(arg, "0123456789.,") == strlen(arg) && strpbrk(arg, ".,"))
        pdb_die("'%s' names several runs: report, diff, flamegraph and export take a set of runs, not this command",
                arg);
    if (id < 0)
        pdb_die("no run or tag '%s' in %s", esc_ctrl(arg), p->path);
    return id;
}

/* Whether run r (a row of runs) recorded something: a call, an allocation or
 * a frame. */
#define RECORDED_SQL                                                                   \
    "(EXISTS (SELECT 1 FROM stats s WHERE s.run = r.id AND (s.calls > 0 OR s.allocs > 0)) " \
    " OR EXISTS (SELECT 1 FROM frame_blocks f WHERE f.run = r.id)"                    \
    " OR EXISTS (SELECT 1 FROM frame_rows f WHERE f.run = r.id))"

/* The n latest runs (newest first), those that recorded something before
 * those that did not: a build tool's exec'd children leave empty runs that no
 * default should pick. Returns how many. */
static int latest_runs(pdb *p, int n, int64_t *ids, int64_t *started)
{
    sqlite3_stmt *st = pdb_prepare(p,
        "SELECT id, started_ns FROM runs r ORDER BY " RECORDED_SQL " DESC, "
        "started_ns DESC, id DESC LIMIT ?");
    sqlite3_bind_int(st, 1, n);
    int k = 0;
    while (k < n && pdb_step(p, st) == SQLITE_ROW) {
        ids[k] = sqlite3_column_int64(st, 0);
        started[k] = sqlite3_column_int64(st, 1);
        k++;
    }
    sqlite3_finalize(st);
    return k;
}

int pdb_run_recorded(pdb *p, int64_t id)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT " RECORDED_SQL " FROM runs r WHERE r.id = ?");
    sqlite3_bind_int64(st, 1, id);
    int recorded = pdb_step(p, st) == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return recorded;
}

void pdb_pick_runs(pdb *p, const pdb_opts *o, int first, int want, const char *usage, int64_t *ids)
{
    int given = o->npos - first;
    if (given < 0)
        given = 0;
    if (given > want)
        pdb_usage_die("%s: too many arguments (%s)", o->cmd, usage);
    int64_t got[2], started[2];
    int k = given < want ? latest_runs(p, want, got, started) : 0;
    if (want == 1) {
        if (given)
            ids[0] = pdb_resolve_run(p, o->pos[first]);
        else if (k)
            ids[0] = got[0];
        else
            pdb_die("no runs stored in %s yet", p->path);
        return;
    }
    if (given == 2) {
        ids[0] = pdb_resolve_run(p, o->pos[first]);
        ids[1] = pdb_resolve_run(p, o->pos[first + 1]);
    } else if (given == 1) {
        ids[0] = pdb_resolve_run(p, o->pos[first]);
        if (!k)
            pdb_die("no runs stored in %s yet", p->path);
        ids[1] = got[0];
    } else {
        if (k < 2)
            pdb_die("%s%s needs two runs; %s holds %s", o->cmd, o->diff ? " --diff" : "", p->path,
                    k ? "one" : "none");
        /* The older of the two is A. */
        int newer = started[0] > started[1] || (started[0] == started[1] && got[0] > got[1]) ? 0 : 1;
        ids[0] = got[1 - newer];
        ids[1] = got[newer];
    }
}

void pdb_run_load(pdb *p, int64_t id, run_info *r)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT id, key, parent_key, pid, command, started_ns, "
                                      "duration_ns, status, ns_per_tick, overhead_ns, "
                                      "frames_dropped, samples_dropped, calls_untimed, "
                                      "coalesce(frames, -1), coalesce(frames_kept, -1), spikes_unkept, "
                                      "%s, %s FROM runs WHERE id = ?",
             p->has_inuse ? "heap_peak_bytes" : "NULL", p->has_cpu ? "cpu_mode = 'perf'" : "0");
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, id);
    if (pdb_step(p, st) != SQLITE_ROW)
        pdb_die("no run %lld in %s", (long long)id, p->path);
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->key = xstrdup(pdb_col_text(st, 1));
    r->parent_key = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL : xstrdup(pdb_col_text(st, 2));
    r->pid = sqlite3_column_int64(st, 3);
    r->command = xstrdup(pdb_col_text(st, 4));
    r->started_ns = sqlite3_column_int64(st, 5);
    r->duration_ns = sqlite3_column_int64(st, 6);
    r->status = xstrdup(pdb_col_text(st, 7));
    r->ns_per_tick = sqlite3_column_double(st, 8);
    r->overhead_ns = sqlite3_column_double(st, 9);
    r->frames_dropped = sqlite3_column_int64(st, 10);
    r->samples_dropped = sqlite3_column_int64(st, 11);
    r->calls_untimed = sqlite3_column_int64(st, 12);
    r->frames = sqlite3_column_int64(st, 13);
    r->frames_kept = sqlite3_column_int64(st, 14);
    r->spikes_unkept = sqlite3_column_int64(st, 15);
    r->heap_tracked = sqlite3_column_type(st, 16) != SQLITE_NULL;
    r->heap_peak_bytes = sqlite3_column_int64(st, 16);
    r->cpu_measured = sqlite3_column_int(st, 17);
    if (!(r->ns_per_tick > 0))
        r->ns_per_tick = 1.0;
    if (!(r->overhead_ns > 0))
        r->overhead_ns = 0;
    sqlite3_finalize(st);
}

void pdb_run_free(run_info *r)
{
    free(r->key);
    free(r->parent_key);
    free(r->command);
    free(r->status);
    memset(r, 0, sizeof *r);
}

/* Column col of the run's row in runs (thread < 0) or of its thread's in
 * threads, stepped; *has: there is such a row and col is not NULL in it. */
static sqlite3_stmt *run_or_thread(pdb *p, const char *col, int64_t run, long thread, int *has)
{
    char sql[128];
    if (thread < 0)
        snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE id = ?", col);
    else
        snprintf(sql, sizeof sql, "SELECT %s FROM threads WHERE run = ? AND thread = ?", col);
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, run);
    if (thread >= 0)
        sqlite3_bind_int64(st, 2, thread);
    *has = pdb_step(p, st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    return st;
}

/* The stored count; for runs stored without one (fixtures, hand-made), the
 * kept frames counted (frames_count_rows: the blocks' counts, no frame decoded
 * but a thread's). */
int64_t pdb_frame_count(pdb *p, int64_t run, long thread)
{
    int stored;
    sqlite3_stmt *st = run_or_thread(p, "frames", run, thread, &stored);
    int64_t n = stored ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return stored ? n : frames_count_rows(p, run, thread, NULL, 0);
}

int pdb_frame_hist(pdb *p, int64_t run, long thread, piano_hist *h)
{
    memset(h, 0, sizeof *h);
    int has;
    sqlite3_stmt *st = run_or_thread(p, "frame_hist", run, thread, &has);
    if (has && piano_hist_add_blob(h, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0)) != 0)
        pdb_die("run %lld: malformed frame histogram in %s", (long long)run, p->path);
    sqlite3_finalize(st);
    return has;
}

double pdb_frames_median(pdb *p, int64_t run, long thread, int64_t n)
{
    if (n <= 0)
        return 0;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT total_ns FROM frames WHERE run = ?1 AND (?2 < 0 OR thread = ?2) "
                                      "ORDER BY total_ns LIMIT ?3 OFFSET ?4");
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, thread);
    sqlite3_bind_int64(st, 3, n % 2 ? 1 : 2);
    sqlite3_bind_int64(st, 4, (n - 1) / 2);
    double sum = 0;
    int k = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        sum += (double)sqlite3_column_int64(st, 0);
        k++;
    }
    sqlite3_finalize(st);
    return k ? sum / k : 0;
}

int64_t pdb_unfinished_count(pdb *p, int64_t run)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM unfinished WHERE run = ?");
    sqlite3_bind_int64(st, 1, run);
    int64_t n = 0;
    if (pdb_step(p, st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* ---- function labels and keys ---- */

char **fn_labels(const char *const *names, const char *const *files, const int64_t *lines, size_t n,
                 int short_files)
{
    char **out = xcalloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(names[j], names[i]) == 0)
            j++;
        char **shortf = j - i > 1 && short_files ? paths_short(files + i, j - i) : NULL;
        for (size_t k = i; k < j; k++) {
            const char *file = shortf ? shortf[k - i] : files[k];
            size_t len = strlen(names[k]) + strlen(file) + 32;
            out[k] = xmalloc(len);
            if (j - i == 1)
                snprintf(out[k], len, "%s", names[k]);
            else if (lines)
                snprintf(out[k], len, "%s (%s:%lld)", names[k], file, (long long)lines[k]);
            else
                snprintf(out[k], len, "%s (%s)", names[k], file);
        }
        names_free(shortf, j - i);
        i = j;
    }
    return out;
}

static int cmp_id(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* A new key at the end of k's arrays (grown by doubling, cap keys held). */
static int fkeys_add(fkeys *k, size_t *cap, const char *name, const char *file, int64_t line)
{
    if ((size_t)k->nkeys == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        k->names = xrealloc(k->names, *cap * sizeof *k->names);
        k->files = xrealloc(k->files, *cap * sizeof *k->files);
        k->lines = xrealloc(k->lines, *cap * sizeof *k->lines);
    }
    k->names[k->nkeys] = xstrdup(name);
    k->files[k->nkeys] = xstrdup(file);
    k->lines[k->nkeys] = line;
    return k->nkeys++;
}

void fkeys_load(pdb *p, int64_t run, fkeys *k)
{
    memset(k, 0, sizeof *k);
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id, name, file, line FROM functions WHERE run = ? "
                                      "ORDER BY name, file, line, id");
    sqlite3_bind_int64(st, 1, run);
    size_t cap = 0, kcap = 0;
    int64_t *pairs = NULL; /* id, key */
    while (pdb_step(p, st) == SQLITE_ROW) {
        const char *name = pdb_col_text(st, 1), *file = pdb_col_text(st, 2);
        int64_t line = sqlite3_column_int64(st, 3);
        int last = k->nkeys - 1;
        if (last < 0 || strcmp(k->names[last], name) || strcmp(k->files[last], file) || k->lines[last] != line)
            last = fkeys_add(k, &kcap, name, file, line);
        if (k->nids == cap) {
            cap = cap ? cap * 2 : 64;
            pairs = xrealloc(pairs, cap * 2 * sizeof *pairs);
        }
        pairs[2 * k->nids] = sqlite3_column_int64(st, 0);
        pairs[2 * k->nids + 1] = last;
        k->nids++;
    }
    sqlite3_finalize(st);
    if (k->nids > 1)   /* no functions: pairs is NULL, which qsort must not get */
        qsort(pairs, k->nids, 2 * sizeof *pairs, cmp_id);
    k->ids = xmalloc((k->nids + 1) * sizeof *k->ids);
    k->key_of = xmalloc((k->nids + 1) * sizeof *k->key_of);
    for (size_t i = 0; i < k->nids; i++) {
        k->ids[i] = pairs[2 * i];
        k->key_of[i] = (int)pairs[2 * i + 1];
    }
    free(pairs);
    /* The last key is "(unknown)", for ids the functions table does not hold. */
    fkeys_add(k, &kcap, "(unknown)", "", 0);
    k->labels = fn_labels((const char *const *)k->names, (const char *const *)k->files, k->lines,
                          (size_t)k->nkeys, 0);
}

size_t fkeys_index(const fkeys *k, int64_t id)
{
    size_t lo = 0, hi = k->nids;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (k->ids[mid] < id)
            lo = mid + 1;
        else if (k->ids[mid] > id)
            hi = mid;
        else
            return mid;
    }
    return k->nids;
}

int fkeys_find(const fkeys *k, int64_t id)
{
    size_t i = fkeys_index(k, id);
    return i < k->nids ? k->key_of[i] : k->nkeys - 1;
}

void fkeys_free(fkeys *k)
{
    for (int i = 0; i < k->nkeys; i++) {
        free(k->names[i]);
        free(k->files[i]);
        free(k->labels[i]);
    }
    free(k->names);
    free(k->files);
    free(k->labels);
    free(k->lines);
    free(k->ids);
    free(k->key_of);
    memset(k, 0, sizeof *k);
}

size_t fns_decode(pdb *p, const fkeys *k, const unsigned char *b, size_t len, int64_t seq, fnself **buf,
                  size_t *cap)
{
    size_t n = 0;
    for (size_t at = 0; at < len;) {
        uint32_t id;
        uint64_t ns;
        if (piano_fns_get(b, len, &at, &id, &ns) != 0)
            pdb_die("frame %lld: malformed fns blob in %s", (long long)seq, p->path);
        int key = fkeys_find(k, id);
        size_t j = 0;
        while (j < n && (*buf)[j].key != key)
            j++;
        if (j == n) {
            if (n == *cap) {
                *cap = *cap ? *cap * 2 : 16;
                *buf = xrealloc(*buf, *cap * sizeof **buf);
            }
            (*buf)[n++] = (fnself){key, 0};
        }
        (*buf)[j].self_ns = sat_add((*buf)[j].self_ns, ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
    }
    return n;
}

/* ---- frames ---- */

/* A count from sql, binding ?1 run, ?2 thread and ?3 x. */
static int64_t count_of(pdb *p, const char *sql, int64_t run, long thread, double x)
{
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_int64(st, 2, thread);
    if (sqlite3_bind_parameter_count(st) >= 3)
        sqlite3_bind_double(st, 3, x);
    int64_t n = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

/* The run's marks and its frames in all: the blocks' counts (frame_blocks.n,
 * .spikes) and the rows of frame_rows, no frame decoded. Others go through
 * the view frames. */
int64_t frames_count_rows(pdb *p, int64_t run, long thread, const char *cond, double x)
{
    if (cond && !strcmp(cond, "spike"))   /* the run's marks: the partial indexes (the planner prefers the keys) */
        return sat_add(count_of(p, "SELECT count(*) FROM frame_rows INDEXED BY frames_spikes WHERE run = ?1 AND spike",
                                run, thread, x),
                       count_of(p, "SELECT coalesce(sum(spikes), 0) FROM frame_blocks INDEXED BY frame_blocks_spikes "
                                   "WHERE run = ?1 AND spikes", run, thread, x));
    if (!cond && thread < 0)
        return sat_add(count_of(p, "SELECT count(*) FROM frame_rows WHERE run = ?1", run, thread, x),
                       count_of(p, "SELECT coalesce(sum(n), 0) FROM frame_blocks WHERE run = ?1", run, thread, x));
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM frames WHERE run = ?1 AND (?2 < 0 OR thread = ?2)%s%s",
             cond ? " AND " : "", cond ? cond : "");
    return count_of(p, sql, run, thread, x);
}

void frames_split(pdb *p, const run_info *r, long thread, int from_table, frame_split *s)
{
    memset(s, 0, sizeof *s);
    s->stored = -1;
    piano_hist *h = xcalloc(1, sizeof *h);
    s->has_hist = pdb_frame_hist(p, r->id, thread, h);
    if (s->has_hist) {
        s->median_ns = (double)piano_hist_quantile(h, 0.5) * r->ns_per_tick;
        s->spike_ns = piano_frame_spike_ns(h, r->ns_per_tick);
    } else if (from_table) {
        s->stored = frames_count_rows(p, r->id, thread, NULL, 0);
        s->median_ns = pdb_frames_median(p, r->id, thread, s->stored);
        s->spike_ns = 2 * s->median_ns;
    }
    free(h);
}

/* ---- reading frames in order: frame_rows merged with frame_blocks ---- */

#define ROW_COLS "seq, thread, start_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, fns, thread_seq, spike, cpu_ns"

void frame_scan_open(frame_scan *s, pdb *p, int64_t run, long thread, int spikes_only, int64_t after)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->run = run;
    s->thread = spikes_only ? -1 : thread;
    s->spikes_only = spikes_only;
    s->after = after;
    /* each in seq order: the key of frame_rows (or its index of spikes), the blocks' (run, seq) */
    s->rows = pdb_prepare(p, spikes_only
        ? "SELECT " ROW_COLS " FROM frame_rows INDEXED BY frames_spikes WHERE run = ?1 AND spike AND seq > ?3 "
          "ORDER BY seq"
        : "SELECT " ROW_COLS " FROM frame_rows WHERE run = ?1 AND (?2 < 0 OR thread = ?2) AND seq > ?3 ORDER BY seq");
    s->blocks = pdb_prepare(p, spikes_only
        ? "SELECT frames, seq FROM frame_blocks INDEXED BY frame_blocks_spikes WHERE run = ?1 AND spikes AND last > ?3 "
          "ORDER BY seq"
        : "SELECT frames, seq FROM frame_blocks WHERE run = ?1 AND last > ?3 ORDER BY seq");
    sqlite3_stmt *const st[] = {s->rows, s->blocks};
    for (int i = 0; i < 2; i++) {
        sqlite3_bind_int64(st[i], 1, run);
        if (sqlite3_bind_parameter_count(st[i]) >= 2)
            sqlite3_bind_int64(st[i], 2, thread);
        sqlite3_bind_int64(st[i], 3, after);
    }
    s->advance_rows = s->advance_block = 1;
}

/* The next row of frame_rows into s->row_r: 1, or 0 at their end. */
static int scan_row(frame_scan *s)
{
    sqlite3_stmt *st = s->rows;
    if (!st || pdb_step(s->p, st) != SQLITE_ROW)
        return 0;
    piano_frame_row *f = &s->row_r;
    int64_t *const cols[] = {&f->seq, &f->thread, &f->start_ns, &f->total_ns,
                             &f->allocs, &f->alloc_bytes, &f->frees, &f->free_bytes};
    for (int c = 0; c < 8; c++)
        *cols[c] = sqlite3_column_int64(st, c);
    f->fns = sqlite3_column_blob(st, 8);
    f->fns_len = (size_t)sqlite3_column_bytes(st, 8);
    f->has_thread_seq = sqlite3_column_type(st, 9) != SQLITE_NULL;
    f->thread_seq = sqlite3_column_int64(st, 9);
    f->spike = sqlite3_column_int(st, 10) != 0;
    f->has_cpu = sqlite3_column_type(st, 11) != SQLITE_NULL;
    f->cpu_ns = sqlite3_column_int64(st, 11);
    return 1;
}

/* The next frame of the blocks that the scan takes into s->blk.row: 1, or 0
 * at their end. Dies on a malformed block. */
static int scan_block(frame_scan *s)
{
    for (;;) {
        int rc = s->in_block ? piano_frames_next(&s->blk) : 0;
        if (rc < 0)
            pdb_die("run %lld: malformed block of frames (from frame %lld) in %s", (long long)s->run,
                    (long long)s->block_seq, s->p->path);
        if (rc == 0) {
            s->in_block = 0;
            if (!s->blocks || pdb_step(s->p, s->blocks) != SQLITE_ROW)
                return 0;
            s->block_seq = sqlite3_column_int64(s->blocks, 1);
            if (piano_frames_open(&s->blk, sqlite3_column_blob(s->blocks, 0),
                                  (size_t)sqlite3_column_bytes(s->blocks, 0)) != 0)
                pdb_die("run %lld: malformed block of frames (from frame %lld) in %s", (long long)s->run,
                        (long long)s->block_seq, s->p->path);
            s->in_block = 1;
            continue;
        }
        const piano_frame_row *f = &s->blk.row;
        if (f->seq > s->after && (s->thread < 0 || f->thread == s->thread) && (!s->spikes_only || f->spike))
            return 1;
    }
}

const piano_frame_row *frame_scan_next(frame_scan *s)
{
    if (s->advance_rows)
        s->has_row = scan_row(s);
    if (s->advance_block)
        s->has_block = scan_block(s);
    s->advance_rows = s->advance_block = 0;
    if (s->has_row && (!s->has_block || s->row_r.seq <= s->blk.row.seq)) {
        s->advance_rows = 1;
        return &s->row_r;
    }
    if (s->has_block) {
        s->advance_block = 1;
        return &s->blk.row;
    }
    return NULL;
}

void frame_scan_close(frame_scan *s)
{
    sqlite3_finalize(s->rows);
    sqlite3_finalize(s->blocks);
    memset(s, 0, sizeof *s);
}

/* The frames of window w, in order: the first w->first (-1: all), then up to
 * w->spikes (-1: all) spikes after them, through the partial indexes of
 * frame_rows and frame_blocks (use_col) or as total_ns > spike_ns. Reads
 * only the blocks that hold what it returns when use_col, so a run of 100 M
 * frames shows in milliseconds. */
void frame_iter_open(frame_iter *it, pdb *p, const fkeys *k, int64_t run, long thread, const frame_window *w)
{
    memset(it, 0, sizeof *it);
    it->p = p;
    it->k = k;
    it->run = run;
    it->thread_want = thread;
    it->win = *w;
    it->phase = 0;
    if (w->first)
        frame_scan_open(&it->scan, p, run, thread, 0, INT64_MIN);
    else
        it->phase = 1;
}

int frame_iter_next(frame_iter *it)
{
    const piano_frame_row *f = NULL;
    for (;;) {
        if (it->phase == 0) {
            if (it->win.first < 0 || it->shown < it->win.first)
                f = frame_scan_next(&it->scan);
            if (f) {
                it->shown++;
                it->after = f->seq;
                break;
            }
            frame_scan_close(&it->scan);
            it->phase = 1;
            if (!it->shown)
                it->after = 0;
        }
        if (it->phase == 1) {
            it->phase = 2;
            if (!it->win.spikes || it->win.first < 0)
                return 0;
            frame_scan_open(&it->scan, it->p, it->run, it->thread_want, it->win.use_col, it->after);
        }
        if (it->win.spikes >= 0 && it->spikes_shown >= it->win.spikes)
            return 0;
        while ((f = frame_scan_next(&it->scan)) && !it->win.use_col && !((double)f->total_ns > it->win.spike_ns))
            ;
        if (!f)
            return 0;
        it->spikes_shown++;
        break;
    }
    it->seq = f->seq;
    it->thread = f->thread;
    it->start_ns = f->start_ns;
    it->total_ns = f->total_ns;
    it->allocs = f->allocs;
    it->alloc_bytes = f->alloc_bytes;
    it->frees = f->frees;
    it->free_bytes = f->free_bytes;
    it->cpu_known = it->p->has_cpu && f->has_cpu;
    it->cpu_ns = it->cpu_known ? f->cpu_ns : 0;
    it->nfns = fns_decode(it->p, it->k, f->fns, f->fns_len, it->seq, &it->fns, &it->cap);
    return 1;
}

void frame_iter_close(frame_iter *it)
{
    frame_scan_close(&it->scan);
    free(it->fns);
    memset(it, 0, sizeof *it);
}
