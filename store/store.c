/* store.c - open piano's database and make sure its schema is the one in piano_schema.h. */
#include "store.h"
#include "db_path.h"
#include "piano_schema.h"
#include "contexts_blob.h"
#include "frames_blob.h"
#include "functions_blob.h"
#include "stats_blob.h"
#include "fns_blob.h"
#include "spool.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int piano_store_exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* piano_fns_v3(blob): a schema-2 frames.fns blob ({ uint32 id; uint64 ns; }
 * little-endian records) in the schema-3 encoding (fns_blob.h). A blob that
 * is not whole records is left as it is (piano-db reports it malformed). */
static void fns_v3(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const unsigned char *b = sqlite3_value_blob(argv[0]);
    size_t len = (size_t)sqlite3_value_bytes(argv[0]);
    if (len % 12) {
        sqlite3_result_value(ctx, argv[0]);
        return;
    }
    unsigned char *out = sqlite3_malloc64(len / 12 * PIANO_FNS_ENTRY_MAX + 1);
    if (!out) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < len; i += 12) {
        uint32_t id = 0;
        uint64_t ns = 0;
        for (int k = 3; k >= 0; k--)
            id = id << 8 | b[i + (size_t)k];
        for (int k = 7; k >= 0; k--)
            ns = ns << 8 | b[i + 4 + (size_t)k];
        n += piano_fns_put(out + n, id, ns);
    }
    sqlite3_result_blob(ctx, out, (int)n, sqlite3_free);
}

/* Reads the schema version and the number of schema objects in one
 * statement, so both come from the same snapshot. */
static int read_state(sqlite3 *db, int *version, int *tables)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT (SELECT user_version FROM pragma_user_version), "
                                "(SELECT count(*) FROM sqlite_master)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *version = sqlite3_column_int(st, 0);
            *tables = sqlite3_column_int(st, 1);
            rc = SQLITE_OK;
        } else {
            rc = sqlite3_errcode(db);
            if (rc == SQLITE_OK)
                rc = SQLITE_ERROR;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* What went wrong, as a phrase: the disk is full, read-only, permission... */
static const char *why_failed(sqlite3 *db, int rc, const char *path, char *buf, size_t n)
{
    int sys = db ? sqlite3_system_errno(db) : 0;
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return "the disk is full";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return "locked by another process (database is locked)";
    case SQLITE_NOMEM:
        return "out of memory";
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        if (sys == ENOSPC)
            return "the disk is full";
        if (sys == EROFS)
            return "read-only file system";
        if (sys == EDQUOT)
            return "disk quota exceeded";
        if (sys == EACCES || sys == EPERM || (rc & 0xff) == SQLITE_READONLY) {
            const char *why = piano_db_unwritable(path, buf, n);
            if (why)
                return why;
            if ((rc & 0xff) == SQLITE_READONLY)
                return "read-only";
            return "permission denied";
        }
        if (sys) {
            snprintf(buf, n, "%s (%s)", sqlite3_errstr(rc), strerror(sys));
            return buf;
        }
        break;
    }
    return db && sqlite3_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

/* A database opened as a read-only file (no locks, no WAL): only when the
 * database has no write-ahead log to read, and -shm cannot be made (a read-only
 * folder, a full disk). */
static sqlite3 *open_immutable(const char *path)
{
    char wal[PATH_MAX + 8];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &st) == 0 && st.st_size > 0)
        return NULL;
    /* A URI: '%', '?' and '#' are escaped; everything else is taken as it is. */
    size_t len = strlen(path);
    char *uri = malloc(len * 3 + 32);
    if (!uri)
        return NULL;
    char *o = uri + sprintf(uri, "file:");
    for (const char *c = path; *c; c++) {
        if (*c == '%' || *c == '?' || *c == '#')
            o += sprintf(o, "%%%02X", (unsigned char)*c);
        else
            *o++ = *c;
    }
    strcpy(o, "?immutable=1");
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        db = NULL;
    }
    free(uri);
    return db;
}

/* The file of a database opened for writing: created here, by this user, never
 * through a link another user planted, with its folder; or checked again when
 * it appeared meanwhile. Returns 0, or -1 with a reason in err. */
static int create_file(const char *path, int *is_link, char *err, size_t errn)
{
    if (piano_db_make_parent(path, err, errn))
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
    } else if (errno != EEXIST) {
        int e = errno;
        snprintf(err, errn, "cannot create %s: %s", path,
                 e == ENOSPC ? "the disk is full" : e == EROFS ? "read-only file system" : strerror(e));
        return -1;
    } else if (piano_db_check_path(path, is_link, err, errn) != 0) {
        return -1;   /* it appeared meanwhile: the same checks */
    }
    return 0;
}

/* Opens the database file at path (checked: is_link, a link the user made
 * himself) and reads its schema version and the number of its tables. Returns
 * the handle, or NULL with a reason in err. */
static sqlite3 *open_file(const char *path, int mode, int is_link, int *version, int *tables, char *err, size_t errn)
{
    sqlite3 *db = NULL;
    char why[PATH_MAX + 128];
    /* Readers open read-only: a database in a read-only folder, a read-only file
     * or one on a full disk can still be read. Only a link the user made
     * himself (checked above) is followed. */
    int flags = (mode == PIANO_STORE_WRITE ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
#ifdef SQLITE_OPEN_NOFOLLOW
    if (!is_link)
        flags |= SQLITE_OPEN_NOFOLLOW;
#else
    (void)is_link;
#endif
    int rc = sqlite3_open_v2(path, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errn, "cannot open %s: %s", path, db ? why_failed(db, sqlite3_errcode(db), path, why, sizeof why)
                                                          : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 60000);
    sqlite3_extended_result_codes(db, 1);
    rc = read_state(db, version, tables);
    if (rc != SQLITE_OK && mode == PIANO_STORE_READ && (rc & 0xff) != SQLITE_NOTADB &&
        (rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_BUSY) {
        /* No -shm can be made next to it (read-only folder, full disk): read the
         * file as it is, when it has no write-ahead log waiting. */
        sqlite3 *ro = open_immutable(path);
        if (ro) {
            sqlite3_extended_result_codes(ro, 1);
            if (read_state(ro, version, tables) == SQLITE_OK) {
                sqlite3_close(db);
                db = ro;
                rc = SQLITE_OK;
            } else {
                sqlite3_close(ro);
            }
        }
    }
    if (rc != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_NOTADB)
            snprintf(err, errn, "%s is not a piano database (%s)", path, sqlite3_errstr(rc));
        else if ((rc & 0xff) == SQLITE_CORRUPT)
            snprintf(err, errn, "%s is damaged (%s)", path, sqlite3_errstr(rc));
        else
            snprintf(err, errn, "cannot read %s: %s", path, why_failed(db, rc, path, why, sizeof why));
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* Ends the transaction that upgraded or made the schema (ok: all went well),
 * or rolls it back with "cannot <what> of <path>: <why>" in err. Returns 0 or -1. */
static int commit_schema(sqlite3 *db, int ok, const char *what, const char *path, char *err, size_t errn)
{
    if (ok && piano_store_exec(db, "COMMIT") == SQLITE_OK)
        return 0;
    char why[PATH_MAX + 128];
    snprintf(err, errn, "cannot %s %s: %s", what, path,
             why_failed(db, sqlite3_extended_errcode(db), path, why, sizeof why));
    piano_store_exec(db, "ROLLBACK");
    return -1;
}

/* An older piano's database: upgrade it in place, under the write lock
 * (another process may be doing the same). Returns 0, or -1 with a reason in err. */
/* The columns of the metrics (spool/metrics.h) that stat_rows and context_rows lack
 * (added since the database was made): NULL in older rows when measured only
 * when asked, else 0. Returns SQLITE_OK or an error. */
static int add_metric_columns(sqlite3 *db)
{
    static const struct piano_metric_info metrics[] = {PIANO_METRIC_INFO};
    static const char *const tables[] = {"stat_rows", "context_rows"};
    int rc = SQLITE_OK;
    for (int t = 0; t < 2 && rc == SQLITE_OK; t++)
        for (int m = 0; m < PIANO_M_N && rc == SQLITE_OK; m++) {
            if (metrics[m].where == PIANO_WHERE_HIST || (t && metrics[m].where == PIANO_WHERE_FN))
                continue;
            char sql[256];
            snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", tables[t],
                     metrics[m].id);
            sqlite3_stmt *st = NULL;
            rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
            int has = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
            sqlite3_finalize(st);
            if (rc != SQLITE_OK || has)
                continue;
            snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s INTEGER%s", tables[t], metrics[m].id,
                     metrics[m].when == PIANO_WHEN_ALWAYS ? " NOT NULL DEFAULT 0" : "");
            rc = piano_store_exec(db, sql);
        }
    return rc;
}

/* Whether the database has table name. */
static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int has = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st,
                                 NULL) == SQLITE_OK &&
              sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return has;
}

static int upgrade_schema(sqlite3 *db, const char *path, char *err, size_t errn)
{
    char buf[64];
    int version, tables;
    snprintf(buf, sizeof buf, "PRAGMA user_version=%d", PIANO_SCHEMA_VERSION);
    int ok = piano_store_exec(db, "BEGIN IMMEDIATE") == SQLITE_OK && read_state(db, &version, &tables) == SQLITE_OK;
    if (ok && version == 1)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_1) == SQLITE_OK;
    if (ok && version <= 2)
        ok = sqlite3_create_function(db, "piano_fns_v3", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, fns_v3, NULL,
                                     NULL) == SQLITE_OK &&
             piano_store_exec(db, "UPDATE frames SET fns = piano_fns_v3(fns)") == SQLITE_OK;
    if (ok && version <= 3)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_3) == SQLITE_OK;
    if (ok && version <= 4)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_4) == SQLITE_OK;
    if (ok && version <= 5)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_5) == SQLITE_OK;
    if (ok && version <= 6)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_6) == SQLITE_OK;
    if (ok && version <= 7)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_7) == SQLITE_OK;
    if (ok && version <= 8)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_8) == SQLITE_OK;
    if (ok && version <= 9)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_9) == SQLITE_OK;
    if (ok && version <= 10)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_10) == SQLITE_OK;
    if (ok && version <= 11)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_11) == SQLITE_OK;
    if (ok && version <= 12)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_12) == SQLITE_OK;
    if (ok && version < PIANO_SCHEMA_VERSION)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_13) == SQLITE_OK;
    if (ok && version < PIANO_SCHEMA_TAG_RUNS_SINCE)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_TAG_RUNS) == SQLITE_OK;
    int pack = ok && version < PIANO_SCHEMA_VERSION && !has_table(db, "context_trees");
    if (pack)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_CONTEXT_TREES) == SQLITE_OK;
    if (ok && version < PIANO_SCHEMA_VERSION && !has_table(db, "stat_trees"))
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_STAT_TREES) == SQLITE_OK;
    int pack_frames = ok && version < PIANO_SCHEMA_VERSION && !has_table(db, "frame_blocks");
    if (pack_frames)
        ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_FRAME_BLOCKS) == SQLITE_OK &&
             piano_frames_pack(db) == SQLITE_OK;
    int pack_fns = ok && version < PIANO_SCHEMA_VERSION && !has_table(db, "fn_lists");
    if (ok && version < PIANO_SCHEMA_VERSION)
        ok = add_metric_columns(db) == SQLITE_OK && (!pack || piano_contexts_pack(db) == SQLITE_OK) &&
             piano_store_exec(db, PIANO_SCHEMA_MIGRATE_VIEWS) == SQLITE_OK &&
             (!pack_fns || piano_functions_pack(db) == SQLITE_OK) && piano_store_exec(db, buf) == SQLITE_OK;
    return commit_schema(db, ok, "upgrade the schema of", path, err, errn);
}

/* An empty file: make the schema. Several processes may find the file empty
 * at once: the one that gets the write lock first makes the schema, the
 * others see it. Returns 0, or -1 with a reason in err. */
static int create_schema(sqlite3 *db, const char *path, char *err, size_t errn)
{
    char buf[64];
    int version, tables;
    snprintf(buf, sizeof buf, "PRAGMA user_version=%d", PIANO_SCHEMA_VERSION);
    int ok = piano_store_exec(db, "BEGIN IMMEDIATE") == SQLITE_OK && read_state(db, &version, &tables) == SQLITE_OK;
    if (ok && version == 0 && tables != 0) {
        piano_store_exec(db, "ROLLBACK");
        snprintf(err, errn, "%s is not a piano database", path);
        return -1;
    }
    if (ok && version == 0)
        ok = piano_store_exec(db, PIANO_SCHEMA_SQL) == SQLITE_OK && piano_store_exec(db, buf) == SQLITE_OK;
    return commit_schema(db, ok, "create the schema in", path, err, errn);
}

sqlite3 *piano_store_open(const char *path, int mode, char *err, size_t errn)
{
    struct stat st;
    char why[PATH_MAX + 128];
    int is_link = 0;
    if (mode == PIANO_STORE_READ && stat(path, &st) != 0) {
        snprintf(err, errn, "no database at %s", path);
        return NULL;
    }
    if (piano_db_check_path(path, &is_link, err, errn) != 0 ||
        (mode == PIANO_STORE_WRITE && create_file(path, &is_link, err, errn) != 0))
        return NULL;
    int version, tables;
    sqlite3 *db = open_file(path, mode, is_link, &version, &tables, err, errn);
    if (!db)
        return NULL;
    if (version > PIANO_SCHEMA_VERSION) {
        snprintf(err, errn, "%s has schema version %d, newer than this piano's %d: upgrade piano",
                 path, version, PIANO_SCHEMA_VERSION);
        sqlite3_close(db);
        return NULL;
    }
    /* Version 0 with tables in it: somebody else's database. */
    if (version == 0 && tables != 0) {
        snprintf(err, errn, "%s is not a piano database", path);
        sqlite3_close(db);
        return NULL;
    }
    if (version > 0 && version < PIANO_SCHEMA_VERSION && mode == PIANO_STORE_READ) {
        /* An older schema: upgraded through a writing connection, then read. */
        sqlite3_close(db);
        if (piano_db_unwritable(path, why, sizeof why)) {
            snprintf(err, errn, "%s has schema version %d: open it once with write access to upgrade it (%s)",
                     path, version, why);
            return NULL;
        }
        db = piano_store_open(path, PIANO_STORE_WRITE, err, errn);
        if (!db)
            return NULL;
        sqlite3_close(db);
        return piano_store_open(path, PIANO_STORE_READ, err, errn);
    }
    if (version == 0 && mode == PIANO_STORE_READ) {
        snprintf(err, errn, "no runs stored in %s yet", path);
        sqlite3_close(db);
        return NULL;
    }
    piano_store_exec(db, "PRAGMA foreign_keys=ON");
    /* A new database's pages are 2 KiB (SQLite's default 4): a run's blobs
     * (its threads' contexts and stats) end in a partly filled page each, and
     * the rows of small tables fill a page per run. Schema 21's jq trivial
     * run: 20,275 bytes a run with 2 KiB pages, 20,206 with 1 KiB (schema
     * 20's), 21,094 with 4 KiB; but every page is a write to the log and one
     * read and write of its checkpoint: storing 1M frames made 262,700
     * syscalls with 1 KiB pages, 131,200 with 2 KiB, 66,300 with 4 KiB
     * (bench/README.md, issue 23). Set before WAL, which writes the first
     * page; an existing database keeps its page size. */
    if (mode == PIANO_STORE_WRITE && version == 0)
        piano_store_exec(db, "PRAGMA page_size=2048");
    /* WAL is persistent: if another process holds a lock while switching, the
     * first writer has set it. */
    if (mode == PIANO_STORE_WRITE)
        piano_store_exec(db, "PRAGMA journal_mode=WAL");
    /* The write-ahead log and its index stay when the last connection closes:
     * a short process then neither creates them, which made its store sync
     * the folder too, nor deletes them (bench/README.md, row (f)). A close
     * that checkpoints empties the log (piano-db's always, a run's process
     * past a size: piano_store_close_stored); an empty log lets a read-only
     * folder's reader without an index open the file as it is (open_immutable). */
    int persist = 1;
    sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    piano_store_exec(db, "PRAGMA journal_size_limit=0");
    if ((version > 0 && version < PIANO_SCHEMA_VERSION && upgrade_schema(db, path, err, errn)) ||
        (version == 0 && create_schema(db, path, err, errn))) {
        sqlite3_close(db);
        return NULL;
    }
    /* SQLite has opened (or made) the log and its index by now: one another
     * user planted in a sticky folder after the checks above is refused
     * before anything of the run is written (such a user cannot replace a
     * file of this user's there afterwards). */
    if (piano_db_check_around(path, 1, err, errn)) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

off_t piano_store_log_bytes(const char *path)
{
    /* The log is next to the file a link (the user's own) leads to. Not
     * sqlite3_filename_wal: the store may run through a program's own older
     * SQLite (doc/running.md), whose file names it would misread. */
    char wal[PATH_MAX + 8], real[PATH_MAX];
    struct stat st;
    if ((size_t)snprintf(wal, sizeof wal, "%s-wal", path) < sizeof wal && stat(wal, &st) == 0)
        return st.st_size;
    if (realpath(path, real) && (size_t)snprintf(wal, sizeof wal, "%s-wal", real) < sizeof wal &&
        stat(wal, &st) == 0)
        return st.st_size;
    return -1;
}

int piano_store_close_stored(sqlite3 *db, const char *path)
{
    /* A checkpoint costs four device flushes (the log, the file, then the log's
     * header and its folder when the next writer starts the log again) against
     * none for a commit with synchronous=NORMAL: a short process skips it while
     * the log is small. The bound stays small because the next process reads
     * the whole log back (the first connection rebuilds its index). */
    off_t log = piano_store_log_bytes(path);
    long page = 4096;   /* (a log frame is a page and 24 bytes) */
    sqlite3_stmt *st;
    if (db && log > 0 && sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0)
            page = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    if (db && log >= 0 && log < PIANO_STORE_CHECKPOINT_PAGES * (page + 24))
        sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
    return sqlite3_close(db);
}

