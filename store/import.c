/*
 * import.c - turns a spool folder (spool.h) into one run in the database.
 *
 * Used by the runtime at exit for its own spool (other threads may still be
 * recording into it), and by piano-db for the spools of processes that died
 * before they could store theirs (written by anyone: a damaged or planted
 * spool). So nothing read from a spool is trusted: every count and link is
 * checked against its bound before use, a live frame buffer is copied under
 * its seqlock and only the copy is read, every walk is bounded, and files are
 * opened relative to a folder descriptor that was checked, never through a
 * symbolic link.
 *
 * Everything for one run goes in one transaction; a run key already present
 * means the spool was stored before (a crash between commit and clean-up),
 * so it is not stored twice.
 *
 * This file holds the job and the transaction: the run, its threads, its
 * functions; import_int.h maps the rest.
 */
#define _GNU_SOURCE
#include "blob_pack.h"
#include "fns_blob.h"
#include "import_int.h"
#include "span_spool.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

/* import_dir's -1 when the database's disk was too full. */
#define IMPORT_FULL (-3)

/* The id in names of (name, file, line), added when it is not there yet.
 * Returns it, or -1 on a database error. The tables behind the view functions
 * directly: its INSTEAD OF trigger compiled a program per run (row (f)). */
static sqlite3_int64 name_id(struct job *j, const char *name, int name_len, const char *file, int file_len,
                             sqlite3_int64 line)
{
    sqlite3_stmt *st = j->name_find_st;
    sqlite3_bind_text(st, 1, name, name_len, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, file, file_len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, line);
    int rc = sqlite3_step(st);
    sqlite3_int64 id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return rc == SQLITE_ROW ? id : -1;
    /* Not there: most runs of a program find every name stored by its earlier runs. */
    if (!j->name_add_st &&
        sqlite3_prepare_v2(j->db, "INSERT INTO names(name, file, line) VALUES(?,?,?)", -1, &j->name_add_st, NULL))
        return -1;
    st = j->name_add_st;
    sqlite3_bind_text(st, 1, name, name_len, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, file, file_len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, line);
    return STEP(st) ? -1 : sqlite3_last_insert_rowid(j->db);
}

/* Ascending function id; the first of equal ids first (kept, as INSERT OR
 * IGNORE kept it). */
static int by_id(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[2] > y[2]) - (x[2] < y[2]);
}

/* Stores the names of the functions the run's rows name, from the spool's
 * fns records, and the run's ids for them as one blob (fn_lists). Returns 0,
 * or -1 on a database error. */
static int import_functions(struct job *j)
{
    struct mapping m = { 0 };
    if (spool_map_at(j->dfd, PIANO_SPOOL_FNS, (size_t)1 << 30, &m) != 0)
        return 0;
    int64_t (*fns)[3] = NULL;   /* id, names.id, order read */
    size_t n = 0, cap = 0, at = 0;
    int failed = 0;
    while (at + sizeof(struct piano_spool_fn) <= m.len) {
        struct piano_spool_fn r;
        memcpy(&r, m.p + at, sizeof r);
        if (r.name_len > PIANO_FN_TEXT_MAX || r.file_len > PIANO_FN_TEXT_MAX)
            break;
        size_t size = sizeof r + r.name_len + r.file_len;
        if (at + size > m.len)
            break;
        const char *name = (const char *)m.p + at + sizeof r;
        at += size;
        /* Only what the run's rows name: a program registers every function
         * it has, and most short runs call few (issue 15: 207 KB of names for
         * a 5 ms process). */
        if (r.id >= PIANO_FN_CAP || !(j->used[r.id >> 3] >> (r.id & 7) & 1))
            continue;
        sqlite3_int64 id = name_id(j, name, (int)r.name_len, name + r.name_len, (int)r.file_len, r.line);
        if (id < 0) {
            failed = 1;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            void *more = realloc(fns, cap * sizeof *fns);
            if (!more) {
                failed = 1;
                break;
            }
            fns = more;
        }
        fns[n][0] = r.id;
        fns[n][1] = id;
        fns[n][2] = (int64_t)n;
        n++;
    }
    spool_unmap(&m);
    if (!failed && n) {
        qsort(fns, n, sizeof *fns, by_id);
        piano_fnlist_writer *w = &j->fn_blob;
        piano_fnlist_begin(w);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || fns[i][0] != fns[i - 1][0])
                piano_fnlist_put(w, fns[i][0], fns[i][1]);
        failed = w->failed;
        if (!failed) {
            sqlite3_bind_int64(j->fn_st, 1, j->run_id);
            failed = import_bind_blob(j, j->fn_st, 2, w->buf, w->len) != 0 || STEP(j->fn_st) != 0;
        }
    }
    free(fns);
    return failed ? -1 : 0;
}

int import_bind_blob(struct job *j, sqlite3_stmt *st, int col, const unsigned char *raw, size_t n)
{
    if (n > j->cap_packed) {
        unsigned char *p = realloc(j->packed, n);
        if (!p)
            return sqlite3_bind_blob(st, col, raw, (int)n, SQLITE_STATIC);   /* stored as it is */
        j->packed = p;
        j->cap_packed = n;
    }
    size_t packed = piano_blob_pack(raw, n, j->packed, n);
    return packed ? sqlite3_bind_blob(st, col, j->packed, (int)packed, SQLITE_STATIC)
                  : sqlite3_bind_blob(st, col, raw, (int)n, SQLITE_STATIC);
}

static void job_free(struct job *j)
{
    sqlite3_finalize(j->name_find_st);
    sqlite3_finalize(j->name_add_st);
    sqlite3_finalize(j->fn_st);
    free(j->fn_blob.buf);
    sqlite3_finalize(j->thread_st);
    sqlite3_finalize(j->ctx_st);
    piano_ctx_writer_free(&j->ctx_blob);
    sqlite3_finalize(j->stats_st);
    free(j->stats_blob.buf);
    free(j->packed);
    sqlite3_finalize(j->unf_st);
    spool_packed_release(j);
    for (size_t i = 0; i < j->n_maps; i++)
        spool_unmap(&j->maps[i]);
    for (size_t i = 0; i < j->n_threads; i++)
        free(j->threads[i].buf);
    free(j->threads);
    free(j->chunks);
    free(j->maps);
    free(j->spans);
    free(j->cpu_threads);
    free(j->samples);
    if (j->tables)
        munmap(j->tables, j->tables_len);
    if (j->scratch)
        munmap(j->scratch, PIANO_THREAD_FILE_SIZE);
}

/* Size of a table in the job's mapping: rounded up to a cache line. */
static size_t table_size(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Allocates the job's tables, zeroed, in one anonymous mapping: one mmap and
 * one munmap instead of nine allocations, and pages the kernel zeroes when
 * first touched, only those the run uses (calloc zeroed ~100 KB of them page
 * by page; with job_free, ~170 us of a short process's exit). Nor can a later
 * import in the same process get agg's 19 MB from reused heap memory, zeroed
 * whole, once frees have raised glibc's mmap threshold (13 ms in a program
 * making these allocations three times). Returns 0, or -1 (out of memory). */
static int job_alloc(struct job *j)
{
    /* A blob holds at most two histograms' records (a function's self and
     * total: import_state.c) or one frame's functions. */
    _Static_assert((uint64_t)PIANO_FN_CAP * PIANO_FNS_ENTRY_MAX <= PIANO_CHUNK_SIZE,
                   "a frame's functions fit the blob");
    const size_t blob = PIANO_CHUNK_SIZE > 2 * PIANO_HIST_BLOB_MAX ? PIANO_CHUNK_SIZE : 2 * PIANO_HIST_BLOB_MAX;
    const size_t sizes[] = {
        table_size((PIANO_FN_CAP + 1) * sizeof *j->agg),
        table_size(PIANO_FN_CAP * sizeof *j->agg_slot),
        table_size((size_t)PIANO_NODES_TOTAL * sizeof *j->fig),
        table_size((size_t)PIANO_NODES_TOTAL * sizeof *j->node_cpu),
        table_size(PIANO_NODE_CAP * sizeof *j->node_total),
        table_size(PIANO_NODE_CAP * sizeof *j->node_off),
        table_size(PIANO_NODE_CAP * sizeof *j->node_user),
        table_size(PIANO_HIST_BUCKETS * sizeof *j->dense),
        table_size(PIANO_FN_CAP / 8),
        table_size(sizeof *j->frame_hist),
        table_size(blob),
    };
    size_t len = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        len += sizes[i];
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    j->tables = p;
    j->tables_len = len;
    unsigned char *at = p;
    j->agg = (void *)at;
    j->agg_slot = (void *)(at += sizes[0]);
    j->fig = (void *)(at += sizes[1]);
    j->node_cpu = (void *)(at += sizes[2]);
    j->node_total = (void *)(at += sizes[3]);
    j->node_off = (void *)(at += sizes[4]);
    j->node_user = (void *)(at += sizes[5]);
    j->dense = (void *)(at += sizes[6]);
    j->used = at += sizes[7];
    j->frame_hist = (void *)(at += sizes[8]);
    j->blob = at + sizes[9];
    return 0;
}

/* A live run's command: the title its process has now, as ps shows it
 * (/proc/PID/cmdline, its arguments joined by spaces: a daemon that renamed
 * itself, as nginx's "worker process", after the fork that made its run);
 * the run header's when it cannot be read. The process holds its spool's
 * lock, so the pid is still its own. */
static const char *live_command(const struct piano_spool_run *run, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/cmdline", (unsigned)run->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;
    if (fd >= 0)
        close(fd);
    while (n > 0 && buf[n - 1] == 0)
        n--;
    if (n <= 0)
        return run->cmd;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == 0)
            buf[i] = ' ';
    buf[n] = 0;
    return buf;
}

/* A live thread's name: the one it has now (comm in the process's task
 * folder, task_fd), which another thread may have given it after its first
 * call (memcached names its threads just after creating them, so its logger
 * was listed under the program's name until the run was stored); its
 * header's when that cannot be read (the thread just ended). The process
 * holds its spool's lock, and its task folder lists only its own threads. */
static void live_thread_name(int task_fd, uint32_t tid, char *name, size_t cap)
{
    char path[32], now[32];
    snprintf(path, sizeof path, "%u/comm", (unsigned)tid);
    int fd = task_fd >= 0 ? openat(task_fd, path, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t n = fd >= 0 ? read(fd, now, sizeof now - 1) : -1;
    if (fd >= 0)
        close(fd);
    while (n > 0 && now[n - 1] == '\n')
        n--;
    if (n <= 0 || (size_t)n >= cap)
        return;
    memcpy(name, now, (size_t)n);
    name[n] = 0;
}

/* Inserts the run's row ('complete', 'recovered' or 'running'). Returns 1; 0
 * when the run was stored before (its key is there); -1 on a database error. */
static int insert_run(struct job *j, int complete)
{
    const struct piano_spool_run *run = j->run;
    char title[sizeof run->cmd];
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(j->db,
                           "INSERT INTO runs(key, parent_key, pid, command, started_ns, duration_ns, status, "
                           "clock, ns_per_tick, overhead_ns, allocator, cpu_mode, selection) VALUES(?,?,?,?,?,0,?,?,?,?,?,?,?) "
                           "ON CONFLICT(key) DO NOTHING",
                           -1, &ins, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(ins, 1, run->key, -1, SQLITE_STATIC);
    if (run->parent_key[0])
        sqlite3_bind_text(ins, 2, run->parent_key, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(ins, 2);
    sqlite3_bind_int64(ins, 3, run->pid);
    sqlite3_bind_text(ins, 4, j->live ? live_command(run, title, sizeof title) : run->cmd, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 5, count64(run->start_real_ns));
    sqlite3_bind_text(ins, 6, j->live ? "running" : complete ? "complete" : "recovered", -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 7, run->clock == PIANO_CLOCK_TSC ? "tsc" : "monotonic", -1, SQLITE_STATIC);
    sqlite3_bind_double(ins, 8, j->npt);
    sqlite3_bind_double(ins, 9,
                        run->overhead_ticks > 0 && run->overhead_ticks < 1e6 ? run->overhead_ticks * j->npt : 0);
    size_t alen = strnlen(run->allocator, sizeof run->allocator);
    if (alen)
        sqlite3_bind_text(ins, 10, run->allocator, (int)alen, SQLITE_STATIC);
    else
        sqlite3_bind_null(ins, 10);
    if (run->cpu_mode == PIANO_CPU_PERF || run->cpu_mode == PIANO_CPU_REFUSED)
        sqlite3_bind_text(ins, 11, run->cpu_mode == PIANO_CPU_PERF ? "perf" : "refused", -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(ins, 11);
    if (run->has_selection)
        sqlite3_bind_text(ins, 12, run->selection, (int)strnlen(run->selection, sizeof run->selection),
                          SQLITE_STATIC);
    else
        sqlite3_bind_null(ins, 12);
    int step = sqlite3_step(ins);
    sqlite3_finalize(ins);
    if (step != SQLITE_DONE)
        return -1;
    if (sqlite3_changes(j->db) == 0)   /* stored before */
        return 0;
    j->run_id = sqlite3_last_insert_rowid(j->db);
    return 1;
}

int import_prepare_unfinished(struct job *j)
{
    return sqlite3_prepare_v2(j->db, "INSERT INTO unfinished(run,thread,depth,fn,start_ns,elapsed_ns) VALUES(?,?,?,?,?,?)",
                              -1, &j->unf_st, NULL) == SQLITE_OK ? 0 : -1;
}

/* The statements inserting a run's rows (the frames' are import_frames', the
 * calls in flight's import_prepare_unfinished). */
static int prepare_statements(struct job *j)
{
    sqlite3 *db = j->db;
    return sqlite3_prepare_v2(db, "SELECT id FROM names WHERE name = ? AND file = ? AND line = ?", -1,
                              &j->name_find_st, NULL) ||
           sqlite3_prepare_v2(db, "INSERT INTO fn_lists(run,fns) VALUES(?,?)", -1, &j->fn_st,
                              NULL) ||
           sqlite3_prepare_v2(db, "INSERT INTO threads(run,thread,tid,name,frames,frame_hist) VALUES(?,?,?,?,?,?)",
                              -1, &j->thread_st, NULL) ||
           sqlite3_prepare_v2(db, "INSERT INTO context_trees(run,thread,nodes) VALUES(?,?,?)", -1, &j->ctx_st,
                              NULL) ||
           sqlite3_prepare_v2(db, "INSERT INTO stat_trees(run,thread,fns) VALUES(?,?,?)", -1, &j->stats_st,
                              NULL);
}

/* Stores every thread: its row (with its frame histogram), and its state
 * when its state file is whole. Returns 0, or -1 on a database error. */
static int store_threads(struct job *j)
{
    /* The run's heap: every state says the latest peak copy and heap peak it saw. */
    j->heap_on = j->run->heap != 0;
    for (size_t i = 0; i < j->n_threads; i++)
        if (j->threads[i].has_hdr) {
            const struct piano_thread *h = &j->threads[i].hdr;
            if (h->heap_gen > j->heap_gen)
                j->heap_gen = h->heap_gen;
            if (h->heap_peak > j->heap_peak)
                j->heap_peak = h->heap_peak;
        }
    /* A live read that shows threads' names shows them as they are now. */
    int task_fd = -1;
    if (j->live && (j->parts & PIANO_LIVE_NAMES)) {
        char path[48];
        snprintf(path, sizeof path, "/proc/%u/task", (unsigned)j->run->pid);
        task_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    size_t i;
    for (i = 0; i < j->n_threads; i++) {
        struct thread_in *t = &j->threads[i];
        if (t->has_state && t->slot && t->live) {
            /* A live run's slot may have been reused since it was listed: its
             * thread's records are then in the ended file, for the next reader. */
            const struct piano_thread *now = (const void *)t->slot;
            if (__atomic_load_n(&now->magic, __ATOMIC_ACQUIRE) != PIANO_SPOOL_MAGIC || now->thread != t->number)
                t->has_state = 0;
        }
        if (t->ended && t->has_state && ended_state(j, t))
            break;
        char name[sizeof t->hdr.name + 1] = "";
        if (t->has_hdr) {
            memcpy(name, t->hdr.name, sizeof t->hdr.name);
            name[sizeof t->hdr.name] = 0;
            if (task_fd >= 0 && !t->ended && !t->hdr.dead)
                live_thread_name(task_fd, t->hdr.tid, name, sizeof name);
        }
        sqlite3_bind_int64(j->thread_st, 1, j->run_id);
        sqlite3_bind_int64(j->thread_st, 2, t->number);
        sqlite3_bind_int64(j->thread_st, 3, t->has_hdr ? t->hdr.tid : 0);
        sqlite3_bind_text(j->thread_st, 4, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(j->thread_st, 5, t->has_hdr ? count64(t->hdr.frames_all) : 0);
        size_t hist_len = import_thread_frames(j, t);
        sqlite3_bind_blob(j->thread_st, 6, j->blob, (int)hist_len, SQLITE_TRANSIENT);
        int failed = STEP(j->thread_st);
        if (!failed && t->has_state && (j->parts & PIANO_LIVE_STATE)) {
            failed = import_state(j, t);
        } else if (!failed && t->has_state) {
            /* A live read without the state: the run's counts from the header
             * (import_state's), and a live forked child is listed as it runs. */
            j->frames_dropped += t->hdr.frames_dropped;
            j->samples_dropped += t->hdr.hist_dropped;
            j->calls_untimed += t->hdr.deep_calls;
            j->recorded = 1;
        }
        ended_release(j, t);
        if (failed)
            break;
    }
    if (task_fd >= 0)
        close(task_fd);
    return i < j->n_threads ? -1 : 0;
}

/* After the threads: the frames (dry: counted only), the names of the
 * functions, and the run's totals. Returns 0, or -1 on a database error. */
static int store_frames_and_totals(struct job *j, int no_frames)
{
    j->spike_ns = piano_frame_spike_ns(j->frame_hist, j->npt);
    /* A live read that does not show frames reads none (their count and
     * histogram are the threads'): frames_kept stays NULL, not known. */
    int frames_read = (j->parts & PIANO_LIVE_FRAMES) != 0;
    if ((frames_read && import_frames(j, no_frames)) || import_functions(j))   /* names last: only those the rows use */
        return -1;
    if (no_frames) {
        j->frames_dropped += j->frames_kept;
        j->frames_kept = 0;
    }
    if (j->frames_all < j->frames_kept + j->frames_dropped)   /* records of threads whose state is lost */
        j->frames_all = j->frames_kept + j->frames_dropped;
    /* (a run without frames leaves the histogram's 8 pages untouched: its blob is empty) */
    size_t run_hist = j->frame_hist_any ? piano_hist_encode(j->frame_hist->count, 0, PIANO_HIST_OCTAVES * PIANO_HIST_SUB, j->blob) : 0;
    sqlite3_stmt *upd = NULL;
    if (sqlite3_prepare_v2(j->db,
                           "UPDATE runs SET duration_ns=?, frames_dropped=?, samples_dropped=?, "
                           "calls_untimed=?, frames=?, frames_kept=?, frame_hist=?, spikes_unkept=?, heap_peak_bytes=? WHERE id=?",
                           -1, &upd, NULL))
        return -1;
    sqlite3_bind_int64(upd, 1, since(j->end > j->seen ? j->end : j->seen, j->run->tick0, j->npt));
    sqlite3_bind_int64(upd, 2, count64(j->frames_dropped));
    sqlite3_bind_int64(upd, 3, count64(j->samples_dropped));
    /* The calls on threads whose records could not be made (rt/runtime.c thread_start). */
    sqlite3_bind_int64(upd, 4, count64(j->calls_untimed + j->run->calls_unrecorded));
    sqlite3_bind_int64(upd, 5, count64(j->frames_all));
    if (frames_read)
        sqlite3_bind_int64(upd, 6, count64(j->frames_kept));
    else
        sqlite3_bind_null(upd, 6);
    sqlite3_bind_blob(upd, 7, j->blob, (int)run_hist, SQLITE_STATIC);
    sqlite3_bind_int64(upd, 8, count64(j->spikes_unkept));
    if (j->heap_on)
        sqlite3_bind_int64(upd, 9, count64(j->heap_peak));
    else
        sqlite3_bind_null(upd, 9);
    sqlite3_bind_int64(upd, 10, j->run_id);
    int step = sqlite3_step(upd);
    sqlite3_finalize(upd);
    return step == SQLITE_DONE ? 0 : -1;
}

static int parent_order(const void *a, const void *b)
{
    return strcmp(((const struct spool_parent *)a)->parent_key, ((const struct spool_parent *)b)->parent_key);
}

int spool_parents_read(int root_fd, struct spool_parents *p)
{
    p->of = NULL;
    p->n = 0;
    /* A descriptor of its own: a listing reads through its descriptor's
     * position, and piano-db's recovery is listing root_fd (recover.c). */
    int list_fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct spool_listing d;
    if (list_fd < 0)
        return -1;
    if (spool_listing_open(list_fd, &d) != 0) {
        close(list_fd);
        return -1;
    }
    size_t cap = 0;
    int rc = 0;
    const char *name;
    while ((name = spool_listing_next(&d)) != NULL) {
        const char *key = name[0] == '.' ? name + 1 : name;   /* a folder being made: .KEY */
        if (!key[0] || !strcmp(name, "..") || strlen(name) > NAME_MAX ||
            !strncmp(name, PIANO_SPOOL_SPARE, sizeof PIANO_SPOOL_SPARE - 1))
            continue;   /* (a file, the calibration cache, is no folder: it has no header; a spare's is a stored run's) */
        char err[256];
        int dfd = spool_open_own_dir(root_fd, name, name, err, sizeof err);
        if (dfd < 0)
            continue;
        struct piano_spool_run run;
        int named = spool_read_run(dfd, name, &run, err, sizeof err) == 0 && run.parent_key[0];
        close(dfd);
        if (!named)
            continue;
        if (p->n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            struct spool_parent *grown = realloc(p->of, ncap * sizeof *grown);
            if (!grown) {
                rc = -1;
                break;
            }
            p->of = grown;
            cap = ncap;
        }
        snprintf(p->of[p->n].parent_key, sizeof p->of[p->n].parent_key, "%s", run.parent_key);
        snprintf(p->of[p->n].name, sizeof p->of[p->n].name, "%s", name);
        p->n++;
    }
    spool_listing_close(&d);
    close(list_fd);
    if (rc) {
        spool_parents_free(p);
        return -1;
    }
    qsort(p->of, p->n, sizeof *p->of, parent_order);
    return 0;
}

void spool_parents_free(struct spool_parents *p)
{
    free(p->of);
    p->of = NULL;
    p->n = 0;
}

static int import_dir(sqlite3 *db, int root_fd, int dfd, const char *shown, int complete, unsigned parts,
                      const struct piano_import_mem *mem, const struct spool_parents *parents, int no_frames, int depth,
                      char *err, size_t errn, char *note_out, size_t noten);

/* How deep has_child looks down a chain of ended children that recorded
 * nothing (a daemon's program, master, worker: 2); deeper, a child counts. */
#define CHILD_DEPTH_MAX 8

/* Whether the folder `name` of the spool root, forked from j's run, is a run:
 * its process still runs (a daemon's master, waiting in calls it made before
 * its fork), or it ended and import_dir, run dry, would store it (it recorded
 * something of its own, or a run was forked from it in turn). A child that
 * exec'd without recording anything (a test driver's helper, a build tool's
 * compiler) is no run, and keeps no parent that recorded nothing either; its
 * folder is retired then (the next piano-db would read it again for nothing).
 * Gone, it was stored since (then has_child found it in `runs`) or skipped. */
static int child_is_run(struct job *j, int root_fd, const struct spool_parents *p, const char *name)
{
    if (faccessat(root_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0)
        return 0;
    char why[IMPORT_LINE_MAX], note[IMPORT_NOTE_MAX];
    int dfd = spool_open_own_dir(root_fd, name, name, why, sizeof why);
    if (dfd < 0)
        return 1;   /* there, but not ours to read: keep the parent */
    /* held (a live process) or taken here until the dry import is done, as
     * recover.c's probe_lock; a folder without a lock is dead */
    int lock = openat(dfd, PIANO_SPOOL_LOCK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int run = (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0) || j->depth >= CHILD_DEPTH_MAX;
    if (!run) {
        int r = import_dir(j->db, root_fd, dfd, name, 0, PIANO_LIVE_ALL, NULL, p, 1, j->depth + 1, why,
                           sizeof why, note, sizeof note);
        run = r != 0 && r != IMPORT_NO_RUN;   /* it would be stored, or cannot be read: keep the parent */
        if (r == 0)   /* nothing to store, ever (it ended): retired now, as a recovery would (recover.c) */
            spool_retire_at(root_fd, dfd, name);
    }
    if (lock >= 0)
        close(lock);
    close(dfd);
    return run;
}

/* Whether a folder of the spool root forked from j's run is a run
 * (child_is_run). */
static int known_child(struct job *j, int root_fd, const struct spool_parents *p)
{
    const char *key = j->run->key;
    size_t lo = 0, hi = p->n;
    while (lo < hi) {   /* the first entry not below key */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(p->of[mid].parent_key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < p->n && !strcmp(p->of[lo].parent_key, key); lo++)
        if (child_is_run(j, root_fd, p, p->of[lo].name))
            return 1;
    return 0;
}

/* Whether a run forked from this one is stored, or is in the spool (live, or
 * ended and not stored yet: nginx's workers, which run as another user, leave
 * their runs there for root's piano-db, and a daemon's master exits before its
 * workers' runs are stored). */
static int has_child(struct job *j, int root_fd)
{
    sqlite3_stmt *st = NULL;
    int child = 0;
    if (sqlite3_prepare_v2(j->db, "SELECT 1 FROM runs WHERE parent_key = ?1 LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, j->run->key, -1, SQLITE_STATIC);
        child = sqlite3_step(st) != SQLITE_DONE;   /* a row, or an error: keep it */
    } else {
        child = 1;
    }
    sqlite3_finalize(st);
    if (child || root_fd < 0)
        return child;
    if (j->parents)
        return known_child(j, root_fd, j->parents);
    struct spool_parents here;
    if (spool_parents_read(root_fd, &here) != 0)
        return 1;   /* unknown: keep it */
    child = known_child(j, root_fd, &here);
    spool_parents_free(&here);
    return child;
}

/* Whether a complete run without a parent that recorded nothing of its own (no
 * instrumented call ran, nothing allocated in one: a configure script's test
 * program) is stored all the same: when PIANO_KEEP_EMPTY is set (not "0") in
 * the program's environment (its run header says so) or the importer's, when it lost calls or part of its spool could not be read, when it has
 * spans, or when a run was forked from it (has_child: a test driver whose
 * children did the work, a daemon's master). Else it is skipped (issue 23). */
static int keep_empty(struct job *j, int root_fd)
{
    const char *keep = getenv("PIANO_KEEP_EMPTY");
    if (j->run->keep_empty || (keep && *keep && strcmp(keep, "0") != 0))
        return 1;
    /* it lost calls, or part of its spool could not be read (damaged, planted):
     * what it recorded is unknown, and the run says so */
    if (j->run->calls_unrecorded || j->run->threads_unrecorded || j->note[0])
        return 1;
    /* spans opened outside instrumented functions (import_spans stores them) */
    if (faccessat(j->dfd, PIANO_SPOOL_SPANS, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return 1;
    return has_child(j, root_fd);
}

/* Imports the spool folder dfd (named `shown` in messages; root_fd its spool
 * root, for the calibration cache, or -1). Returns 1 stored, 0 nothing to
 * store (stored before, a forked child that recorded nothing of its own, or a
 * run that recorded nothing: keep_empty),
 * -1 with a reason in err; IMPORT_NO_RUN when there is no run header. On 1,
 * note gets what could not be read ("" when everything could). depth > 0: a
 * dry run for has_child (child_is_run), that deep: stores nothing, returns 1
 * when it would store the run. */
static int import_dir(sqlite3 *db, int root_fd, int dfd, const char *shown, int complete, unsigned parts,
                      const struct piano_import_mem *mem, const struct spool_parents *parents, int no_frames, int depth,
                      char *err, size_t errn, char *note_out, size_t noten)
{
    struct piano_spool_run run;
    note_out[0] = 0;
    int r = spool_read_run(dfd, shown, &run, err, errn);
    if (r)
        return r > 0 ? IMPORT_NO_RUN : -1;
    int live = complete == IMPORT_LIVE;
    complete = !live && (complete || run.status == 1);
    double npt = spool_calibrate(&run, complete, root_fd);

    struct job j = { .db = db, .dfd = dfd, .shown = shown, .run = &run, .mem = mem, .parents = parents, .npt = npt, .live = live,
                     .parts = live ? parts : PIANO_LIVE_ALL, .depth = depth };
    int rc = -1;
    if (job_alloc(&j)) {
        snprintf(err, errn, "out of memory");
        goto out;
    }
    if (import_collect(&j, complete, err, errn))   /* phase 1 */
        goto out;

    /* Phase 2: one transaction. One big page cache holds it, which avoids
     * reading pages back, and WAL with synchronous=NORMAL never corrupts,
     * only defers durability to the next checkpoint. */
    sqlite3_exec(db, "PRAGMA cache_size=-16384; PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    /* Inside a caller's transaction (piano-db reading live runs): a savepoint. */
    int nested = !sqlite3_get_autocommit(db);
    const char *commit = nested ? "RELEASE piano_import" : "COMMIT";
    const char *rollback = nested ? "ROLLBACK TO piano_import; RELEASE piano_import" : "ROLLBACK";
    if (sqlite3_exec(db, nested ? "SAVEPOINT piano_import" : "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto sql_error;
    int stored = insert_run(&j, complete);
    if (stored < 0)
        goto sql_error_rollback;
    if (stored == 0) {   /* stored before */
        rc = depth > 0;
        goto nothing;
    }
    if (prepare_statements(&j) || store_threads(&j))
        goto sql_error_rollback;
    /* A forked child that did nothing of its own (exec) is no run, unless a
     * run was forked from it in turn (a daemon's master, forked by the program
     * that daemonized, whose workers did the work); a live one is listed (a
     * daemon's master waits in calls made before its fork). */
    if (!j.recorded && !live && (run.parent_key[0] ? !has_child(&j, root_fd) : !keep_empty(&j, root_fd)))
        goto nothing;
    if (depth) {   /* it would be stored */
        rc = 1;
        goto nothing;
    }
    if (((j.parts & PIANO_LIVE_SNAPS) && import_snapshots(&j)) || import_spans(&j) || store_frames_and_totals(&j, no_frames) || sqlite3_exec(db, commit, NULL, NULL, NULL) != SQLITE_OK)
        goto sql_error_rollback;
    snprintf(note_out, noten, "%s", j.note);
    rc = 1;
    goto out;

nothing:
    sqlite3_exec(db, rollback, NULL, NULL, NULL);
    rc = rc > 0 ? rc : 0;
    goto out;

sql_error_rollback:
    snprintf(err, errn, "%s", sqlite3_errmsg(db));
    if (sqlite3_errcode(db) == SQLITE_FULL)
        rc = IMPORT_FULL;
    sqlite3_exec(db, rollback, NULL, NULL, NULL);
    goto out;
sql_error:
    snprintf(err, errn, "%s", sqlite3_errmsg(db));
out:
    job_free(&j);
    return rc;
}

/* import_dir; when the disk is too full for the run's frames, again without
 * them: its figures are stored and its frames counted as dropped. */
int import_run_folder(sqlite3 *db, int root_fd, int dfd, const char *shown, int complete, unsigned parts,
                      const struct piano_import_mem *mem, const struct spool_parents *parents, char *err,
                      size_t errn, char *note_out, size_t noten)
{
    int r = import_dir(db, root_fd, dfd, shown, complete, parts, mem, parents, 0, 0, err, errn, note_out, noten);
    if (r == IMPORT_FULL) {
        char first[512];
        snprintf(first, sizeof first, "%s", err);
        r = import_dir(db, root_fd, dfd, shown, complete, parts, mem, parents, 1, 0, err, errn, note_out, noten);
        if (r == 1 && !note_out[0])
            snprintf(note_out, noten, "the disk is too full for its frames (%s): they are counted as dropped",
                     first);
        else if (r < 0)
            snprintf(err, errn, "%s", first);
    }
    return r == IMPORT_FULL ? -1 : r;
}

int piano_import_spool(sqlite3 *db, const char *dir, int complete, char *err, size_t errn)
{
    return piano_import_spool_mem(db, dir, complete, NULL, err, errn);
}

int piano_import_spool_mem(sqlite3 *db, const char *dir, int complete, const struct piano_import_mem *mem,
                           char *err, size_t errn)
{
    /* The spool root, then the run folder in it: both checked. */
    char parent[IMPORT_PATH_MAX];
    const char *slash = strrchr(dir, '/'), *base = slash ? slash + 1 : dir;
    if (!*base || (size_t)snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - dir) : 0, dir) >= sizeof parent) {
        snprintf(err, errn, "%s is not a spool folder", dir);
        return -1;
    }
    if (!parent[0])
        snprintf(parent, sizeof parent, slash ? "/" : ".");
    int root_fd = spool_open_own_dir(AT_FDCWD, parent, parent, err, errn);
    if (root_fd < 0)
        return -1;
    int dfd = spool_open_own_dir(root_fd, base, dir, err, errn);
    if (dfd < 0) {
        close(root_fd);
        return -1;
    }
    char note_buf[IMPORT_NOTE_MAX];
    int r = import_run_folder(db, root_fd, dfd, dir, complete, PIANO_LIVE_ALL, mem, NULL, err, errn, note_buf,
                              sizeof note_buf);
    if (r == IMPORT_NO_RUN) {
        snprintf(err, errn, "%s/" PIANO_SPOOL_RUN " is missing", dir);
        r = -1;
    } else if (r == 1 && note_buf[0]) {
        snprintf(err, errn, "%s", note_buf);
    }
    close(dfd);
    close(root_fd);
    return r;
}
