/* report.c - `piano-db report`: per-function figures of one run, as a table, JSON or CSV. */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP 30

static const char *report_keys[] = {"function", "file", "line", "calls", "self_ns", "total_ns",
                                    "p50_ns", "p99_ns", "p50_total_ns", "p99_total_ns", "allocs",
                                    "alloc_bytes", "frees", "free_bytes"};

static void row_values(const fnrow *r, int64_t v[11])
{
    int64_t t[11] = {r->calls, r->self_ns, r->total_ns, r->p50_ns, r->p99_ns, r->p50_total_ns,
                     r->p99_total_ns, r->allocs, r->alloc_bytes, r->frees, r->free_bytes};
    memcpy(v, t, sizeof t);
}

static void json_row(FILE *f, const fnrow *r)
{
    int64_t v[11];
    row_values(r, v);
    fputs("{\"function\": ", f);
    json_str(f, r->name);
    fputs(", \"file\": ", f);
    json_str(f, r->file);
    fprintf(f, ", \"line\": %lld", (long long)r->line);
    for (int i = 0; i < 11; i++)
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
    for (int i = 0; i < 14; i++)
        fprintf(f, "%s%s", i ? "," : "", report_keys[i]);
    fputc('\n', f);
}

static void csv_rows(FILE *f, const fnset *s, size_t shown, const char *prefix)
{
    for (size_t i = 0; i < shown; i++) {
        const fnrow *r = &s->v[i];
        int64_t v[11];
        row_values(r, v);
        fputs(prefix, f);
        csv_str(f, r->name);
        fputc(',', f);
        csv_str(f, r->file);
        fprintf(f, ",%lld", (long long)r->line);
        for (int k = 0; k < 11; k++)
            fprintf(f, ",%lld", (long long)v[k]);
        fputc('\n', f);
    }
}

/* The table of the contract: Function Calls Self p50 p99 Allocs Bytes. */
static void table_rows(FILE *f, const fnset *s, size_t shown, int color)
{
    static const char *hdr[] = {"Function", "Calls", "Self", "p50", "p99", "Allocs", "Bytes"};
    static const int minw[] = {20, 5, 11, 11, 11, 9, 11};
    table t;
    table_init(&t, 7, hdr, minw);
    for (size_t i = 0; i < shown; i++) {
        const fnrow *r = &s->v[i];
        char name[256], calls[32], self[32], p50[32], p99[32], allocs[32], bytes[32];
        fmt_cut(name, sizeof name, r->label, 60);
        snprintf(calls, sizeof calls, "%lld", (long long)r->calls);
        fmt_ns(self, sizeof self, (double)r->self_ns);
        fmt_ns(p50, sizeof p50, (double)r->p50_ns);
        fmt_ns(p99, sizeof p99, (double)r->p99_ns);
        snprintf(allocs, sizeof allocs, "%lld", (long long)r->allocs);
        fmt_bytes(bytes, sizeof bytes, r->alloc_bytes);
        const char *cells[] = {name, calls, self, p50, p99, allocs, bytes};
        table_add(&t, cells, NULL);
    }
    table_print(&t, f, color);
    table_free(&t);
    if (shown < s->n)
        fprintf(f, "(%zu more function%s hidden: --top N or --all shows them)\n", s->n - shown,
                s->n - shown == 1 ? "" : "s");
}

static void frames_line(FILE *f, int64_t frames, int64_t dropped)
{
    fprintf(f, "%lld frames", (long long)frames); /* fixed wording, for scripts */
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

static void run_footer(FILE *f, pdb *p, const run_info *r)
{
    int64_t unfinished = pdb_unfinished_count(p, r->id);
    if (unfinished > 0)
        fprintf(f, "%lld call%s unfinished (run ended inside them)\n", (long long)unfinished,
                unfinished == 1 ? "" : "s");
    if (r->samples_dropped > 0)
        fprintf(f, "%lld call%s missing from p50/p99 (histogram memory ran out)\n",
                (long long)r->samples_dropped, r->samples_dropped == 1 ? "" : "s");
    if (r->calls_untimed > 0)
        fprintf(f, "%lld call%s nested too deep to be timed or counted\n",
                (long long)r->calls_untimed, r->calls_untimed == 1 ? "" : "s");
    if (strcmp(r->status, "recovered") == 0)
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
            table_rows(f, &s, shown, p->color);
            fputc('\n', f);
            frames_line(f, pdb_frame_count(p, r.id, o->thread_set ? o->thread : -1),
                        o->thread_set ? 0 : r.frames_dropped);
            run_footer(f, p, &r);
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
            table_rows(f, &s, shown, p->color);
            frames_line(f, pdb_frame_count(p, r.id, thread), 0);
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
        frames_line(f, pdb_frame_count(p, r.id, -1), r.frames_dropped);
        run_footer(f, p, &r);
    }
    pdb_run_free(&r);
    return 0;
}
