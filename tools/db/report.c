/* report.c - `piano-db report`: per-function figures of one run, as a table, JSON or CSV. */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP 30

static const char *report_keys[] = {"function", "file", "line", "calls", "self_ns", "total_ns",
                                    "p50_ns", "p99_ns", "p50_total_ns", "p99_total_ns", "allocs",
                                    "alloc_bytes", "frees", "free_bytes", "unfinished"};
#define N_KEYS ((int)(sizeof report_keys / sizeof *report_keys))
#define N_VALUES (N_KEYS - 3)   /* after function, file, line */

static void row_values(const fnrow *r, int64_t v[N_VALUES])
{
    int64_t t[N_VALUES] = {r->calls, r->self_ns, r->total_ns, r->p50_ns, r->p99_ns, r->p50_total_ns,
                           r->p99_total_ns, r->allocs, r->alloc_bytes, r->frees, r->free_bytes,
                           r->unfinished};
    memcpy(v, t, sizeof t);
}

static void json_row(FILE *f, const fnrow *r)
{
    int64_t v[N_VALUES];
    row_values(r, v);
    fputs("{\"function\": ", f);
    json_str(f, r->name);
    fputs(", \"file\": ", f);
    json_str(f, r->file);
    fprintf(f, ", \"line\": %lld", (long long)r->line);
    for (int i = 0; i < N_VALUES; i++)
        fprintf(f, ", \"%s\": %lld", report_keys[3 + i], (long long)v[i]);
    fputc('}', f);
}

static void json_rows(FILE *f, const fnset *s, size_t shown, const char *indent)
{
    fputc('[', f);
    for (size_t i = 0; i < shown; i++) {
        fprintf(f, "%s\n%s  ", i ? "," : "", indent);
        json_row(f, &s->v[i]);
    }
    if (shown)
        fprintf(f, "\n%s", indent);
    fputc(']', f);
}

static void csv_header(FILE *f, int threads)
{
    if (threads)
        fputs("thread,tid,thread_name,", f);
    for (int i = 0; i < N_KEYS; i++)
        fprintf(f, "%s%s", i ? "," : "", report_keys[i]);
    fputc('\n', f);
}

static void csv_rows(FILE *f, const fnset *s, size_t shown, const char *prefix)
{
    for (size_t i = 0; i < shown; i++) {
        const fnrow *r = &s->v[i];
        int64_t v[N_VALUES];
        row_values(r, v);
        fputs(prefix, f);
        csv_str(f, r->name);
        fputc(',', f);
        csv_str(f, r->file);
        fprintf(f, ",%lld", (long long)r->line);
        for (int k = 0; k < N_VALUES; k++)
            fprintf(f, ",%lld", (long long)v[k]);
        fputc('\n', f);
    }
}

/* The table of the contract: Function Calls Self p50 p99 Allocs Bytes. The
 * calls of a function some of whose calls were in flight at the end are
 * marked (3*; run_footer says what the mark means). Returns the calls marked. */
static int64_t table_rows(FILE *f, const fnset *s, size_t shown, int color)
{
    static const char *hdr[] = {"Function", "Calls", "Self", "p50", "p99", "Allocs", "Bytes"};
    static const int minw[] = {20, 5, 11, 11, 11, 9, 11};
    table t;
    table_init(&t, 7, hdr, minw);
    t.fit_col = 0; /* names shortened only where nothing is lost (names_fit) */
    int64_t marked = 0;
    for (size_t i = 0; i < shown; i++)
        marked = sat_add(marked, s->v[i].unfinished > 0 ? s->v[i].unfinished : 0);
    for (size_t i = 0; i < shown; i++) {
        const fnrow *r = &s->v[i];
        char calls[32], self[32], p50[32], p99[32], allocs[32], bytes[32];
        /* unmarked figures keep a space where the mark goes, so digits align */
        snprintf(calls, sizeof calls, "%lld%s", (long long)r->calls,
                 r->unfinished > 0 ? "*" : marked ? " " : "");
        fmt_ns(self, sizeof self, (double)r->self_ns);
        fmt_ns(p50, sizeof p50, (double)r->p50_ns);
        fmt_ns(p99, sizeof p99, (double)r->p99_ns);
        snprintf(allocs, sizeof allocs, "%lld", (long long)r->allocs);
        fmt_bytes(bytes, sizeof bytes, r->alloc_bytes);
        const char *cells[] = {r->label, calls, self, p50, p99, allocs, bytes};
        table_add(&t, cells, NULL);
    }
    table_print(&t, f, color);
    table_free(&t);
    if (shown < s->n)
        fprintf(f, "(%zu more function%s hidden: --top N or --all shows them)\n", s->n - shown,
                s->n - shown == 1 ? "" : "s");
    return marked;
}

/* "N frames": every frame of the run (or of thread `thread`), kept or not;
 * for the run, what PIANO_FRAMES kept of them and what was lost. */
static void frames_line(FILE *f, pdb *p, const run_info *r, long thread)
{
    int64_t frames = pdb_frame_count(p, r->id, thread), dropped = thread < 0 ? r->frames_dropped : 0;
    fprintf(f, "%lld frames", (long long)frames); /* fixed wording, for scripts */
    if (thread < 0 && r->frames_kept == 0 && frames > dropped)
        fputs(" (none kept: PIANO_FRAMES=off)", f);
    else if (thread < 0 && r->frames_kept >= 0 && r->frames_kept + dropped < frames)
        fprintf(f, " (%lld kept: %s + a sample)", (long long)r->frames_kept,
                r->spikes_unkept > 0 ? "the first, spikes up to the limit" : "all spikes");
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
    if (!pdb_has_unfinished(p))
        return pdb_unfinished_count(p, run);
    sqlite3_stmt *st = pdb_prepare(p, "SELECT (SELECT count(*) FROM unfinished WHERE run = ?1) - "
                                      "(SELECT coalesce(sum(unfinished), 0) FROM stats WHERE run = ?1)");
    sqlite3_bind_int64(st, 1, run);
    int64_t n = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

/* What the tables above left unsaid; marked: the calls marked in them. */
static void run_footer(FILE *f, pdb *p, const run_info *r, int64_t marked)
{
    int recovered = strcmp(r->status, "recovered") == 0;
    if (marked > 0)
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
    if (recovered)
        fputs("recovered run: the process died and its figures were imported afterwards\n", f);
}

int cmd_report(pdb *p, const pdb_opts *o)
{
    if (o->json && o->csv)
        pdb_usage_die("report: --json and --csv exclude each other");
    int64_t id;
    pdb_pick_runs(p, o, 0, 1, "one RUN or TAG", &id);
    run_info r;
    pdb_run_load(p, id, &r);
    if (o->frames) {
        int rc = cmd_frames(p, o, &r);
        pdb_run_free(&r);
        return rc;
    }
    const char *sort = o->sort ? o->sort : "self";
    int flags = AGG_BY_LINE | (o->uncorrected ? 0 : AGG_CORRECTED);
    int machine = o->json || o->csv;
    FILE *f = stdout;

    if (!o->threads) {
        fnset s;
        pdb_load_functions(p, &r, o->thread_set ? o->thread : -1, flags, &s);
        if (fnset_sort(&s, sort) != 0)
            pdb_usage_die("report: unknown sort key '%s' (self|total|calls|p50|p99|allocs|bytes)", sort);
        size_t shown = shown_rows(o, s.n, machine);
        if (o->json) {
            json_rows(f, &s, shown, "");
            fputc('\n', f);
        } else if (o->csv) {
            csv_header(f, 0);
            csv_rows(f, &s, shown, "");
        } else {
            int64_t marked = table_rows(f, &s, shown, p->color);
            fputc('\n', f);
            frames_line(f, p, &r, o->thread_set ? o->thread : -1);
            run_footer(f, p, &r, marked);
        }
        fnset_free(&s);
        pdb_run_free(&r);
        return 0;
    }

    /* --threads: every thread that has a name or figures, in order. */
    sqlite3_stmt *st = pdb_prepare(p,
        "SELECT t.thread, th.tid, th.name FROM "
        "(SELECT thread FROM threads WHERE run = ?1 UNION SELECT thread FROM stats WHERE run = ?1) t "
        "LEFT JOIN threads th ON th.run = ?1 AND th.thread = t.thread "
        "WHERE ?2 < 0 OR t.thread = ?2 ORDER BY t.thread");
    sqlite3_bind_int64(st, 1, r.id);
    sqlite3_bind_int64(st, 2, o->thread_set ? o->thread : -1);
    if (o->json)
        fputc('[', f);
    else if (o->csv)
        csv_header(f, 1);
    int n = 0;
    int64_t marked = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        long thread = (long)sqlite3_column_int64(st, 0);
        int64_t tid = sqlite3_column_int64(st, 1);
        const char *name = pdb_col_text(st, 2);
        fnset s;
        pdb_load_functions(p, &r, thread, flags, &s);
        if (fnset_sort(&s, sort) != 0)
            pdb_usage_die("report: unknown sort key '%s' (self|total|calls|p50|p99|allocs|bytes)", sort);
        size_t shown = shown_rows(o, s.n, machine);
        if (o->json) {
            fprintf(f, "%s\n  {\"thread\": %ld, \"tid\": %lld, \"name\": ", n ? "," : "", thread,
                    (long long)tid);
            json_str(f, name);
            fputs(", \"functions\": ", f);
            json_rows(f, &s, shown, "  ");
            fputc('}', f);
        } else if (o->csv) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%ld,%lld,", thread, (long long)tid);
            /* the thread name needs CSV quoting: write the prefix row by row */
            for (size_t i = 0; i < shown; i++) {
                fputs(prefix, f);
                csv_str(f, name);
                fputc(',', f);
                fnset one = {&s.v[i], 1, 1};
                csv_rows(f, &one, 1, "");
            }
        } else {
            if (n)
                fputc('\n', f);
            fprintf(f, "Thread %ld (tid %lld", thread, (long long)tid);
            if (*name) {
                fputs(", ", f);
                fputs(name, f);
            }
            fputs(")\n", f);
            marked = sat_add(marked, table_rows(f, &s, shown, p->color));
            frames_line(f, p, &r, thread);
        }
        fnset_free(&s);
        n++;
    }
    sqlite3_finalize(st);
    if (o->json)
        fputs(n ? "\n]\n" : "]\n", f);
    else if (!o->csv) {
        if (n == 0)
            fputs("no threads recorded\n", f);
        fputc('\n', f);
        frames_line(f, p, &r, -1);
        run_footer(f, p, &r, marked);
    }
    pdb_run_free(&r);
    return 0;
}
