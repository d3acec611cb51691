/* report.c - `piano-db report`: per-function figures of one run, as a table, JSON or CSV. */
#include "piano_db.h"
#include "select.h"
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP 30

/* The columns of a function's row: the table of the contract (Function Calls
 * Self p50 p99 Allocs Bytes), every figure in JSON and CSV: the name, file
 * and line, then a column per metric (spool/metrics.h, its order). */
enum { REPORT_M0 = 4, NREPORT = REPORT_M0 + PIANO_M_N };
static emit_col report_cols[NREPORT] = {
    /* names shortened only where nothing is lost (names_fit) */
    {.head = "Function", .type = COL_TEXT, .flags = COL_FIT_NAMES, .minw = 20},
    {.key = "function", .type = COL_TEXT},
    {.key = "file", .type = COL_TEXT},
    {.key = "line", .type = COL_INT},
};

/* The metrics' columns of report_cols; with cpu, the heads of the metrics
 * measured with PIANO_CPU too (report --cpu). */
static void metric_columns(emit_col *cols, int cpu)
{
    for (int m = 0; m < PIANO_M_N; m++) {
        const struct piano_metric_info *x = &pdb_metrics[m];
        int shown = x->head && (x->when != PIANO_WHEN_CPU || cpu);
        cols[REPORT_M0 + m] = (emit_col){
            .head = shown ? x->head : NULL,
            .key = x->id,
            .type = !shown || x->unit == PIANO_UNIT_COUNT ? COL_INT : x->unit == PIANO_UNIT_NS ? COL_NS : COL_BYTES,
            .minw = x->minw,
        };
    }
}

/* report --group template: after a row's figures, the functions it sums. */
static const emit_col instances_col = {.head = "Fns", .key = "instances", .type = COL_INT, .minw = 4};

/* The columns of a report: the contract's table, with --cpu its CPU columns
 * (CPU: self; User, Sys: the inclusive CPU's split; Off-CPU: inclusive), and
 * with --group the functions each row sums (NREPORT + 1 columns). */
static const emit_col *report_columns(int cpu, int group)
{
    static emit_col cols[NREPORT + 1];
    memcpy(cols, report_cols, sizeof report_cols);
    metric_columns(cols, cpu);
    cols[NREPORT] = instances_col;
    (void)group;
    return cols;
}

/* --threads in JSON and CSV: a row per thread, its functions nested. */
static const emit_col thread_cols[] = {
    {.key = "thread", .type = COL_INT},
    {.key = "tid", .type = COL_INT},
    {.key = "name", .type = COL_TEXT, .csv = "thread_name"},
    {.key = "functions", .type = COL_ROWS, .sub = report_cols, .nsub = NREPORT},
};

/* Row r's values into v; calls_shown: room for the table's Calls cell, whose
 * calls some of which were in flight at the end are marked (3*; run_footer
 * says what the mark means); unmarked figures keep a space where the mark
 * goes when any is marked (`marked`), so digits align. */
static void report_values(const fnrow *r, emit_val v[NREPORT], char calls_shown[32], int64_t marked)
{
    memset(v, 0, NREPORT * sizeof *v);
    v[0].s = r->label;
    v[1].s = r->name;
    v[2].s = r->file;
    v[3].i = r->line;
    for (int m = 0; m < PIANO_M_N; m++) {
        v[REPORT_M0 + m].i = *fnrow_metric((fnrow *)r, m);
        v[REPORT_M0 + m].null = !fnrow_known(r, m);   /* not measured, or not kept per snapshot: null, never 0 */
    }
    snprintf(calls_shown, 32, "%lld%s", (long long)r->calls, r->unfinished > 0 ? "*" : marked ? " " : "");
    v[REPORT_M0 + PIANO_M_calls].shown = calls_shown;
}

/* report --heap: who holds the memory, by bytes in use at the end (leaks). */
static const emit_col heap_cols[] = {
    {.head = "Function", .type = COL_TEXT, .flags = COL_FIT_NAMES, .minw = 20},
    {.key = "function", .type = COL_TEXT},
    {.key = "file", .type = COL_TEXT},
    {.key = "line", .type = COL_INT},
    {.head = "In use", .key = "inuse_bytes", .type = COL_BYTES, .minw = 11},
    {.head = "Objects", .key = "inuse_objects", .type = COL_INT, .minw = 7},
    {.head = "At peak", .key = "peak_inuse_bytes", .type = COL_BYTES, .minw = 11},
    {.head = "Allocs", .key = "allocs", .type = COL_INT, .minw = 9},
    {.head = "Bytes", .key = "alloc_bytes", .type = COL_BYTES, .minw = 11},
    {.head = "", .type = COL_TEXT},   /* table only: "leak" (JSON: inuse_objects > 0) */
};
enum { NHEAP = sizeof heap_cols / sizeof *heap_cols };

/* "heap peak: 16.2 MiB", or why there is none. */
static void heap_header(FILE *f, const run_info *r)
{
    if (!r->heap_tracked) {
        fputs("heap in use: not tracked (run with PIANO_HEAP=1)\n", f);
        return;
    }
    char b[32];
    fmt_bytes(b, sizeof b, r->heap_peak_bytes);
    fprintf(f, "heap peak: %s (%lld bytes)\n\n", b, (long long)r->heap_peak_bytes);
}

static void emit_heap(FILE *f, emit_mode mode, const run_info *r, const fnset *s, size_t shown, int color)
{
    if (mode == EMIT_TABLE)
        heap_header(f, r);
    if (mode == EMIT_TABLE && !r->heap_tracked)
        return;
    emitter e;
    emit_begin(&e, f, mode, heap_cols, NHEAP, color ? EMIT_COLOR : 0);
    size_t leaks = 0;
    for (size_t i = 0; i < shown; i++) {
        const fnrow *row = &s->v[i];
        int leak = row->inuse_objects > 0;
        leaks += (size_t)leak;
        emit_val v[NHEAP] = {{.s = row->label}, {.s = row->name}, {.s = row->file}, {.i = row->line},
                             {.i = row->inuse_bytes}, {.i = row->inuse_objects}, {.i = row->peak_inuse_bytes},
                             {.i = row->allocs}, {.i = row->alloc_bytes}, {.s = leak ? "leak" : ""}};
        for (int c = 4; c < 7; c++)
            v[c].null = !row->inuse_known;
        emit_row(&e, v, NULL);
    }
    emit_end(&e, NULL);
    if (mode == EMIT_TABLE && shown < s->n)
        fprintf(f, "(%zu more function%s hidden: --top N or --all shows them)\n", s->n - shown,
                s->n - shown == 1 ? "" : "s");
    if (mode == EMIT_TABLE)
        fprintf(f, "\n%zu function%s with memory still in use at the end (leak: never freed)\n", leaks,
                leaks == 1 ? "" : "s");
}

/* The rows of s (shown of them) as a table, JSON or CSV; returns the calls
 * marked in the table. */
static int64_t emit_functions(FILE *f, emit_mode mode, const fnset *s, size_t shown, int color, int cpu,
                              int group)
{
    int64_t marked = 0;
    for (size_t i = 0; i < shown; i++)
        marked = sat_add(marked, s->v[i].unfinished > 0 ? s->v[i].unfinished : 0);
    emitter e;
    emit_begin(&e, f, mode, report_columns(cpu, group), NREPORT + (group != 0), color ? EMIT_COLOR : 0);
    for (size_t i = 0; i < shown; i++) {
        emit_val v[NREPORT + 1];
        char calls[32];
        report_values(&s->v[i], v, calls, marked);
        v[NREPORT] = (emit_val){.i = s->v[i].instances};
        emit_row(&e, v, NULL);
    }
    emit_end(&e, NULL);
    if (mode == EMIT_TABLE && shown < s->n)
        fprintf(f, "(%zu more function%s hidden: --top N or --all shows them)\n", s->n - shown,
                s->n - shown == 1 ? "" : "s");
    return marked;
}

/* A function's name as a PIANO_FRAME pattern that selects it: without its
 * parameters and template arguments (patterns see names so), and from its
 * last scope with no space ("(anonymous namespace)::f": f). */
static void frame_pattern_of(const char *name, char *out, size_t n)
{
    char *bare = xstrdup(name);
    for (char *c = bare; *c; c++)
        if (*c == '(' && strncmp(c, "(anonymous namespace)", 21) != 0) {
            *c = '\0';
            break;
        }
    piano_select_strip_targs(bare, out, n);
    free(bare);
    char *space = strrchr(out, ' ');
    if (space) {
        char *scope = strstr(space, "::");
        memmove(out, scope ? scope + 2 : space + 1, strlen(scope ? scope + 2 : space + 1) + 1);
    }
}

/* A run without frames whose outermost call never returned (a server's main,
 * a loop left by exit): says how to get frames, naming the outermost call in
 * flight at the end of a function one of whose calls ended (an event loop's
 * turn), if there is one. */
static void frames_hint(FILE *f, pdb *p, const run_info *r)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT fn.name FROM unfinished u JOIN functions fn ON fn.run = u.run AND fn.id = u.fn "
                                      "WHERE u.run = ?1 ORDER BY u.depth, u.thread LIMIT 1");
    sqlite3_bind_int64(st, 1, r->id);
    char *top = pdb_step(p, st) == SQLITE_ROW ? xstrdup((const char *)sqlite3_column_text(st, 0)) : NULL;
    sqlite3_finalize(st);
    if (!top)
        return;
    /* one of its calls ended: not a thread's loop, in flight once per thread */
    st = pdb_prepare(p, "SELECT fn.name FROM unfinished u JOIN functions fn ON fn.run = u.run AND fn.id = u.fn "
                        "WHERE u.run = ?1 AND (SELECT sum(s.calls) FROM stats s WHERE s.run = u.run AND s.fn = u.fn) > "
                        "(SELECT count(*) FROM unfinished o WHERE o.run = u.run AND o.fn = u.fn) "
                        "ORDER BY u.depth, u.thread LIMIT 1");
    sqlite3_bind_int64(st, 1, r->id);
    const char *never = r->status && !strcmp(r->status, "running") ? "has not returned" : "never returned";
    if (pdb_step(p, st) == SQLITE_ROW) {
        char pattern[512];
        frame_pattern_of((const char *)sqlite3_column_text(st, 0), pattern, sizeof pattern);
        fprintf(f, " (none completed: %s %s; PIANO_FRAME=%s makes each of its calls a frame)", top, never, pattern);
    }
    else
        fprintf(f, " (none completed: %s %s; PIANO_FRAME=FUNCTION makes each call of FUNCTION a frame: "
                   "a loop's body, a request's handler)", top, never);
    sqlite3_finalize(st);
    free(top);
}

/* "N frames": every frame of the run (or of thread `thread`), kept or not;
 * for the run, what PIANO_FRAMES kept of them and what was lost. */
static void frames_line(FILE *f, pdb *p, const run_info *r, long thread)
{
    int64_t frames = pdb_frame_count(p, r->id, thread), dropped = thread < 0 ? r->frames_dropped : 0;
    fprintf(f, "%lld frames", (long long)frames); /* fixed wording, for scripts */
    if (thread < 0 && frames == 0)
        frames_hint(f, p, r);
    if (thread < 0 && r->frames_kept == 0 && frames > dropped)
        fputs(" (none kept: PIANO_FRAMES=off)", f);
    else if (thread < 0 && r->frames_kept >= 0 && r->frames_kept + dropped < frames)
        fprintf(f, " (%lld kept: %s + a sample)", (long long)r->frames_kept,
                r->spikes_unkept > 0 ? "the first, spikes up to the limit" : "the first, the longest");
    if (dropped > 0)
        fprintf(f, " (%lld dropped)", (long long)dropped);
    fputc('\n', f);
}

static size_t shown_rows(const pdb_opts *o, size_t n, int machine)
{
    size_t limit = n;
    if (o->top_set)
        limit = (size_t)o->top;
    else if (!machine && !o->all)
        limit = DEFAULT_TOP;
    if (o->all)
        limit = n;
    return limit < n ? limit : n;
}

/* The calls in flight at the end of run `run` that its calls do not include:
 * those of runs stored before schema 4, which listed them only. */
static int64_t uncounted_unfinished(pdb *p, int64_t run)
{
    if (!p->has_metric[PIANO_M_unfinished])
        return pdb_unfinished_count(p, run);
    sqlite3_stmt *st = pdb_prepare(p, "SELECT (SELECT count(*) FROM unfinished WHERE run = ?1) - "
                                      "(SELECT coalesce(sum(unfinished), 0) FROM stats WHERE run = ?1)");
    sqlite3_bind_int64(st, 1, run);
    int64_t n = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

/* A line naming the allocator piano's malloc did not see (runs.allocator,
 * schema 6; runs stored before have no such column or NULL): its
 * allocations are not in the Allocs column. */
static void allocator_line(FILE *f, pdb *p, int64_t run)
{
    if (!p->has_allocator)
        return;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT allocator, (SELECT coalesce(sum(allocs), 0) FROM stats "
                                      "WHERE run = ?1) FROM runs WHERE id = ?1 AND allocator IS NOT NULL");
    sqlite3_bind_int64(st, 1, run);
    if (pdb_step(p, st) == SQLITE_ROW) {
        char *name = esc_ctrl(pdb_col_text(st, 0));
        if (sqlite3_column_int64(st, 1) > 0)
            fprintf(f, "allocations: only those through malloc (the program also uses its own allocator: %s)\n",
                    name);
        else
            fprintf(f, "allocations: not seen (the program uses its own allocator: %s)\n", name);
        free(name);
    }
    sqlite3_finalize(st);
}

/* The run-time PIANO_FNS the run was narrowed by (runs.selection, schema 12). */
static void selection_line(FILE *f, pdb *p, int64_t run)
{
    if (!p->has_selection)
        return;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT selection FROM runs WHERE id = ? AND selection IS NOT NULL");
    sqlite3_bind_int64(st, 1, run);
    if (pdb_step(p, st) == SQLITE_ROW) {
        char *sel = esc_ctrl(pdb_col_text(st, 0));
        fprintf(f, "selection: PIANO_FNS=%s at run time (functions it leaves out were not recorded)\n", sel);
        free(sel);
    }
    sqlite3_finalize(st);
}

/* When piano's own hooks took a fifth of the run or more (its calls times the
 * run's measured cost of a call, runs.overhead_ns): says so, and names the
 * tiny functions (each call under four hooks' cost) that made a tenth of the
 * calls or more, at most three, with the pattern that leaves them out: a name
 * pattern takes tiny helpers too (lz4's LZ4_putIndexOnHash and LZ4_hash5, 87M
 * and 79M calls: its fuzzer ran 5.5x slower). */
static void hooks_line(FILE *f, pdb *p, const run_info *r)
{
    if (!(r->overhead_ns > 0) || r->duration_ns <= 0)
        return;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT coalesce(sum(calls), 0) FROM stats WHERE run = ?1");
    sqlite3_bind_int64(st, 1, r->id);
    int64_t all = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    double hooks_s = (double)all * r->overhead_ns / 1e9, run_s = (double)r->duration_ns / 1e9;
    if (all <= 0 || hooks_s < 0.2 * run_s)
        return;
    fprintf(f, "piano's hooks: about %.3g s of this run's %.3g s (%lld calls, %.0f ns each)", hooks_s, run_s,
            (long long)all, r->overhead_ns);
    /* by name: the patterns leave out every function of that name (static
     * functions of one name in two files are one line) */
    st = pdb_prepare(p, "SELECT f.name, sum(s.calls), sum(s.total_ns) FROM stats s "
                        "JOIN functions f ON f.run = s.run AND f.id = +s.fn WHERE s.run = ?1 GROUP BY f.name "
                        "HAVING sum(s.calls) >= ?2 AND sum(s.total_ns) < ?3 * sum(s.calls) ORDER BY 2 DESC LIMIT 3");
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int64(st, 2, all / 10 > 0 ? all / 10 : 1);
    sqlite3_bind_double(st, 3, 4 * r->overhead_ns);
    char pats[1024] = "";
    size_t n = 0, len = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t calls = sqlite3_column_int64(st, 1);
        char *name = esc_ctrl(pdb_col_text(st, 0)), *pat = name_for_pattern(name);
        fprintf(f, "%s %s (%lld calls, %.0f ns a call)", n++ ? "," : "; most in tiny functions:", pat,
                (long long)calls, (double)sqlite3_column_int64(st, 2) / (double)calls);
        len += (size_t)snprintf(pats + len, len < sizeof pats ? sizeof pats - len : 0, ",!=%s", pat);
        free(pat);
        free(name);
    }
    sqlite3_finalize(st);
    if (n && len < sizeof pats)
        fprintf(f, ": PIANO_FNS='...%s' leaves %s out", pats, n == 1 ? "it" : "them");
    fputc('\n', f);
}

/* A run taken by default that is a forked child (the latest run of a server
 * that forks: redis' BGSAVE child, 10 ms, after the server's hours): names
 * it and its parent, which the user most likely meant, unless the parent
 * recorded nothing (a daemon's launcher, kept only as the child's parent:
 * the child is the server). */
static void child_line(FILE *f, pdb *p, const run_info *r)
{
    if (!r->picked || !r->parent_key || !r->parent_key[0])
        return;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id, command FROM runs WHERE key = ?1");
    sqlite3_bind_text(st, 1, r->parent_key, -1, SQLITE_STATIC);
    if (pdb_step(p, st) == SQLITE_ROW && pdb_run_recorded(p, sqlite3_column_int64(st, 0))) {
        /* as `runs` shows commands (esc_ctrl'd there by the table) */
        char *raw = fmt_command(pdb_col_text(st, 1), 60), *cmd = esc_ctrl(raw);
        char *raw_child = fmt_command(r->command ? r->command : "", 60), *child = esc_ctrl(raw_child);
        long long id = (long long)sqlite3_column_int64(st, 0);
        fprintf(f, "run %lld (%s), the latest, was forked from run %lld (%s): piano-db report %lld shows that one\n",
                (long long)r->id, child, id, cmd, id);
        free(raw);
        free(cmd);
        free(raw_child);
        free(child);
    }
    sqlite3_finalize(st);
}

/* What the tables above left unsaid; marked: the calls marked in them. */
static void run_footer(FILE *f, pdb *p, const run_info *r, int64_t marked)
{
    int recovered = strcmp(r->status, "recovered") == 0, running = strcmp(r->status, "running") == 0;
    if (marked > 0 && running)
        fprintf(f, "* includes %lld call%s in flight now (timed to now)\n", (long long)marked, marked == 1 ? "" : "s");
    else if (marked > 0)
        fprintf(f, "* includes %lld call%s unfinished at the end of the run (timed to %s)\n", (long long)marked,
                marked == 1 ? "" : "s", recovered ? "the last moment the run was seen alive" : "its end");
    int64_t unfinished = uncounted_unfinished(p, r->id);
    if (unfinished > 0)
        fprintf(f, "%lld call%s unfinished (run ended inside them)\n", (long long)unfinished,
                unfinished == 1 ? "" : "s");
    if (r->samples_dropped > 0)
        fprintf(f, "%lld call%s missing from p50/p99 (histogram memory ran out)\n",
                (long long)r->samples_dropped, r->samples_dropped == 1 ? "" : "s");
    if (r->calls_untimed > 0)
        fprintf(f, "%lld call%s left out of the figures (nested too deep, or on a thread piano could not "
                   "record: see the run's piano: line)\n",
                (long long)r->calls_untimed, r->calls_untimed == 1 ? "" : "s");
    allocator_line(f, p, r->id);
    selection_line(f, p, r->id);
    hooks_line(f, p, r);
    if (recovered)
        fputs("recovered run: the process died and its figures were imported afterwards\n", f);
    if (running)
        fputs("running: the process is live; these are its figures so far (it is stored when it ends)\n", f);
    child_line(f, p, r);
}

/* The functions of run r (thread -1: all threads merged), sorted by --sort. */
static void load_sorted(pdb *p, const pdb_opts *o, const run_info *r, long thread, fnset *s)
{
    const char *sort = o->sort ? o->sort : o->heap ? "inuse" : "self";
    pdb_load_functions(p, r, thread,
                       AGG_BY_LINE | (o->uncorrected ? 0 : AGG_CORRECTED) | (o->group ? AGG_GROUP : 0), s);
    if (fnset_sort(s, sort) != 0)
        pdb_usage_die("report: unknown sort key '%s' (%s)", sort, fnset_sort_keys());
}

/* One table (or the rows) of the run's functions, threads merged or one. */
static void report_run(pdb *p, const pdb_opts *o, const run_info *r)
{
    FILE *f = stdout;
    long thread = o->thread_set ? o->thread : -1;
    emit_mode mode = emit_mode_of(o);
    fnset s;
    load_sorted(p, o, r, thread, &s);
    if (o->heap) {
        /* functions that allocated, by bytes in use then at the peak */
        size_t n = 0;
        for (size_t i = 0; i < s.n; i++)
            if (s.v[i].allocs > 0 || s.v[i].inuse_bytes > 0)
                s.v[n++] = s.v[i];
            else
                fnset_row_free(&s.v[i]);
        s.n = n;
        emit_heap(f, mode, r, &s, shown_rows(o, s.n, mode != EMIT_TABLE), p->color);
        fnset_free(&s);
        return;
    }
    int64_t marked = emit_functions(f, mode, &s, shown_rows(o, s.n, mode != EMIT_TABLE), p->color, o->cpu,
                                    o->group != NULL);
    if (mode == EMIT_TABLE) {
        fputc('\n', f);
        frames_line(f, p, r, thread);
        run_footer(f, p, r, marked);
    }
    fnset_free(&s);
}

/* Thread `thread`'s rows, nested in its JSON or CSV row. */
static void emit_thread(emitter *e, const fnset *s, size_t shown, long thread, int64_t tid, const char *name)
{
    emit_val *rows = xcalloc(shown ? shown * NREPORT : 1, sizeof *rows);
    char (*calls)[32] = xmalloc((shown ? shown : 1) * sizeof *calls);
    for (size_t i = 0; i < shown; i++)
        report_values(&s->v[i], rows + i * NREPORT, calls[i], 0);
    emit_val v[] = {{.i = thread}, {.i = tid}, {.s = name}, {.rows = rows, .n = shown}};
    emit_row(e, v, NULL);
    free(calls);
    free(rows);
}

/* --threads: every thread that has a name or figures, in order; a table
 * each, or a row each with its functions nested. */
static void report_threads(pdb *p, const pdb_opts *o, const run_info *r)
{
    FILE *f = stdout;
    emit_mode mode = emit_mode_of(o);
    sqlite3_stmt *st = pdb_prepare(p,
        "SELECT t.thread, th.tid, th.name FROM "
        "(SELECT thread FROM threads WHERE run = ?1 UNION SELECT thread FROM stats WHERE run = ?1) t "
        "LEFT JOIN threads th ON th.run = ?1 AND th.thread = t.thread "
        "WHERE ?2 < 0 OR t.thread = ?2 ORDER BY t.thread");
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int64(st, 2, o->thread_set ? o->thread : -1);
    emitter e;
    if (mode != EMIT_TABLE)
        emit_begin(&e, f, mode, thread_cols, sizeof thread_cols / sizeof *thread_cols, 0);
    int n = 0;
    int64_t marked = 0;
    for (; pdb_step(p, st) == SQLITE_ROW; n++) {
        long thread = (long)sqlite3_column_int64(st, 0);
        int64_t tid = sqlite3_column_int64(st, 1);
        const char *name = pdb_col_text(st, 2);
        fnset s;
        load_sorted(p, o, r, thread, &s);
        size_t shown = shown_rows(o, s.n, mode != EMIT_TABLE);
        if (mode != EMIT_TABLE) {
            emit_thread(&e, &s, shown, thread, tid, name);
        } else {
            char *tname = esc_ctrl(name);
            char tid_text[32] = "tid unknown";   /* 0: a thread started in a seccomp sandbox (doc/running.md) */
            if (tid > 0)
                snprintf(tid_text, sizeof tid_text, "tid %lld", (long long)tid);
            fprintf(f, "%sThread %ld (%s%s%s)\n", n ? "\n" : "", thread, tid_text, *name ? ", " : "", tname);
            free(tname);
            marked = sat_add(marked, emit_functions(f, mode, &s, shown, p->color, o->cpu, o->group != NULL));
            frames_line(f, p, r, thread);
        }
        fnset_free(&s);
    }
    sqlite3_finalize(st);
    if (mode != EMIT_TABLE) {
        emit_end(&e, NULL);
        return;
    }
    if (n == 0)
        fputs("no threads recorded\n", f);
    fputc('\n', f);
    frames_line(f, p, r, -1);
    run_footer(f, p, r, marked);
}

/* report --from/--to: the figures of a window of the run, threads merged;
 * the table's first line says which snapshots made it. */
static void report_window(pdb *p, const pdb_opts *o, const run_info *r)
{
    pdb_window w = { .set = 1, .from_set = o->from != NULL, .to_set = o->to != NULL };
    w.from_s = o->from ? strtod(o->from, NULL) : 0;
    w.to_s = o->to ? strtod(o->to, NULL) : 0;
    pdb_window_resolve(p, r, &w);
    const char *sort = o->sort ? o->sort : "self";
    if (!strcmp(sort, "p50") || !strcmp(sort, "p99") || !strcmp(sort, "total"))
        pdb_usage_die("report: --sort %s is not available for a window (snapshots keep calls, self and allocations)",
                      sort);
    fnset s;
    pdb_load_window(p, r, &w, AGG_BY_LINE | (o->uncorrected ? 0 : AGG_CORRECTED), &s);
    fnset_sort(&s, sort);
    emit_mode mode = emit_mode_of(o);
    char what[160];
    pdb_window_describe(&w, what, sizeof what);
    if (mode == EMIT_TABLE)
        printf("run %lld, window %s\n", (long long)r->id, what);
    emit_functions(stdout, mode, &s, shown_rows(o, s.n, mode != EMIT_TABLE), p->color, o->cpu, 0);
    if (mode == EMIT_TABLE)
        puts("\nwindow: the difference of the two snapshots named above; p50/p99 are not kept per snapshot (-)");
    fnset_free(&s);
}

/* report SET (an id list, a tag naming several runs, --all-runs, --command
 * NAME): the functions of its runs summed (runset.c says how); the table's
 * first line says which runs. */
static void report_set(pdb *p, const pdb_opts *o, const runset *set)
{
    if (o->from || o->to || o->frames || o->threads || o->heap)
        pdb_usage_die("report: a set of runs gives its functions summed (not --from, --to, --frames, --threads "
                      "or --heap)");
    const char *sort = o->sort ? o->sort : "self";
    long thread = o->thread_set ? o->thread : -1;
    fnset s;
    pdb_set_load(p, set, thread,
                 AGG_BY_LINE | (o->uncorrected ? 0 : AGG_CORRECTED) | (o->group ? AGG_GROUP : 0), &s);
    fnset_sort(&s, sort);
    emit_mode mode = emit_mode_of(o);
    char what[512];
    pdb_set_describe(set, what, sizeof what);
    if (mode == EMIT_TABLE)
        printf("%s\n", what);
    int64_t marked = emit_functions(stdout, mode, &s, shown_rows(o, s.n, mode != EMIT_TABLE), p->color, o->cpu,
                                    o->group != NULL);
    if (mode == EMIT_TABLE) {
        printf("\n%lld frames\n", (long long)pdb_set_frames(p, set, thread));
        if (marked > 0)
            printf("* includes %lld call%s unfinished at the end of their runs (timed to their end)\n",
                   (long long)marked, marked == 1 ? "" : "s");
    }
    fnset_free(&s);
}

int cmd_report(pdb *p, const pdb_opts *o)
{
    metric_columns(report_cols, 0);   /* --threads' nested rows (JSON, CSV) */
    if (o->json && o->csv)
        pdb_usage_die("report: --json and --csv exclude each other");
    int64_t id;
    if (o->group && (o->from || o->to || o->frames || o->heap))
        pdb_usage_die("report: --group goes with the functions' table (not --from, --to, --frames or --heap)");
    runset set;
    if (pdb_set_pick(p, o, 0, &set)) {
        if (o->spans)
            pdb_usage_die("report: --spans shows one run's spans (not a set of runs, --all-runs or --command)");
        report_set(p, o, &set);
        runset_free(&set);
        return 0;
    }
    pdb_pick_runs(p, o, 0, 1, "one RUN or TAG", &id);
    run_info r;
    pdb_run_load(p, id, &r);
    r.picked = o->npos == 0;
    if (o->spans)
        report_spans(p, o, &r);
    else if (o->from || o->to)
        report_window(p, o, &r);
    else if (o->frames)
        cmd_frames(p, o, &r);
    else if (o->threads)
        report_threads(p, o, &r);
    else
        report_run(p, o, &r);
    pdb_run_free(&r);
    return 0;
}
