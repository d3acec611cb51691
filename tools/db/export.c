/*
 * export.c - `piano-db export --format folded|chrome|callgrind` (pprof is in
 * pprof.c): a run in other profilers' formats.
 *
 * folded and callgrind come from the calling contexts merged across threads
 * (ctxtree.c), chrome from the frames table. Figures are as stored (no
 * overhead correction), so they add up to the tables exactly.
 */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

/* s with each byte of `bad` written as `with`. */
static void put_clean(FILE *f, const char *s, const char *bad, char with)
{
    for (; *s; s++)
        fputc(strchr(bad, *s) ? with : *s, f);
}

static void put_path(FILE *f, const ctree *t, int node)
{
    if (node <= 0)
        return;
    if (t->v[node].parent > 0) {
        put_path(f, t, t->v[node].parent);
        fputc(';', f);
    }
    put_clean(f, t->keys.labels[t->v[node].key], ";\n\r", ':');
}

/* Folded stacks: one line per path with self time, in tree order. */
static void export_folded(FILE *f, const ctree *t)
{
    for (size_t i = 1; i < t->n; i++) {
        if (t->v[i].self_ns <= 0)
            continue;
        put_path(f, t, (int)i);
        fprintf(f, " %lld\n", (long long)t->v[i].self_ns);
    }
}

static void callgrind_name(FILE *f, const char *what, int id, const char *name, char *seen)
{
    fprintf(f, "%s=(%d)", what, id);
    if (!seen[id]) {
        fputc(' ', f);
        put_clean(f, name, "\n\r", ' ');
        seen[id] = 1;
    }
    fputc('\n', f);
}

static void export_callgrind(FILE *f, const ctree *t, const run_info *r)
{
    const fkeys *k = &t->keys;
    /* File ids: the first key with the same file. */
    int *file_id = xmalloc((size_t)k->nkeys * sizeof *file_id);
    for (int i = 0; i < k->nkeys; i++) {
        file_id[i] = i + 1;
        for (int j = 0; j < i; j++)
            if (!strcmp(k->files[i], k->files[j])) {
                file_id[i] = file_id[j];
                break;
            }
    }
    char *fl_seen = xcalloc((size_t)k->nkeys + 2, 1), *fn_seen = xcalloc((size_t)k->nkeys + 2, 1);
    int64_t (*sub)[2] = xcalloc(t->n, sizeof *sub); /* subtree calls, allocs */
    int64_t sum[3] = {0, 0, 0};
    for (size_t i = 1; i < t->n; i++) {
        sub[i][0] = t->v[i].calls;
        sub[i][1] = t->v[i].allocs;
        sum[0] += t->v[i].self_ns;
        sum[1] += t->v[i].calls;
        sum[2] += t->v[i].allocs;
    }
    for (size_t i = t->n; i-- > 1;)
        if (t->v[i].parent > 0) {
            sub[t->v[i].parent][0] += sub[i][0];
            sub[t->v[i].parent][1] += sub[i][1];
        }
    fputs("# callgrind format\nversion: 1\ncreator: piano-db 0.1.0\n", f);
    fprintf(f, "pid: %lld\ncmd: ", (long long)r->pid);
    put_clean(f, r->command, "\n\r", ' ');
    fprintf(f, "\npart: 1\n\npositions: line\nevents: ns calls allocs\n");
    fprintf(f, "summary: %lld %lld %lld\n\n", (long long)sum[0], (long long)sum[1], (long long)sum[2]);
    for (size_t i = 1; i < t->n; i++) {
        const cnode *c = &t->v[i];
        int key = c->key;
        callgrind_name(f, "fl", file_id[key], k->files[key][0] ? k->files[key] : "???", fl_seen);
        callgrind_name(f, "fn", key + 1, k->labels[key], fn_seen);
        fprintf(f, "%lld %lld %lld %lld\n", (long long)k->lines[key], (long long)c->self_ns,
                (long long)c->calls, (long long)c->allocs);
        for (int ch = c->first_child; ch >= 0; ch = t->v[ch].next_sibling) {
            const cnode *d = &t->v[ch];
            callgrind_name(f, "cfl", file_id[d->key], k->files[d->key][0] ? k->files[d->key] : "???", fl_seen);
            callgrind_name(f, "cfn", d->key + 1, k->labels[d->key], fn_seen);
            fprintf(f, "calls=%lld %lld\n", (long long)d->calls, (long long)k->lines[d->key]);
            fprintf(f, "%lld %lld %lld %lld\n", (long long)k->lines[key], (long long)d->total_ns,
                    (long long)sub[ch][0], (long long)sub[ch][1]);
        }
        fputc('\n', f);
    }
    fprintf(f, "totals: %lld %lld %lld\n", (long long)sum[0], (long long)sum[1], (long long)sum[2]);
    free(sub);
    free(fl_seen);
    free(fn_seen);
    free(file_id);
}

static void put_us(FILE *f, int64_t ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* About this many bytes per frame event (measured: 690 for a frame of 4 functions). */
#define CHROME_EVENT_BYTES 700
/* By default the first CHROME_FIRST kept frames and up to CHROME_SPIKES spikes
 * after them (about 77 MB); --all every kept frame. */
#define CHROME_FIRST 100000
#define CHROME_SPIKES 10000

/* The process's and threads' metadata events; returns the (thread, tid)
 * pairs of the threads, *n of them. */
static int64_t *chrome_threads(pdb *p, FILE *f, const run_info *r, long thread, size_t *n)
{
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %lld, \"tid\": 0, \"args\": {\"name\": ",
            (long long)r->pid);
    json_str(f, r->command);
    fputs("}}", f);
    sqlite3_stmt *st = pdb_prepare(p, "SELECT thread, tid, name FROM threads WHERE run = ?1 AND "
                                      "(?2 < 0 OR thread = ?2) ORDER BY thread");
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int64(st, 2, thread);
    size_t nth = 0, cap = 0;
    int64_t *tmap = NULL; /* thread, tid pairs */
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t th = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
        const char *name = pdb_col_text(st, 2);
        if (nth == cap) {
            cap = cap ? cap * 2 : 16;
            tmap = xrealloc(tmap, cap * 2 * sizeof *tmap);
        }
        tmap[2 * nth] = th;
        tmap[2 * nth + 1] = tid;
        nth++;
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %lld, \"tid\": %lld, \"args\": {\"name\": ",
                (long long)r->pid, (long long)tid);
        if (*name) {
            json_str(f, name);
        } else {
            char b[32];
            snprintf(b, sizeof b, "thread %lld", (long long)th);
            json_str(f, b);
        }
        fprintf(f, "}},\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": %lld, \"tid\": %lld, "
                   "\"args\": {\"sort_index\": %lld}}",
                (long long)r->pid, (long long)tid, (long long)th);
    }
    sqlite3_finalize(st);
    *n = nth;
    return tmap;
}

/* Trace Event JSON: frames as complete events, threads named by metadata.
 * Streamed row by row; bounded by default, and says so on stderr with sizes. */
static void export_chrome(pdb *p, const pdb_opts *o, FILE *f, const run_info *r, long thread)
{
    frame_split split;
    frames_split(p, r, thread, 0, &split);
    int has_hist = split.has_hist;
    int64_t kept = thread < 0 && r->frames_kept >= 0 ? r->frames_kept : frames_count_rows(p, r->id, thread, NULL, 0);
    int capped = !o->all && kept > CHROME_FIRST;
    /* Without a histogram (runs stored before schema 5) the cap keeps the first frames only. */
    int64_t first = capped ? CHROME_FIRST : -1, spikes = capped && has_hist ? CHROME_SPIKES : 0;
    if (capped)
        fprintf(stderr, "piano-db: export chrome: the first %d of %lld kept frames%s, about %lld MB; --all "
                        "exports every one (about %lld MB)\n",
                CHROME_FIRST, (long long)kept, spikes ? " and up to 10000 spikes after them" : "",
                (long long)((CHROME_FIRST + spikes) * CHROME_EVENT_BYTES >> 20),
                (long long)(kept * CHROME_EVENT_BYTES >> 20));
    else if (kept * CHROME_EVENT_BYTES >= 64ll << 20)
        fprintf(stderr, "piano-db: export chrome: %lld frames, about %lld MB\n", (long long)kept,
                (long long)(kept * CHROME_EVENT_BYTES >> 20));
    fkeys k;
    fkeys_load(p, r->id, &k);
    fputs("{\"traceEvents\": [\n", f);
    size_t nth;
    int64_t *tmap = chrome_threads(p, f, r, thread, &nth);

    frame_window win = {first, spikes, has_hist && thread < 0, split.spike_ns};
    frame_iter it;
    frame_iter_open(&it, p, &k, r->id, thread, &win);
    while (frame_iter_next(&it)) {
        int64_t tid = it.thread;
        for (size_t i = 0; i < nth; i++)
            if (tmap[2 * i] == it.thread)
                tid = tmap[2 * i + 1];
        int lead = -1;
        for (size_t j = 0; j < it.nfns; j++)
            if (lead < 0 || it.fns[j].self_ns > it.fns[lead].self_ns)
                lead = (int)j;
        fputs(",\n{\"name\": ", f);
        json_str(f, lead >= 0 ? k.labels[it.fns[lead].key] : "frame");
        fprintf(f, ", \"cat\": \"frame\", \"ph\": \"X\", \"pid\": %lld, \"tid\": %lld, \"ts\": ",
                (long long)r->pid, (long long)tid);
        put_us(f, it.start_ns);
        fputs(", \"dur\": ", f);
        put_us(f, it.total_ns);
        fprintf(f, ", \"args\": {\"frame\": %lld, \"allocs\": %lld, \"alloc_bytes\": %lld, \"frees\": %lld, "
                   "\"free_bytes\": %lld, \"self_ns\": {",
                (long long)it.seq, (long long)it.allocs, (long long)it.alloc_bytes, (long long)it.frees,
                (long long)it.free_bytes);
        for (size_t j = 0; j < it.nfns; j++) {
            if (j)
                fputs(", ", f);
            json_str(f, k.labels[it.fns[j].key]);
            fprintf(f, ": %lld", (long long)it.fns[j].self_ns);
        }
        fputs("}}}", f);
    }
    frame_iter_close(&it);
    fputs("\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"producer\": \"piano-db\", \"run\": ", f);
    fprintf(f, "%lld}}\n", (long long)r->id);
    free(tmap);
    fkeys_free(&k);
}

int cmd_export(pdb *p, const pdb_opts *o)
{
    if (!o->format)
        pdb_usage_die("export: --format wants folded, pprof, chrome or callgrind");
    run_info r;
    runset set;
    int is_set = pdb_pick_run_or_set(p, o, "export [RUN|TAG|SET] --format F", &r, &set);
    long thread = o->thread_set ? o->thread : -1;
    if (is_set && !strcmp(o->format, "chrome"))
        pdb_usage_die("export: a set of runs goes with --format folded, pprof or callgrind (chrome's events are "
                      "one run's frames)");
    if (o->metric && strcmp(o->format, "folded") && strcmp(o->format, "callgrind"))
        pdb_usage_die("export: --metric goes with --format folded or callgrind (pprof carries every metric)");
    if (o->group && !strcmp(o->format, "chrome"))
        pdb_usage_die("export: --group goes with --format folded, pprof or callgrind (chrome's events are frames)");
    if (!strcmp(o->format, "pprof")) {
        export_pprof(p, o, &r, is_set ? &set : NULL, thread);
        pdb_run_free(&r);
        runset_free(&set);
        return 0;
    }
    FILE *f = out_open(o, 0);
    if (!strcmp(o->format, "chrome")) {
        export_chrome(p, o, f, &r, thread);
    } else {
        ctree t;
        if (is_set)
            pdb_set_ctree(p, &set, thread, &t);
        else
            ctree_load(p, r.id, thread, &t);
        if (o->group)
            ctree_group(&t);
        ctree_use_metric(&t, o->metric, r.id);
        if (!strcmp(o->format, "folded"))
            export_folded(f, &t);
        else
            export_callgrind(f, &t, &r);
        ctree_free(&t);
    }
    out_close(f, o);
    pdb_run_free(&r);
    runset_free(&set);
    return 0;
}
