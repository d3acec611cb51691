/* test_schema.c - opening the database: schema creation, version checks and
 * refusal of files that are not piano's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "piano_schema.h"
#include "store.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/piano-test-schema.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

static void creates_schema_with_version(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/sub/folder/p.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), PIANO_SCHEMA_VERSION);
    sqlite3_finalize(st);
    const char *tables[] = { "runs", "functions", "threads", "stats", "contexts", "frames", "unfinished", "tags" };
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char q[128];
        snprintf(q, sizeof q, "SELECT count(*) FROM %s", tables[i]);
        assert_int_equal(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
    }
    sqlite3_close(db);
    /* opening again (read) works and keeps the version */
    db = piano_store_open(path, PIANO_STORE_READ, err, sizeof err);
    assert_non_null(db);
    sqlite3_close(db);
}

static void refuses_newer_schema(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/new.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_null(db);
    assert_non_null(strstr(err, "newer"));
    assert_null(strchr(err, '\n'));
}

static void refuses_foreign_files(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/junk.db", dir);
    FILE *f = fopen(path, "w");
    fputs("this is not a database, just some text that goes on for a while........", f);
    fclose(f);
    assert_null(piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err));
    assert_non_null(strstr(err, "not a piano database"));

    snprintf(path, sizeof path, "%s/other.db", dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE mine(x)", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_null(piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err));
    assert_non_null(strstr(err, "not a piano database"));

    snprintf(path, sizeof path, "%s/missing.db", dir);
    assert_null(piano_store_open(path, PIANO_STORE_READ, err, sizeof err));
    assert_non_null(strstr(err, "no database"));
}

/* A version-1 database (before runs.samples_dropped and calls_untimed) is
 * upgraded in place when opened for writing, its runs kept. */
static void upgrades_version_1(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/v1.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1);"
                                  "ALTER TABLE runs DROP COLUMN samples_dropped;"
                                  "ALTER TABLE runs DROP COLUMN calls_untimed;"
                                  "PRAGMA user_version=1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT user_version FROM pragma_user_version), "
                                        "count(*), sum(samples_dropped + calls_untimed) FROM runs",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), PIANO_SCHEMA_VERSION);
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(creates_schema_with_version),
        cmocka_unit_test(refuses_newer_schema),
        cmocka_unit_test(refuses_foreign_files),
        cmocka_unit_test(upgrades_version_1),
    };
    return cmocka_run_group_tests_name("schema", tests, setup, teardown);
}
