/* common.c - opening the database, errors, statements and looking runs up. */
#include "piano_db.h"
#include "import.h"
#include "spool.h"
#include "store.h"
#include "contexts_blob.h"
#include "stats_blob.h"
#include "frames_blob.h"
#include "functions_blob.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Does the spool folder (<path>.spool) hold runs: folders, other than ones
 * being made (named '.*')? Its files (the clock's calibration) are not runs. */
static int spool_pending(const char *spool)
{
    DIR *d = opendir(spool);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while (!n && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        n = e->d_type == DT_DIR ||
            (e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
             S_ISDIR(st.st_mode));
    }
    closedir(d);
    return n;
}


/* SQL piano_group(name): name_group(name) (format.c). */
static void sql_name_group(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const unsigned char *name = sqlite3_value_text(argv[0]);
    if (!name) {
        sqlite3_result_null(ctx);
        return;
    }
    sqlite3_result_text(ctx, name_group((const char *)name), -1, free);
}

static int import_pending(pdb *p)
{
    static char last[1024];   /* push --follow-all imports again and again: each warning once */
    char err[1024] = "";
    int n = piano_import_recover(p->db, p->path, err, sizeof err);
    if (n < 0 && strcmp(err, last) != 0) {
        snprintf(last, sizeof last, "%s", err);
        /* Stored runs are still worth showing: warn on one line and go on. */
        fprintf(stderr, "piano-db: warning: runs waiting in the spool: %s\n",
                err[0] ? err : "unknown error");
    }
    return n < 0 ? 0 : n;
}

unsigned pdb_live_parts = PIANO_LIVE_ALL;

/* The runs of live processes, as they are now, for a command that only
 * reads: imported into a transaction that is never committed (the process
 * ends and closes the database without it), so a live run is never stored and
 * its spool never touched. Only what the command shows is read
 * (pdb_live_parts: a live run's frames can be millions), so the transaction,
 * and the write lock it holds, lasts milliseconds; a program storing its run
 * at exit meanwhile waits for it (rt/finish.c). */
int pdb_live_reload(pdb *p)
{
    char err[1024] = "";
    pdb_live_release(p);   /* the live runs read before */
    if (sqlite3_exec(p->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return -1;   /* the database is busy: the stored runs only */
    if (piano_import_live(p->db, p->path, pdb_live_parts, err, sizeof err) < 0)
        fprintf(stderr, "piano-db: warning: %s\n", err[0] ? err : "cannot read the runs of live processes");
    return 0;
}

void pdb_live_release(pdb *p)
{
    if (!sqlite3_get_autocommit(p->db))
        sqlite3_exec(p->db, "ROLLBACK", NULL, NULL, NULL);
}

double pdb_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int pdb_recover_pending(pdb *p)
{
    char spool[sizeof p->path + sizeof PIANO_SPOOL_SUFFIX];
    if (piano_spool_root(spool, sizeof spool, p->path) != 0 || !spool_pending(spool))
        return 0;
    return import_pending(p);
}

const struct piano_metric_info pdb_metrics[PIANO_M_N] = {PIANO_METRIC_INFO};
const size_t pdb_metric_offset[PIANO_M_N] = {
#define OFFSET(id, ...) offsetof(fnrow, id),
    PIANO_METRICS(OFFSET)
#undef OFFSET
};

static void pdb_probe_schema(pdb *p);

/* The views contexts, stats, functions and frames (TEMP: the stored schema
 * has none since 19): the blobs of context_trees, stat_trees, fn_lists and
 * frame_blocks read in C (store/contexts_blob.c, store/stats_blob.c,
 * store/functions_blob.c, store/frames_blob.c) with the rows of context_rows,
 * stat_rows, run_functions and frame_rows. Once per connection. */
static int register_views(pdb *p)
{
    int rc = SQLITE_OK;
    if (!p->has_views && (rc = piano_contexts_register(p->db)) == SQLITE_OK &&
        (rc = piano_stats_register(p->db)) == SQLITE_OK && (rc = piano_functions_register(p->db)) == SQLITE_OK &&
        (rc = piano_frames_register(p->db)) == SQLITE_OK)
        p->has_views = 1;
    return rc;
}

void pdb_open(pdb *p, const char *dbopt, int write)
{
    char err[1024] = "", why[1024];
    memset(p, 0, sizeof *p);
    /* The one check of the path (resolved once, refused before anything is made). */
    if (piano_db_resolve_path(dbopt, p->path, sizeof p->path, err, sizeof err) != 0)
        pdb_die("%s", err);
    struct stat st;
    int exists = stat(p->path, &st) == 0;
    /* Runs waiting in the spool (crashed or killed processes, exec'd ones, PIANO_STORE=later, a
     * changed user or root) are stored only where the database can be written. */
    char spool[sizeof p->path + sizeof PIANO_SPOOL_SUFFIX];
    if (piano_spool_root(spool, sizeof spool, p->path) != 0)
        pdb_die("%s: the path is too long", p->path);
    int pending = spool_pending(spool);
    const char *ro = piano_db_unwritable(p->path, why, sizeof why);
    if (!exists && pending && write == PDB_OPEN_AS_IS)
        pdb_die("no database at %s yet: runs wait in %s, which another command (piano-db runs) stores",
                p->path, spool);
    if (!exists && !pending)
        pdb_die("no database at %s", p->path);
    if (write == PDB_OPEN_AS_IS) {
        /* sql: the stored runs as they are (no import: the user's statements
         * do not run inside one), for writing when the file can be written. */
        p->db = piano_store_open(p->path, ro ? PIANO_STORE_READ : PIANO_STORE_WRITE, err, sizeof err);
        if (!p->db)
            pdb_die("%s", err);
        pending = 0;
        write = 0;
    }
    if (!exists && ro)
        pdb_die("no database at %s, and the runs waiting in %s cannot be stored: %s", p->path, spool, ro);
    if (write && ro)
        pdb_die("cannot write %s: %s", p->path, ro);
    /* A log the programs' stores left: a command that may write opens for
     * writing, so that its close, as the database's last user, copies the log
     * into the file (a connection that only reads never does). */
    int fold = exists && !ro && piano_store_log_bytes(p->path) > 0;
    if (!p->db && (write || ((pending || fold) && !ro))) {
        p->db = piano_store_open(p->path, PIANO_STORE_WRITE, err, sizeof err);
        if (!p->db && (write || !exists))
            pdb_die("%s", err);
        if (!p->db && pending)
            fprintf(stderr, "piano-db: warning: %s; the runs waiting in %s are not imported\n",
                    err, spool);
    } else if (pending) {
        fprintf(stderr, "piano-db: warning: %s: %s; the runs waiting in %s are not imported\n",
                p->path, ro, spool);
    }
    if (p->db && pending) {
        import_pending(p);
        /* The views first: made in the live runs' transaction, its rollback
         * (pdb_live_release) would take them away. */
        if (!write) {
            register_views(p);   /* (a failure: dies below, with the checks) */
            pdb_live_reload(p);
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
    if (register_views(p) != SQLITE_OK)
        pdb_die("cannot read %s: %s", p->path, sqlite3_errmsg(p->db));
    /* report --group template keys rows by it (aggregate.c) */
    sqlite3_create_function(p->db, "piano_group", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_name_group,
                            NULL, NULL);
    pdb_probe_schema(p);
    sqlite3_stmt *hs = pdb_prepare(p, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'selection'");
    if (pdb_step(p, hs) == SQLITE_ROW)
        p->has_selection = sqlite3_column_int(hs, 0) > 0;
    sqlite3_finalize(hs);
    const char *nc = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    p->color = isatty(STDOUT_FILENO) && !nc && !(term && strcmp(term, "dumb") == 0);
}

/* What the schema has, asked once: the columns of stats (child_calls, each
 * metric's) and of runs (allocator), the table tag_runs -- older databases
 * opened read-only lack some. */
static void pdb_probe_schema(pdb *p)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT 's', name FROM pragma_table_info('stats') UNION ALL "
                                      "SELECT 'r', name FROM pragma_table_info('runs') UNION ALL "
                                      "SELECT 't', name FROM sqlite_master WHERE type = 'table' AND name = 'tag_runs'");
    while (pdb_step(p, st) == SQLITE_ROW) {
        const char *table = pdb_col_text(st, 0), *name = pdb_col_text(st, 1);
        if (*table == 't') {
            p->has_tag_runs = 1;
            continue;
        }
        if (*table == 'r') {
            p->has_allocator |= !strcmp(name, "allocator");
            continue;
        }
        p->has_child_calls |= !strcmp(name, "child_calls");
        for (int m = 0; m < PIANO_M_N; m++)
            if (!strcmp(name, pdb_metrics[m].id))
                p->has_metric[m] = 1;
    }
    sqlite3_finalize(st);
    p->has_cpu = p->has_metric[PIANO_M_offcpu_ns];
    p->has_inuse = p->has_metric[PIANO_M_inuse_bytes];
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
