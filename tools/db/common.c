/* common.c - opening the database, errors, statements and looking runs up. */
#include "piano_db.h"
#include "import.h"
#include "store.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void (*pdb_die_hook)(const char *msg);

static _Noreturn void vdie(int code, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* One line, whatever the message holds. */
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    if (pdb_die_hook)
        pdb_die_hook(msg);   /* does not return (the fuzzers longjmp) */
    fflush(stdout);
    fprintf(stderr, "piano-db: %s\n", msg);
    exit(code);
}

void pdb_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdie(EXIT_ERR, fmt, ap);
}

void pdb_usage_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdie(EXIT_USAGE, fmt, ap);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        pdb_die("out of memory");
    return p;
}

void *xcalloc(size_t n, size_t m)
{
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p)
        pdb_die("out of memory");
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        pdb_die("out of memory");
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* Does <path>.spool hold runs (other than ones being made, named '.*')? */
static int spool_pending(const char *path)
{
    char spool[sizeof ((pdb *)0)->path + 8];
    snprintf(spool, sizeof spool, "%s.spool", path);
    DIR *d = opendir(spool);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while (!n && (e = readdir(d)) != NULL)
        n = e->d_name[0] != '.';
    closedir(d);
    return n;
}

void pdb_open(pdb *p, const char *dbopt, int write)
{
    char err[1024] = "", why[1024];
    memset(p, 0, sizeof *p);
    /* The one check of the path (resolved once, refused before anything is made). */
    if (piano_store_resolve_path(dbopt, p->path, sizeof p->path, err, sizeof err) != 0)
        pdb_die("%s", err);
    struct stat st;
    int exists = stat(p->path, &st) == 0;
    /* Runs of crashed processes are stored only where the database can be written. */
    int pending = spool_pending(p->path);
    const char *ro = piano_store_unwritable(p->path, why, sizeof why);
    if (!exists && !pending)
        pdb_die("no database at %s", p->path);
    if (!exists && ro)
        pdb_die("no database at %s, and the runs waiting in %s.spool cannot be stored: %s", p->path, p->path, ro);
    if (write && ro)
        pdb_die("cannot write %s: %s", p->path, ro);
    if (write || (pending && !ro)) {
        p->db = piano_store_open(p->path, PIANO_STORE_WRITE, err, sizeof err);
        if (!p->db && (write || !exists))
            pdb_die("%s", err);
        if (!p->db)
            fprintf(stderr, "piano-db: warning: %s; the runs of crashed processes in %s.spool are not imported\n",
                    err, p->path);
    } else if (pending) {
        fprintf(stderr, "piano-db: warning: %s: %s; the runs of crashed processes in %s.spool are not imported\n",
                p->path, ro, p->path);
    }
    if (p->db && pending) {
        err[0] = 0;
        if (piano_import_recover(p->db, p->path, err, sizeof err) < 0) {
            /* Stored runs are still worth showing: warn on one line and go on. */
            fprintf(stderr, "piano-db: warning: cannot import runs of crashed processes: %s\n",
                    err[0] ? err : "unknown error");
        }
    }
    /* A command that only reads opens read-only: a read-only folder or file, or
     * a full disk, still lets it read. */
    if (!p->db)
        p->db = piano_store_open(p->path, PIANO_STORE_READ, err, sizeof err);
    if (!p->db)
        pdb_die("%s", err);
    /* Make sure the file really is readable (a corrupt page shows up here). */
    sqlite3_stmt *st_q = NULL;
    if (sqlite3_prepare_v2(p->db, "SELECT count(*) FROM runs", -1, &st_q, NULL) != SQLITE_OK ||
        sqlite3_step(st_q) != SQLITE_ROW) {
        int rc = sqlite3_errcode(p->db);
        const char *m = sqlite3_errmsg(p->db);
        if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB)
            pdb_die("%s is damaged (%s)", p->path, m);
        pdb_die("cannot read %s: %s", p->path, m);
    }
    sqlite3_finalize(st_q);
    sqlite3_stmt *cc = pdb_prepare(p, "SELECT count(*) FROM pragma_table_info('stats') "
                                      "WHERE name = 'child_calls'");
    if (pdb_step(p, cc) == SQLITE_ROW)
        p->has_child_calls = sqlite3_column_int(cc, 0) > 0;
    sqlite3_finalize(cc);
    const char *nc = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    p->color = isatty(STDOUT_FILENO) && !nc && !(term && strcmp(term, "dumb") == 0);
}

void pdb_close(pdb *p)
{
    if (p->db)
        sqlite3_close(p->db);
    p->db = NULL;
}

sqlite3_stmt *pdb_prepare(pdb *p, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) != SQLITE_OK)
        pdb_die("%s: %s", p->path, sqlite3_errmsg(p->db));
    return st;
}

int pdb_step(pdb *p, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        pdb_die("%s: %s", p->path, sqlite3_errmsg(p->db));
    return rc;
}

void pdb_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

const char *pdb_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

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
    if (id < 0)
        pdb_die("no run or tag '%s' in %s", esc_ctrl(arg), p->path);
    return id;
}

/* The n latest runs (newest first), those that recorded something (a call, an
 * allocation or a frame) before those that did not: a build tool's exec'd
 * children leave empty runs that no default should pick. Returns how many. */
static int latest_runs(pdb *p, int n, int64_t *ids, int64_t *started)
{
    sqlite3_stmt *st = pdb_prepare(p,
        "SELECT id, started_ns FROM runs r ORDER BY "
        "(EXISTS (SELECT 1 FROM stats s WHERE s.run = r.id AND (s.calls > 0 OR s.allocs > 0)) "
        " OR EXISTS (SELECT 1 FROM frames f WHERE f.run = r.id)) DESC, "
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
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id, key, parent_key, pid, command, started_ns, "
                                      "duration_ns, status, ns_per_tick, overhead_ns, "
                                      "frames_dropped, samples_dropped, calls_untimed, "
                                      "coalesce(frames, -1), coalesce(frames_kept, -1), spikes_unkept "
                                      "FROM runs WHERE id = ?");
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

/* Counting walks the primary key (run, seq[, thread]) and never decodes the
 * fns blobs; only for runs stored without their count (fixtures, hand-made). */
int64_t pdb_frame_count(pdb *p, int64_t run, long thread)
{
    sqlite3_stmt *st = thread < 0 ? pdb_prepare(p, "SELECT frames FROM runs WHERE id = ?")
                                  : pdb_prepare(p, "SELECT frames FROM threads WHERE run = ? AND thread = ?");
    sqlite3_bind_int64(st, 1, run);
    if (thread >= 0)
        sqlite3_bind_int64(st, 2, thread);
    int stored = pdb_step(p, st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    int64_t n = stored ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (stored)
        return n;
    st = thread < 0
        ? pdb_prepare(p, "SELECT count(*) FROM frames WHERE run = ?")
        : pdb_prepare(p, "SELECT count(*) FROM frames WHERE run = ? AND thread = ?");
    sqlite3_bind_int64(st, 1, run);
    if (thread >= 0)
        sqlite3_bind_int64(st, 2, thread);
    if (pdb_step(p, st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int pdb_frame_hist(pdb *p, int64_t run, long thread, piano_hist *h)
{
    memset(h, 0, sizeof *h);
    sqlite3_stmt *st = thread < 0 ? pdb_prepare(p, "SELECT frame_hist FROM runs WHERE id = ?")
                                  : pdb_prepare(p, "SELECT frame_hist FROM threads WHERE run = ? AND thread = ?");
    sqlite3_bind_int64(st, 1, run);
    if (thread >= 0)
        sqlite3_bind_int64(st, 2, thread);
    int has = pdb_step(p, st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
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
