/* store.c - open piano's database and make sure its schema is the one in piano_schema.h. */
#include "store.h"
#include "piano_schema.h"
#include "fns_blob.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *piano_store_default_path(char *buf, size_t n)
{
    const char *env = getenv("PIANO_DB");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return buf;
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    snprintf(buf, n, "%s/.piano/piano.db", home);
    return buf;
}

int piano_store_exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Creates the folder that will hold path, mode 0700 for the last component. */
int piano_store_make_parent(const char *path, char *err, size_t errn)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    struct stat st;
    if (stat(dir, &st) == 0)
        return 0;
    /* Create missing ancestors, then the folder itself. */
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errn, "cannot create folder %s: %s", dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errn, "cannot create folder %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
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

sqlite3 *piano_store_open(const char *path, int mode, char *err, size_t errn)
{
    sqlite3 *db = NULL;
    struct stat st;
    if (mode == PIANO_STORE_READ && stat(path, &st) != 0) {
        snprintf(err, errn, "no database at %s", path);
        return NULL;
    }
    if (mode == PIANO_STORE_WRITE) {
        if (piano_store_make_parent(path, err, errn))
            return NULL;
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, errn, "cannot open %s: %s", path, strerror(errno));
            return NULL;
        }
        close(fd);
    }
    /* Even readers open read-write: WAL recovery and busy handling need it. */
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        snprintf(err, errn, "cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 60000);
    sqlite3_extended_result_codes(db, 1);
    int version, tables;
    int rc = read_state(db, &version, &tables);
    if (rc != SQLITE_OK) {
        snprintf(err, errn, "%s is not a piano database (%s)", path, sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }
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
    if (version > 0 && version < PIANO_SCHEMA_VERSION && mode == PIANO_STORE_READ &&
        access(path, W_OK) != 0) {
        snprintf(err, errn, "%s has schema version %d: open it once with write access to upgrade it",
                 path, version);
        sqlite3_close(db);
        return NULL;
    }
    if (version == 0 && mode == PIANO_STORE_READ) {
        snprintf(err, errn, "no runs stored in %s yet", path);
        sqlite3_close(db);
        return NULL;
    }
    piano_store_exec(db, "PRAGMA foreign_keys=ON");
    /* WAL is persistent: if another process holds a lock while switching, the
     * first writer has set it. */
    piano_store_exec(db, "PRAGMA journal_mode=WAL");
    if (version > 0 && version < PIANO_SCHEMA_VERSION) {
        /* An older piano's database: upgrade it in place, under the write lock
         * (another process may be doing the same). */
        char buf[64];
        snprintf(buf, sizeof buf, "PRAGMA user_version=%d", PIANO_SCHEMA_VERSION);
        int ok = piano_store_exec(db, "BEGIN IMMEDIATE") == SQLITE_OK &&
                 read_state(db, &version, &tables) == SQLITE_OK;
        if (ok && version == 1)
            ok = piano_store_exec(db, PIANO_SCHEMA_MIGRATE_1) == SQLITE_OK;
        if (ok && version <= 2)
            ok = sqlite3_create_function(db, "piano_fns_v3", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                         fns_v3, NULL, NULL) == SQLITE_OK &&
                 piano_store_exec(db, "UPDATE frames SET fns = piano_fns_v3(fns)") == SQLITE_OK;
        if (ok && version < PIANO_SCHEMA_VERSION)
            ok = piano_store_exec(db, buf) == SQLITE_OK;
        if (!ok || piano_store_exec(db, "COMMIT") != SQLITE_OK) {
            snprintf(err, errn, "cannot upgrade the schema of %s: %s", path, sqlite3_errmsg(db));
            piano_store_exec(db, "ROLLBACK");
            sqlite3_close(db);
            return NULL;
        }
    }
    if (version == 0) {
        /* Several processes may find the file empty at once: the one that
         * gets the write lock first makes the schema, the others see it. */
        char buf[64];
        snprintf(buf, sizeof buf, "PRAGMA user_version=%d", PIANO_SCHEMA_VERSION);
        int ok = piano_store_exec(db, "BEGIN IMMEDIATE") == SQLITE_OK &&
                 read_state(db, &version, &tables) == SQLITE_OK;
        if (ok && version == 0 && tables != 0) {
            piano_store_exec(db, "ROLLBACK");
            snprintf(err, errn, "%s is not a piano database", path);
            sqlite3_close(db);
            return NULL;
        }
        if (ok && version == 0)
            ok = piano_store_exec(db, PIANO_SCHEMA_SQL) == SQLITE_OK &&
                 piano_store_exec(db, buf) == SQLITE_OK;
        if (!ok || piano_store_exec(db, "COMMIT") != SQLITE_OK) {
            snprintf(err, errn, "cannot create the schema in %s: %s", path, sqlite3_errmsg(db));
            piano_store_exec(db, "ROLLBACK");
            sqlite3_close(db);
            return NULL;
        }
    }
    return db;
}
