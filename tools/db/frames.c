/*
 * frames.c - `piano-db report --frames`: one row per frame, with the self
 * time of the leading functions (the up to 6 functions with the most self
 * time summed over the frames shown) and spikes (total > 2x the median).
 *
 * Two passes over the frames table: the first sums self time per function
 * and collects totals for the median; the second streams the rows, so a run
 * with millions of frames never sits in memory beyond one total per frame.
 */
#include "fns_blob.h"
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

#define LEAD_MAX 6

typedef struct {
    int64_t id;
    int key;
} idmap;

typedef struct {
    idmap *ids;
    size_t nids;
    char **labels; /* per key */
    int nkeys;
} fnkeys;

static int cmp_idmap(const void *a, const void *b)
{
    const idmap *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Function ids of the run grouped by (name, file, line), labelled like report rows. */
static void load_keys(pdb *p, int64_t run, fnkeys *k)
{
    memset(k, 0, sizeof *k);
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id, name, file, line FROM functions WHERE run = ? "
                                      "ORDER BY name, file, line, id");
    sqlite3_bind_int64(st, 1, run);
    size_t cap = 0;
    char **names = NULL, **files = NULL;
    int64_t *lines = NULL;
    while (pdb_step(p, st) == SQLITE_ROW) {
        const char *name = pdb_col_text(st, 1), *file = pdb_col_text(st, 2);
        int64_t line = sqlite3_column_int64(st, 3);
        if (k->nids == cap) {
            cap = cap ? cap * 2 : 64;
            k->ids = xrealloc(k->ids, cap * sizeof *k->ids);
            names = xrealloc(names, cap * sizeof *names);
            files = xrealloc(files, cap * sizeof *files);
            lines = xrealloc(lines, cap * sizeof *lines);
        }
        int last = k->nkeys - 1;
        if (last < 0 || strcmp(names[last], name) || strcmp(files[last], file) || lines[last] != line) {
            last = k->nkeys++;
            names[last] = xstrdup(name);
            files[last] = xstrdup(file);
            lines[last] = line;
        }
        k->ids[k->nids++] = (idmap){sqlite3_column_int64(st, 0), last};
    }
    sqlite3_finalize(st);
    if (k->nids > 1)   /* no functions: ids is NULL, which qsort must not get */
        qsort(k->ids, k->nids, sizeof *k->ids, cmp_idmap);
    k->labels = xcalloc((size_t)k->nkeys + 1, sizeof *k->labels);
    for (int i = 0; i < k->nkeys; i++) {
        int dup = (i > 0 && strcmp(names[i - 1], names[i]) == 0) ||
                  (i + 1 < k->nkeys && strcmp(names[i + 1], names[i]) == 0);
        size_t n = strlen(names[i]) + strlen(files[i]) + 32;
        k->labels[i] = xmalloc(n);
        if (dup)
            snprintf(k->labels[i], n, "%s (%s:%lld)", names[i], files[i], (long long)lines[i]);
        else
            snprintf(k->labels[i], n, "%s", names[i]);
    }
    for (int i = 0; i < k->nkeys; i++) {
        free(names[i]);
        free(files[i]);
    }
    free(names);
    free(files);
    free(lines);
}

static void free_keys(fnkeys *k)
{
    for (int i = 0; i < k->nkeys; i++)
        free(k->labels[i]);
    free(k->labels);
    free(k->ids);
}

/* Key of function id, or -1 when the functions table does not know it. */
static int key_of_id(const fnkeys *k, int64_t id)
{
    size_t lo = 0, hi = k->nids;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (k->ids[mid].id < id)
            lo = mid + 1;
        else if (k->ids[mid].id > id)
            hi = mid;
        else
            return k->ids[mid].key;
    }
    return -1;
}

typedef struct {
    int key;
    int64_t self_ns;
} fnself;

/* Decodes a fns blob into per-key self times (ids of one key summed). Returns the count. */
static size_t decode_fns(pdb *p, const fnkeys *k, const unsigned char *b, size_t len,
                         fnself **buf, size_t *cap, int64_t seq)
{
    size_t n = 0;
    for (size_t at = 0; at < len;) {
        uint32_t id;
        uint64_t ns;
        if (piano_fns_get(b, len, &at, &id, &ns) != 0)
            pdb_die("frame %lld: malformed fns blob in %s", (long long)seq, p->path);
        int key = key_of_id(k, id);
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

static int64_t *g_sums;
static char **g_labels;
static int cmp_lead(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (g_sums[x] != g_sums[y])
        return g_sums[x] > g_sums[y] ? -1 : 1;
    return strcmp(g_labels[x], g_labels[y]);
}

/* The bounded view of report --frames: the first frames, then every spike after them. */
#define FIRST_SHOWN 100
#define SPIKES_SHOWN 1000

/* Rows of the run's (thread's) frames; with `cond` (binding ?3 to x), those meeting it. */
static int64_t count_rows(pdb *p, int64_t run, long thread, const char *cond, double x)
{
    char sql[256];
    if (cond && !strcmp(cond, "spike"))   /* the run's marks: its partial index (the planner prefers the key) */
        snprintf(sql, sizeof sql, "SELECT count(*) FROM frames INDEXED BY frames_spikes WHERE run = ?1 AND spike");
    else
        snprintf(sql, sizeof sql, "SELECT count(*) FROM frames WHERE run = ?1 AND (?2 < 0 OR thread = ?2)%s%s",
                 cond ? " AND " : "", cond ? cond : "");
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, thread);
    if (cond)
        sqlite3_bind_double(st, 3, x);
    int64_t n = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

/* cols (seq first) of the frames shown, in order: the first `first` (-1: all),
 * then up to `spikes` (-1: all) spikes after them, found through the partial
 * index of frames.spike (use_col) or as total_ns > spike_ns. Reads only what
 * it returns when use_col, so a run of 100 M frames shows in milliseconds. */
sqlite3_stmt *frames_view(pdb *p, const char *cols, int64_t run, long thread, int64_t first,
                          int64_t spikes, int use_col, double spike_ns)
{
    static const char *where = "FROM frames WHERE run = ?1 AND (?2 < 0 OR thread = ?2)";
    char a[512] = "", b[1024] = "", sql[1700];
    if (first)
        snprintf(a, sizeof a, "SELECT %s %s ORDER BY seq LIMIT ?3", cols, where);
    if (spikes && use_col)   /* the run's marks: its partial index (the planner prefers the key) */
        snprintf(b, sizeof b, "SELECT %s FROM frames INDEXED BY frames_spikes WHERE run = ?1 AND spike AND seq > "
                              "(SELECT coalesce(max(seq), 0) FROM (SELECT seq %s ORDER BY seq LIMIT ?3)) "
                              "ORDER BY seq LIMIT ?4", cols, where);
    else if (spikes)
        snprintf(b, sizeof b, "SELECT %s %s AND total_ns > ?5 AND seq > (SELECT coalesce(max(seq), 0) FROM "
                              "(SELECT seq %s ORDER BY seq LIMIT ?3)) ORDER BY seq LIMIT ?4",
                 cols, where, where);
    if (*a && *b)
        snprintf(sql, sizeof sql, "SELECT * FROM (SELECT * FROM (%s) UNION ALL SELECT * FROM (%s)) ORDER BY 1", a, b);
    else
        snprintf(sql, sizeof sql, "%s", *a ? a : *b ? b : "SELECT 1 WHERE 0");
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, thread);
    sqlite3_bind_int64(st, 3, first);
    sqlite3_bind_int64(st, 4, spikes);
    sqlite3_bind_double(st, 5, spike_ns);
    return st;
}

int cmd_frames(pdb *p, const pdb_opts *o, const run_info *r)
{
    if (o->sort)
        pdb_usage_die("report: --sort does not apply to --frames (frames are listed in order)");
    long thread = o->thread_set ? o->thread : -1;
    fnkeys k;
    load_keys(p, r->id, &k);
    fnself *buf = NULL;
    size_t bufcap = 0;

    /* The frames shown (frames_view) and the spike threshold: 2x the median
     * of every frame of the run (or thread), kept or not, from its histogram;
     * for runs stored before schema 5 (every frame in the table), from one
     * streamed pass over the table. */
    piano_hist *h = xcalloc(1, sizeof *h);
    int has_hist = pdb_frame_hist(p, r->id, thread, h);
    double spike_ns;
    int64_t nkept = -1, nspikes = 0;
    if (has_hist) {
        spike_ns = piano_frame_spike_ns(h, r->ns_per_tick);
    } else {
        nkept = count_rows(p, r->id, thread, NULL, 0);
        spike_ns = 2 * pdb_frames_median(p, r->id, thread, nkept);
    }
    free(h);
    int use_col = has_hist && thread < 0;   /* frames.spike is the run's: its index finds them */
    if (nkept < 0 && thread < 0 && r->frames_kept >= 0)
        nkept = r->frames_kept;
    if (nkept < 0)
        nkept = count_rows(p, r->id, thread, NULL, 0);
    nspikes = count_rows(p, r->id, thread, use_col ? "spike" : "total_ns > ?3", spike_ns);
    int64_t ntot = pdb_frame_count(p, r->id, thread);
    /* The bounded view: the first frames, then the spikes after them. */
    int64_t first = o->spikes ? 0 : o->all ? -1 : o->top_set ? o->top : FIRST_SHOWN;
    int64_t spikes = o->all ? (o->spikes ? -1 : 0) : o->spikes && o->top_set ? o->top : SPIKES_SHOWN;

    /* Pass 1: per-function sums over the frames shown. key -1 (unknown id) is slot nkeys. */
    int64_t *sums = xcalloc((size_t)k.nkeys + 1, sizeof *sums);
    int64_t maxseq = 0, shown = 0, shown_spikes = 0;
    long first_thread = -1;
    int many_threads = 0;
    sqlite3_stmt *st = frames_view(p, "seq, thread, total_ns, fns", r->id, thread, first, spikes, use_col, spike_ns);
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0);
        long th = (long)sqlite3_column_int64(st, 1);
        shown++;
        shown_spikes += (double)sqlite3_column_int64(st, 2) > spike_ns;
        if (seq > maxseq)
            maxseq = seq;
        if (first_thread < 0)
            first_thread = th;
        else if (th != first_thread)
            many_threads = 1;
        size_t n = decode_fns(p, &k, sqlite3_column_blob(st, 3), (size_t)sqlite3_column_bytes(st, 3),
                              &buf, &bufcap, seq);
        for (size_t i = 0; i < n; i++) {
            int64_t *sum = &sums[buf[i].key < 0 ? k.nkeys : buf[i].key];
            *sum = sat_add(*sum, buf[i].self_ns);
        }
    }
    sqlite3_finalize(st);

    /* Leading functions. */
    int *order = xmalloc(((size_t)k.nkeys + 1) * sizeof *order);
    int nlead = 0;
    for (int i = 0; i < k.nkeys; i++)
        if (sums[i] > 0)
            order[nlead++] = i;
    g_sums = sums;
    g_labels = k.labels;
    qsort(order, (size_t)nlead, sizeof *order, cmp_lead);
    if (nlead > LEAD_MAX)
        nlead = LEAD_MAX;
    int lead_of_key_cap = k.nkeys + 1;
    int *col_of_key = xmalloc((size_t)lead_of_key_cap * sizeof *col_of_key);
    for (int i = 0; i < lead_of_key_cap; i++)
        col_of_key[i] = -1;
    for (int i = 0; i < nlead; i++)
        col_of_key[order[i]] = i;

    /* Table geometry, fixed before streaming. */
    char seqbuf[32];
    snprintf(seqbuf, sizeof seqbuf, "%lld", (long long)maxseq);
    size_t wframe = strlen(seqbuf) > 5 ? strlen(seqbuf) + 2 : 7;
    char leadhdr[LEAD_MAX][4096];
    size_t wlead[LEAD_MAX];
    const char *leadfull[LEAD_MAX];
    for (int i = 0; i < nlead; i++)
        leadfull[i] = k.labels[order[i]];
    /* shortened where nothing is lost, never two alike (names_fit) */
    size_t fixed = wframe + (many_threads ? 8 : 0) + 11 + 20, tw = term_width();
    size_t each = nlead && tw > fixed ? (tw - fixed) / (size_t)nlead : 0;
    char **leadfit = names_fit(leadfull, (size_t)nlead, each > 26 ? each - 2 : 24);
    for (int i = 0; i < nlead; i++) {
        snprintf(leadhdr[i], sizeof leadhdr[i], "%s", leadfit[i]);
        size_t w = utf8_width(leadhdr[i]) + 2;
        wlead[i] = w > 11 ? w : 11;
    }
    names_free(leadfit, (size_t)nlead);

    FILE *f = stdout;
    size_t printed = 0;
    if (o->json) {
        fputc('[', f);
    } else if (o->csv) {
        fputs("frame,thread,start_ns,total_ns,allocs,alloc_bytes,spike", f);
        for (int i = 0; i < nlead; i++) {
            fputc(',', f);
            csv_str(f, k.labels[order[i]]);
        }
        fputc('\n', f);
    } else {
        size_t total = wframe;
        print_pad(f, "Frame", wframe, 0);
        if (many_threads) {
            print_pad(f, "Thread", 8, 1);
            total += 8;
        }
        print_pad(f, "Total", 11, 1);
        total += 11;
        for (int i = 0; i < nlead; i++) {
            print_pad(f, leadhdr[i], wlead[i], 1);
            total += wlead[i];
        }
        print_pad(f, "Allocs", 9, 1);
        print_pad(f, "Bytes", 11, 1);
        total += 20;
        fputc('\n', f);
        for (size_t i = 0; i < total; i++)
            fputc('-', f);
        fputc('\n', f);
    }

    /* Pass 2: stream the rows. */
    st = frames_view(p, "seq, thread, start_ns, total_ns, allocs, alloc_bytes, fns", r->id, thread, first, spikes,
                     use_col, spike_ns);
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0);
        long th = (long)sqlite3_column_int64(st, 1);
        int64_t start = sqlite3_column_int64(st, 2), total = sqlite3_column_int64(st, 3);
        int64_t allocs = sqlite3_column_int64(st, 4), bytes = sqlite3_column_int64(st, 5);
        int spike = (double)total > spike_ns;
        printed++;
        size_t n = decode_fns(p, &k, sqlite3_column_blob(st, 6), (size_t)sqlite3_column_bytes(st, 6),
                              &buf, &bufcap, seq);
        if (o->json) {
            fprintf(f, "%s\n  {\"frame\": %lld, \"thread\": %ld, \"start_ns\": %lld, \"total_ns\": %lld, "
                       "\"allocs\": %lld, \"alloc_bytes\": %lld, \"functions\": {",
                    printed > 1 ? "," : "", (long long)seq, th, (long long)start, (long long)total,
                    (long long)allocs, (long long)bytes);
            for (size_t i = 0; i < n; i++) {
                if (i)
                    fputs(", ", f);
                json_str(f, buf[i].key >= 0 ? k.labels[buf[i].key] : "(unknown)");
                fprintf(f, ": %lld", (long long)buf[i].self_ns);
            }
            fprintf(f, "}, \"spike\": %s}", spike ? "true" : "false");
            continue;
        }
        int64_t lead[LEAD_MAX];
        int has[LEAD_MAX] = {0};
        for (size_t i = 0; i < n; i++) {
            int c = buf[i].key >= 0 ? col_of_key[buf[i].key] : -1;
            if (c >= 0) {
                lead[c] = buf[i].self_ns;
                has[c] = 1;
            }
        }
        if (o->csv) {
            fprintf(f, "%lld,%ld,%lld,%lld,%lld,%lld,%d", (long long)seq, th, (long long)start,
                    (long long)total, (long long)allocs, (long long)bytes, spike);
            for (int i = 0; i < nlead; i++)
                fprintf(f, ",%lld", has[i] ? (long long)lead[i] : 0LL);
            fputc('\n', f);
            continue;
        }
        char cell[64];
        const char *col = spike && p->color ? C_RED : NULL;
        if (col)
            fputs(col, f);
        snprintf(cell, sizeof cell, "%lld", (long long)seq);
        print_pad(f, cell, wframe, 0);
        if (many_threads) {
            snprintf(cell, sizeof cell, "%ld", th);
            print_pad(f, cell, 8, 1);
        }
        fmt_ns(cell, sizeof cell, (double)total);
        print_pad(f, cell, 11, 1);
        for (int i = 0; i < nlead; i++) {
            if (has[i])
                fmt_ns(cell, sizeof cell, (double)lead[i]);
            else
                snprintf(cell, sizeof cell, "-");
            print_pad(f, cell, wlead[i], 1);
        }
        snprintf(cell, sizeof cell, "%lld", (long long)allocs);
        print_pad(f, cell, 9, 1);
        fmt_bytes(cell, sizeof cell, bytes);
        print_pad(f, cell, 11, 1);
        if (spike)
            fputs("  <<", f);
        if (col)
            fputs(C_OFF, f);
        fputc('\n', f);
    }
    sqlite3_finalize(st);

    /* What the view left out: on the table's last lines, on stderr for JSON and CSV. */
    int64_t eligible = o->spikes ? nspikes : nkept, hidden = eligible - (int64_t)printed;
    int64_t hidden_spikes = nspikes - shown_spikes;
    char left[256] = "";
    if (hidden > 0 && hidden_spikes > 0 && !o->spikes)
        snprintf(left, sizeof left, "(%lld more frame%s hidden, %lld of them spike%s: --all shows them)",
                 (long long)hidden, hidden == 1 ? "" : "s", (long long)hidden_spikes, hidden_spikes == 1 ? "" : "s");
    else if (hidden > 0)
        snprintf(left, sizeof left, "(%lld more %s%s hidden: --all shows them)", (long long)hidden,
                 o->spikes ? "spike" : "frame", hidden == 1 ? "" : "s");
    if (o->json) {
        fputs(printed ? "\n]\n" : "]\n", f);
    } else if (!o->csv) {
        if (*left)
            fprintf(f, "%s\n", left);
        fputc('\n', f);
        /* Always "frames" and "spikes": the footer's words are fixed for scripts. */
        fprintf(f, "%lld frames | %lld spikes (>2x median)", (long long)ntot, (long long)nspikes);
        if (nkept < ntot - (thread < 0 ? r->frames_dropped : 0))
            fprintf(f, " | %lld kept: %s", (long long)nkept,
                    nkept == 0 ? "none (PIANO_FRAMES=off)"
                               : r->spikes_unkept > 0 ? "the first, spikes up to the limit + a sample"
                                                      : "the first, all spikes + a sample");
        fputc('\n', f);
    }
    if ((o->json || o->csv) && *left)
        fprintf(stderr, "piano-db: report --frames: %s\n", left);
    free(col_of_key);
    free(order);
    free(sums);
    free(buf);
    free_keys(&k);
    return 0;
}
