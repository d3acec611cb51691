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
#include "blob_pack.h"
#include "contexts_blob.h"
#include "fns_blob.h"
#include "frames_blob.h"
#include "functions_blob.h"
#include "piano_schema.h"
#include "schema18_views.h"
#include "stats_blob.h"
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

static int count_of(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* The views stats, contexts, functions and frames as `piano-db sql` makes them on its
 * connection (TEMP: the stored schema has none since 19), taking writes. */
static void with_views(sqlite3 *db)
{
    assert_int_equal(piano_contexts_register(db), SQLITE_OK);
    assert_int_equal(piano_stats_register(db), SQLITE_OK);
    assert_int_equal(piano_contexts_make_triggers(db), SQLITE_OK);
    assert_int_equal(piano_stats_make_triggers(db), SQLITE_OK);
    assert_int_equal(piano_functions_register(db), SQLITE_OK);
    assert_int_equal(piano_frames_register(db), SQLITE_OK);
    assert_int_equal(piano_frames_make_triggers(db), SQLITE_OK);
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
    const char *tables[] = { "runs", "names", "run_functions", "fn_lists", "threads", "stat_rows", "stat_trees", "context_rows",
                             "context_trees", "frame_rows", "frame_blocks", "unfinished", "tags", "pushes" };
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char q[128];
        snprintf(q, sizeof q, "SELECT count(*) FROM %s", tables[i]);
        assert_int_equal(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
    }
    /* No view over the blobs in the stored schema (schema 19): every
     * connection would parse it at its first statement, each run's exit too. */
    assert_int_equal(count_of(db, "SELECT count(*) FROM sqlite_master WHERE type IN ('view', 'trigger') AND"
                                  " (sql LIKE '%context_trees%' OR sql LIKE '%stat_trees%' OR name IN"
                                  " ('contexts', 'stats'))"),
                     0);
    /* nor the view functions (schema 21): a run's functions are a blob too */
    assert_int_equal(count_of(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'functions%'"), 0);
    /* piano-db's views (TEMP, this connection's) read both */
    with_views(db);
    assert_int_equal(count_of(db, "SELECT count(*) FROM functions"), 0);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stats"), 0);
    assert_int_equal(count_of(db, "SELECT count(*) FROM contexts"), 0);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frames"), 0);
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

/* What schema 5 added (the frame budget), taken away for an older schema. */
#define UNDO_5 \
    "DROP INDEX frames_spikes;" \
    "ALTER TABLE runs DROP COLUMN frames; ALTER TABLE runs DROP COLUMN frames_kept;" \
    "ALTER TABLE runs DROP COLUMN frame_hist; ALTER TABLE runs DROP COLUMN spikes_unkept;" \
    "ALTER TABLE threads DROP COLUMN frames; ALTER TABLE threads DROP COLUMN frame_hist;" \
    "ALTER TABLE frames DROP COLUMN thread_seq; ALTER TABLE frames DROP COLUMN spike;"

/* What schema 21 changed: the view functions (stored, with its trigger) read
 * run_functions alone, and there was no fn_lists. Schema 20's SQL. */
#define SCHEMA20_FUNCTIONS \
    "CREATE VIEW functions(run, id, name, file, line) AS" \
    "  SELECT f.run, f.id, n.name, n.file, n.line FROM run_functions f JOIN names n ON n.id = f.name;" \
    "CREATE TRIGGER functions_insert INSTEAD OF INSERT ON functions BEGIN" \
    "  INSERT OR IGNORE INTO names(name, file, line) VALUES(NEW.name, NEW.file, NEW.line);" \
    "  INSERT OR IGNORE INTO run_functions(run, id, name)" \
    "    SELECT NEW.run, NEW.id, id FROM names WHERE name = NEW.name AND file = NEW.file AND line = NEW.line;" \
    "END;"
#define UNDO_21 "DROP TABLE fn_lists;" SCHEMA20_FUNCTIONS
/* What schema 24 changed: frames was a table (frame_rows, renamed), no blocks. */
#define UNDO_24 "DROP TABLE frame_blocks; ALTER TABLE frame_rows RENAME TO frames;"

/* Makes database NAME in the current schema with one run, takes away what
 * later schemas added (UNDO_24, UNDO_21, then undo), runs old_sql, and opens it for
 * writing. */
static sqlite3 *open_undone(const char *name, const char *undo, const char *old_sql)
{
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, UNDO_24 UNDO_21, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, undo, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, old_sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    with_views(db);
    return db;
}

/* What schema 6 added (the allocator piano did not see). */
#define UNDO_6 "ALTER TABLE runs DROP COLUMN allocator;"
/* What schema 7 added (the queue of piano-db push). */
#define UNDO_7 "DROP TABLE pushes;"
/* What schema 9 added (CPU time). */
#define UNDO_CPU(table) \
    "ALTER TABLE " table " DROP COLUMN offcpu_ns; ALTER TABLE " table " DROP COLUMN cpu_sys_ns;" \
    "ALTER TABLE " table " DROP COLUMN cpu_user_ns; ALTER TABLE " table " DROP COLUMN cpu_total_ns;" \
    "ALTER TABLE " table " DROP COLUMN cpu_ns;"
#define UNDO_9 \
    "ALTER TABLE runs DROP COLUMN cpu_mode; ALTER TABLE frames DROP COLUMN cpu_ns;" UNDO_CPU("stats") UNDO_CPU("contexts")
/* What schema 10 added (snapshots). */
#define UNDO_10 "DROP TABLE snapshots; DROP TABLE snapshot_times;"
/* What schema 8 changed: functions was a table of its own. */
#define UNDO_8 \
    "DROP VIEW functions; DROP TABLE run_functions; DROP TABLE names;" \
    "CREATE TABLE functions(run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, id INTEGER NOT NULL," \
    " name TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL, PRIMARY KEY(run, id)) WITHOUT ROWID;"

/* What schema 11 added (heap in use). */
#define UNDO_11 \
    "ALTER TABLE runs DROP COLUMN heap_peak_bytes;" \
    "ALTER TABLE stats DROP COLUMN peak_inuse_bytes; ALTER TABLE stats DROP COLUMN inuse_bytes;" \
    "ALTER TABLE stats DROP COLUMN inuse_objects;" \
    "ALTER TABLE contexts DROP COLUMN peak_inuse_bytes; ALTER TABLE contexts DROP COLUMN inuse_bytes;" \
    "ALTER TABLE contexts DROP COLUMN inuse_objects;"

/* What schema 12 added (spans). */
#define UNDO_12 "DROP TABLE spans;"
/* What schema 13 added (the run-time selection). */
#define UNDO_13 "ALTER TABLE runs DROP COLUMN selection;"
/* What schema 14 added (spans in snapshots). */
#define UNDO_14 "DROP TABLE span_snapshots;"
/* What schema 17 changed: contexts was a table of rows. */
#define UNDO_17 "DROP TABLE context_trees; ALTER TABLE context_rows RENAME TO contexts;"
/* What schema 18 changed: stats was a table of rows. */
#define UNDO_18 "DROP TABLE stat_trees; ALTER TABLE stat_rows RENAME TO stats;"

/* Makes database NAME in the current schema with one run, turns it into an
 * older one with old_sql (after UNDO_18, UNDO_17, UNDO_14, UNDO_13, UNDO_12, UNDO_11, UNDO_10, UNDO_9, UNDO_8, UNDO_7, UNDO_6 and UNDO_5), and opens it for
 * writing: the upgrade runs. */
static sqlite3 *open_older(const char *name, const char *old_sql)
{
    return open_undone(name, UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10 UNDO_9 UNDO_8 UNDO_7 UNDO_6 UNDO_5, old_sql);
}

/* The first row of SELECT user_version, <what> on an upgraded database,
 * whose version is checked to be the current one. */
static sqlite3_stmt *first_upgraded_row(sqlite3 *db, const char *what)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT (SELECT user_version FROM pragma_user_version), %s", what);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), PIANO_SCHEMA_VERSION);
    return st;
}

/* A version-1 database (before runs.samples_dropped and calls_untimed) is
 * upgraded in place when opened for writing, its runs kept. */
static void upgrades_version_1(void **state)
{
    (void)state;
    sqlite3 *db = open_older("v1.db", "ALTER TABLE runs DROP COLUMN samples_dropped;"
                                      "ALTER TABLE runs DROP COLUMN calls_untimed;"
                                      "ALTER TABLE stats DROP COLUMN unfinished;"
                                      "PRAGMA user_version=1");
    sqlite3_stmt *st = first_upgraded_row(db, "count(*), sum(samples_dropped + calls_untimed) FROM runs");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-2 database kept frames.fns as { uint32 id; uint64 ns; } records:
 * the upgrade rewrites them as varints (fns_blob.h) with the same figures,
 * and leaves an empty blob empty and a malformed one as it was. */
static void upgrades_version_2_frame_blobs(void **state)
{
    (void)state;
    sqlite3 *db = open_older("v2.db",
                             /* ids 7 and 300, 1,234 ns and 2^40 + 5 ns, little-endian */
                             "INSERT INTO frames VALUES(1,1,0,0,9,0,0,0,0,"
                             "x'07000000d2040000000000002c0100000500000000010000');"
                             "INSERT INTO frames VALUES(1,2,0,0,9,0,0,0,0,x'');"
                             "INSERT INTO frames VALUES(1,3,0,0,9,0,0,0,0,x'0102030405');"
                             "ALTER TABLE stats DROP COLUMN unfinished;"
                             "PRAGMA user_version=2");
    sqlite3_stmt *st = first_upgraded_row(db, "fns FROM frames ORDER BY seq");
    const unsigned char *b = sqlite3_column_blob(st, 1);
    size_t len = (size_t)sqlite3_column_bytes(st, 1), at = 0;
    uint32_t fn = 0;
    uint64_t ns = 0;
    assert_int_equal(piano_fns_get(b, len, &at, &fn, &ns), 0);
    assert_int_equal(fn, 7);
    assert_int_equal(ns, 1234);
    assert_int_equal(piano_fns_get(b, len, &at, &fn, &ns), 0);
    assert_int_equal(fn, 300);
    assert_int_equal(ns, (1ull << 40) + 5);
    assert_int_equal(at, len);
    assert_int_equal(len, 1 + 2 + 2 + 6);   /* 7; 1234; 300; 2^40+5: varint lengths */
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_bytes(st, 1), 0);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_bytes(st, 1), 5);
    assert_memory_equal(sqlite3_column_blob(st, 1), "\x01\x02\x03\x04\x05", 5);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-3 database had no stats.unfinished (calls in flight at the end
 * were not counted as calls): the upgrade adds it, 0 for the runs it holds. */
static void upgrades_version_3(void **state)
{
    (void)state;
    sqlite3 *db = open_older("v3.db", "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,"
                                      "frees,free_bytes) VALUES(1,0,1,5,1,1,0,0,0,0);"
                                      "ALTER TABLE stats DROP COLUMN unfinished;"
                                      "PRAGMA user_version=3");
    sqlite3_stmt *st = first_upgraded_row(db, "calls, unfinished FROM stats");
    assert_int_equal(sqlite3_column_int(st, 1), 5);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-4 database kept every frame and counted them with count(*): the
 * upgrade stores the counts once (every frame was kept, or dropped), per run
 * and per thread, and leaves the frame histograms NULL (not known). */
static void upgrades_version_4(void **state)
{
    (void)state;
    sqlite3 *db = open_older("v4.db", "INSERT INTO threads(run,thread,tid,name) VALUES(1,0,10,''),(1,1,11,''),(1,2,12,'');"
                                      "INSERT INTO frames VALUES(1,1,0,0,9,0,0,0,0,x''),(1,2,1,0,9,0,0,0,0,x''),"
                                      "(1,3,0,0,9,0,0,0,0,x'');"
                                      "UPDATE runs SET frames_dropped = 4;"
                                      "PRAGMA user_version=4");
    sqlite3_stmt *st = first_upgraded_row(db, "frames, frames_kept, frame_hist IS NULL, spikes_unkept, "
                                              "(SELECT group_concat(frames) FROM threads ORDER BY thread), "
                                              "(SELECT sum(spike) FROM frames) FROM runs");
    assert_int_equal(sqlite3_column_int(st, 1), 3 + 4);
    assert_int_equal(sqlite3_column_int(st, 2), 3);
    assert_int_equal(sqlite3_column_int(st, 3), 1);
    assert_int_equal(sqlite3_column_int(st, 4), 0);
    assert_string_equal((const char *)sqlite3_column_text(st, 5), "2,1,0");
    assert_int_equal(sqlite3_column_int(st, 6), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-5 database (before runs.allocator) gets the column, NULL for
 * the runs stored before. */
static void upgrades_version_5(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v5.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10 UNDO_9 UNDO_8 UNDO_7 UNDO_6, "PRAGMA user_version=5");
    sqlite3_stmt *st = first_upgraded_row(db, "count(*), count(allocator) FROM runs");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-6 database (before the push queue) gets an empty pushes table
 * that takes a row; its runs are kept. */
static void upgrades_version_6(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v6.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10 UNDO_9 UNDO_8 UNDO_7, "PRAGMA user_version=6");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT count(*) FROM runs), count(*) FROM pushes");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, "INSERT INTO pushes(url,run,query,profile,kind) "
                                      "VALUES('http://127.0.0.1:1',1,'name=a',x'00','wall')", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

/* A version-7 database (functions a table, a name per run) gets names stored
 * once: two runs of one function share its name; the view reads as the table
 * did, and takes inserts. */
static void upgrades_version_7(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v7.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10 UNDO_9 UNDO_8,
                              "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,ns_per_tick) "
                              "VALUES('k2',2,'c',0,0,'complete','tsc',1);"
                              "INSERT INTO functions VALUES(1,2,'main','a.c',3),(1,3,'work','a.c',9),"
                              "(2,2,'main','a.c',3);"
                              "PRAGMA user_version=7");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT count(*) FROM names), "
                                              "(SELECT group_concat(run || ':' || id || ':' || name || ':' || line) "
                                              "FROM (SELECT * FROM functions ORDER BY run, id))");
    assert_int_equal(sqlite3_column_int(st, 1), 2);
    assert_string_equal((const char *)sqlite3_column_text(st, 2), "1:2:main:3,1:3:work:9,2:2:main:3");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, "INSERT OR IGNORE INTO functions VALUES(2,3,'work','a.c',9),(2,2,'main','a.c',3)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    st = first_upgraded_row(db, "(SELECT count(*) FROM names), (SELECT count(*) FROM functions)");
    assert_int_equal(sqlite3_column_int(st, 1), 2);
    assert_int_equal(sqlite3_column_int(st, 2), 4);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-8 database (before CPU time) gets the CPU columns, NULL in the
 * rows stored before (not measured, not 0), and takes rows with them. */
static void upgrades_version_8(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v8.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10 UNDO_9,
                              "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,"
                              "free_bytes) VALUES(1,0,2,1,10,10,0,0,0,0);"
                              "INSERT INTO contexts(run,thread,id,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,"
                              "free_bytes) VALUES(1,0,1,2,1,10,10,0,0,0,0);"
                              "PRAGMA user_version=8");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT cpu_mode IS NULL FROM runs), "
                                              "(SELECT cpu_ns IS NULL AND offcpu_ns IS NULL FROM stats), "
                                              "(SELECT cpu_total_ns IS NULL AND cpu_sys_ns IS NULL FROM contexts)");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 1);
    assert_int_equal(sqlite3_column_int(st, 3), 1);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE runs SET cpu_mode='perf';"
                                  "INSERT INTO frames(run,seq,thread,start_ns,total_ns,allocs,alloc_bytes,frees,"
                                  "free_bytes,fns,cpu_ns) VALUES(1,1,0,0,10,0,0,0,0,x'',7);"
                                  "UPDATE stats SET cpu_ns=4,cpu_total_ns=4,cpu_user_ns=3,cpu_sys_ns=1,offcpu_ns=6",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    st = first_upgraded_row(db, "(SELECT cpu_ns FROM frames), (SELECT cpu_user_ns + cpu_sys_ns FROM stats)");
    assert_int_equal(sqlite3_column_int(st, 1), 7);
    assert_int_equal(sqlite3_column_int(st, 2), 4);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-9 database (before snapshots) gets the two tables, empty, that
 * take rows and go with their run; its runs are kept. */
static void upgrades_version_9(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v9.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10, "PRAGMA user_version=9");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT count(*) FROM runs), (SELECT count(*) FROM snapshots)");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys=ON; INSERT INTO snapshot_times VALUES(1, 5);"
                                      "INSERT INTO snapshots VALUES(1, 2, 5, 3, 40, 1, 0, 0, NULL, NULL, NULL);"
                                      "DELETE FROM runs WHERE id = 1", NULL, NULL, NULL),
                     SQLITE_OK);
    st = first_upgraded_row(db, "(SELECT count(*) FROM snapshot_times), (SELECT count(*) FROM snapshots)");
    assert_int_equal(sqlite3_column_int(st, 1), 0);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-10 database (before heap in use) gets the columns, NULL (not
 * tracked) for the runs and rows stored before; new rows take figures. */
/* A version-11 database (before spans) gets the spans table, its runs kept. */
static void upgrades_version_11(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v11.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12, "PRAGMA user_version=11");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT count(*) FROM runs), (SELECT count(*) FROM spans)");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO spans(run,name,fn,count,unfinished,wall_ns,busy_ns) "
                                  "VALUES(1,'request{method=GET}',3,2,1,100,40)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    st = first_upgraded_row(db, "(SELECT count FROM spans), (SELECT wall_ns - busy_ns FROM spans)");
    assert_int_equal(sqlite3_column_int(st, 1), 2);
    assert_int_equal(sqlite3_column_int(st, 2), 60);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void upgrades_version_10(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v10.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13 UNDO_12 UNDO_11,
                              "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,"
                              "free_bytes) VALUES(1,0,2,1,1,1,3,300,1,100);"
                              "PRAGMA user_version=10");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT heap_peak_bytes IS NULL FROM runs WHERE id = 1), "
                                              "(SELECT inuse_objects IS NULL AND inuse_bytes IS NULL AND "
                                              "peak_inuse_bytes IS NULL FROM stats WHERE run = 1)");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 1);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE runs SET heap_peak_bytes = 4096;"
                                  "INSERT INTO contexts(run,thread,id,parent,fn,calls,self_ns,total_ns,allocs,"
                                  "alloc_bytes,frees,free_bytes,inuse_objects,inuse_bytes,peak_inuse_bytes) "
                                  "VALUES(1,0,1,NULL,2,1,1,1,3,300,1,100,2,200,300)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    st = first_upgraded_row(db, "(SELECT heap_peak_bytes FROM runs), (SELECT inuse_bytes FROM contexts)");
    assert_int_equal(sqlite3_column_int(st, 1), 4096);
    assert_int_equal(sqlite3_column_int(st, 2), 200);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-12 database (before the run-time selection) gets runs.selection,
 * NULL (unset) for the runs stored before. */
static void upgrades_version_12(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v12.db", UNDO_18 UNDO_17 UNDO_14 UNDO_13, "PRAGMA user_version=12");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT selection IS NULL FROM runs WHERE id = 1)");
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, "UPDATE runs SET selection = 'parse'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* A version-13 database (before spans in snapshots) gets span_snapshots,
 * empty, with the columns of PIANO_SPAN_FIGURES. */
static void upgrades_version_13(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v13.db", UNDO_18 UNDO_17 UNDO_14, "PRAGMA user_version=13");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT count(*) FROM span_snapshots)");
    assert_int_equal(sqlite3_column_int(st, 1), 0);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO span_snapshots(run, name, t_ns" PIANO_SPAN_FIGURE_COLS
                                  ") VALUES(1, 'req', 1000, 1, 0, 2000, 500)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}


/* Every context of the database, as text (the view contexts, or the table of
 * schema 16), in order. */
static char *all_contexts(sqlite3 *db)
{
    static char out[8192];
    size_t k = 0;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT * FROM contexts ORDER BY run, thread, id", -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const unsigned char *t = sqlite3_column_text(st, c);
            k += (size_t)snprintf(out + k, sizeof out - k, "%s%s", c ? "|" : "", t ? (const char *)t : "NULL");
        }
        k += (size_t)snprintf(out + k, sizeof out - k, "\n");
    }
    sqlite3_finalize(st);
    return out;
}

/* Rows of schema 16's contexts table, one thread per case: CPU time and no
 * heap, heap and no CPU time, the largest figures, a value a blob cannot hold
 * (negative), CPU time NULL in one row only. */
#define V16_CONTEXTS                                                                                               \
    "INSERT INTO contexts(run,thread,id,parent,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,free_bytes,"      \
    "cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,inuse_bytes,peak_inuse_bytes) VALUES"      \
    "(1,0,1,NULL,2,1,500,900,0,0,0,0,400,800,700,100,100,NULL,NULL,NULL),"                                         \
    "(1,0,2,1,3,4,400,400,2,64,0,0,300,300,300,0,100,NULL,NULL,NULL),"                                             \
    "(1,0,70000,NULL,3,1,5,5,0,0,0,0,0,0,0,0,5,NULL,NULL,NULL),"                                                   \
    "(1,1,1,NULL,2,3,30,30,1,16,1,16,NULL,NULL,NULL,NULL,NULL,0,0,48),"                                             \
    "(1,1,5,1,2,0,0,0,0,0,0,0,NULL,NULL,NULL,NULL,NULL,0,0,0),"                                                     \
    "(1,2,1,NULL,2,9223372036854775807,9223372036854775807,9223372036854775807,0,0,0,0,NULL,NULL,NULL,NULL,NULL,"   \
    "NULL,NULL,NULL),"                                                                                              \
    "(1,3,1,NULL,2,1,-5,1,0,0,0,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL),"                                        \
    "(1,4,1,NULL,2,1,1,1,0,0,0,0,1,1,1,0,0,NULL,NULL,NULL),"                                                        \
    "(1,4,2,1,2,1,1,1,0,0,0,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);"

/* A version-16 database (contexts as rows) has its rows packed into one blob
 * per thread (context_trees), those a blob cannot hold as they are kept as
 * rows; the view contexts (piano_contexts: piano-db's) reads all of them as
 * the table did, and takes inserts, updates and deletes. */
static void upgrades_version_16_contexts(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/v16.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1);" UNDO_18 UNDO_17 V16_CONTEXTS
                                  "PRAGMA user_version=16",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    char before[8192];
    snprintf(before, sizeof before, "%s", all_contexts(db));
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(count_of(db, "SELECT user_version FROM pragma_user_version"), PIANO_SCHEMA_VERSION);
    assert_int_equal(count_of(db, "SELECT count(*) FROM context_trees"), 3);   /* threads 0, 1, 2 */
    assert_int_equal(count_of(db, "SELECT count(*) FROM context_rows"), 3);    /* threads 3, 4 */
    with_views(db);
    assert_string_equal(all_contexts(db), before);
    /* thread 0's blob (v2): its header, then 2 bytes for the head (c: a root,
     * then the child of the previous context) and fn, and 12 figures up to
     * offcpu_ns, 17 and 16 bytes (total 900 as +400 from self, 2 bytes; total
     * 400 as +0, 1 byte); the root at 70000: 6 (head, id step of 3 bytes, up,
     * fn) and 12 */
    assert_int_equal(count_of(db, "SELECT length(nodes) FROM context_trees WHERE thread = 0"), 1 + 19 + 18 + 18);
    /* an update moves thread 0's tree to rows; a delete, thread 1's */
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE contexts SET calls = 7 WHERE run = 1 AND thread = 0 AND id = 2;"
                                  "DELETE FROM contexts WHERE run = 1 AND thread = 1 AND id = 5;"
                                  "INSERT INTO contexts(run,thread,id,fn,calls,self_ns,total_ns) VALUES(1,9,1,2,1,2,3)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT count(*) FROM context_trees"), 1);
    assert_int_equal(count_of(db, "SELECT calls FROM contexts WHERE thread = 0 AND id = 2"), 7);
    assert_int_equal(count_of(db, "SELECT count(*) FROM contexts WHERE thread = 1"), 1);
    assert_int_equal(count_of(db, "SELECT count(*) FROM contexts WHERE thread = 9 AND allocs = 0"), 1);
    assert_int_equal(count_of(db, "SELECT count(*) FROM contexts"), 9);
    sqlite3_close(db);
}

/* A blob's contexts read back as written; every truncation of it and a
 * damaged header are refused, never read past. */
static void contexts_blob_round_trip(void **state)
{
    (void)state;
    piano_ctx_writer w = {0};
    piano_ctx_begin(&w, PIANO_CTX_CPU);
    int64_t v[PIANO_M_N] = {0};
    v[PIANO_M_calls] = 3, v[PIANO_M_self_ns] = INT64_MAX, v[PIANO_M_cpu_ns] = 5;
    piano_ctx_put(&w, 1, -1, 2, v);
    size_t first = w.len;
    memset(v, 0, sizeof v);
    v[PIANO_M_total_ns] = INT64_MAX;
    piano_ctx_put(&w, 65536 + 7, 1, 7, v);
    assert_false(w.failed);
    piano_ctx_reader r = {0};
    piano_ctx_row row;
    assert_int_equal(piano_ctx_open(&r, w.buf, w.len), 0);
    assert_int_equal(piano_ctx_next(&r, &row), 1);
    assert_true(row.id == 1 && row.parent == -1 && row.fn == 2 && row.v[PIANO_M_calls] == 3);
    assert_true(row.v[PIANO_M_self_ns] == INT64_MAX && row.v[PIANO_M_cpu_ns] == 5 && !row.null[PIANO_M_cpu_ns]);
    assert_true(row.v[PIANO_M_total_ns] == 0);   /* (less than self: a negative difference) */
    assert_true(row.null[PIANO_M_inuse_bytes] && !row.null[PIANO_M_allocs]);
    assert_int_equal(piano_ctx_next(&r, &row), 1);
    assert_true(row.id == 65543 && row.parent == 1 && row.fn == 7 && row.v[PIANO_M_calls] == 0);
    assert_true(row.v[PIANO_M_total_ns] == INT64_MAX && row.v[PIANO_M_self_ns] == 0);
    assert_int_equal(piano_ctx_next(&r, &row), 0);
    for (size_t cut = 2; cut < w.len; cut++) {   /* every truncation within a context */
        assert_int_equal(piano_ctx_open(&r, w.buf, cut), 0);
        int rc;
        while ((rc = piano_ctx_next(&r, &row)) == 1)
            ;
        assert_true(rc == -1 || cut == first);   /* (the first context ends there) */
    }
    assert_int_equal(piano_ctx_open(&r, w.buf, 0), -1);
    piano_ctx_close(&r);
    piano_ctx_writer_free(&w);
}

/* Schema 21's heads (v2): a context whose parent is in the ancestry of the
 * previous one and whose id follows it takes one byte for both (c); others
 * (a parent elsewhere, ids apart, one not in the blob) say them. Every tree
 * reads back; a blob of schemas 17-20 (v1) still reads. */
static void contexts_blob_ancestry(void **state)
{
    (void)state;
    /* id: parent. 1 root; 2, 3 down; 4 sibling of 3; 5 under 1; 6 a root;
     * 7 under 2 (not in 6's ancestry); 9 under 7 (ids apart); 10 under 4
     * (elsewhere); 11 under 8 (not in the blob); 12 under 11; 13 a root */
    static const int64_t tree[][2] = {{1, -1}, {2, 1}, {3, 2}, {4, 2}, {5, 1}, {6, -1}, {7, 2},
                                      {9, 7},  {10, 4}, {11, 8}, {12, 11}, {13, -1}};
    enum { N = sizeof tree / sizeof *tree };
    piano_ctx_writer w = {0};
    piano_ctx_begin(&w, 0);
    int64_t v[PIANO_M_N] = {0};
    size_t sizes[N];
    for (int i = 0; i < N; i++) {
        size_t before = w.len;
        v[PIANO_M_calls] = i + 1;
        piano_ctx_put(&w, tree[i][0], tree[i][1], i, v);
        sizes[i] = w.len - before;
    }
    assert_false(w.failed);
    assert_int_equal(w.buf[0] & PIANO_CTX_V2, PIANO_CTX_V2);
    /* head + fn + calls: 3 bytes where the ancestry says the parent */
    static const size_t want[N] = {3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 3, 3};
    for (int i = 0; i < N; i++)
        assert_int_equal(sizes[i], want[i]);
    piano_ctx_reader r = {0};
    piano_ctx_row row;
    for (int pass = 0; pass < 2; pass++) {   /* (a reader used again) */
        assert_int_equal(piano_ctx_open(&r, w.buf, w.len), 0);
        for (int i = 0; i < N; i++) {
            assert_int_equal(piano_ctx_next(&r, &row), 1);
            assert_true(row.id == tree[i][0] && row.parent == tree[i][1] && row.fn == i && row.v[PIANO_M_calls] == i + 1);
        }
        assert_int_equal(piano_ctx_next(&r, &row), 0);
    }
    /* a head whose c goes past the root is refused */
    const unsigned char deep[] = {PIANO_CTX_V2 | 1 << 2, 1 << 5 | 1, 0, 1, 3 << 5 | 1, 0, 1};
    assert_int_equal(piano_ctx_open(&r, deep, sizeof deep), 0);
    assert_int_equal(piano_ctx_next(&r, &row), 1);
    assert_int_equal(piano_ctx_next(&r, &row), -1);
    /* v1: id 1 a root, id 2 under it (step, up, fn, calls) */
    const unsigned char v1[] = {1 << 2, 0 << 5 | 1, 0, 7, 4, 0 << 5 | 1, 1, 8, 5};
    assert_int_equal(piano_ctx_open(&r, v1, sizeof v1), 0);
    assert_int_equal(piano_ctx_next(&r, &row), 1);
    assert_true(row.id == 1 && row.parent == -1 && row.fn == 7 && row.v[PIANO_M_calls] == 4);
    assert_int_equal(piano_ctx_next(&r, &row), 1);
    assert_true(row.id == 2 && row.parent == 1 && row.fn == 8 && row.v[PIANO_M_calls] == 5);
    assert_int_equal(piano_ctx_next(&r, &row), 0);
    piano_ctx_close(&r);
    piano_ctx_writer_free(&w);
}

/* Every function's stats (the view stats, or the table of schema 17), as
 * text with the histograms in hex, in order. */
static char *all_stats(sqlite3 *db)
{
    static char out[65536];
    size_t k = 0;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT * FROM stats ORDER BY run, thread, fn", -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            k += (size_t)snprintf(out + k, sizeof out - k, "%s%s=", c ? "|" : "", sqlite3_column_name(st, c));
            if (sqlite3_column_type(st, c) == SQLITE_BLOB) {
                const unsigned char *b = sqlite3_column_blob(st, c);
                k += (size_t)snprintf(out + k, sizeof out - k, "x'");
                for (int i = 0; i < sqlite3_column_bytes(st, c); i++)
                    k += (size_t)snprintf(out + k, sizeof out - k, "%02x", b[i]);
                k += (size_t)snprintf(out + k, sizeof out - k, "'");
            } else {
                const unsigned char *t = sqlite3_column_text(st, c);
                k += (size_t)snprintf(out + k, sizeof out - k, "%s", t ? (const char *)t : "NULL");
            }
        }
        k += (size_t)snprintf(out + k, sizeof out - k, "\n");
    }
    sqlite3_finalize(st);
    assert_true(k < sizeof out);
    return out;
}

/* Rows of schema 17's stats table: CPU time and no heap, heap and no CPU
 * time, the largest figures, NULL and empty histograms, equal histograms. */
#define V17_STATS                                                                                                  \
    "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,free_bytes,hist_self,"        \
    "hist_total,child_calls,unfinished,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,"        \
    "inuse_bytes,peak_inuse_bytes) VALUES"                                                                         \
    "(1,0,1,3,500,900,0,0,0,0,x'0501',x'0602',2,0,400,800,700,100,100,NULL,NULL,NULL),"                           \
    "(1,0,7,4,400,400,2,64,0,0,x'0a04',x'0a04',0,1,300,300,300,0,100,NULL,NULL,NULL),"                            \
    "(1,1,2,3,30,30,1,16,1,16,NULL,NULL,0,0,NULL,NULL,NULL,NULL,NULL,0,0,48),"                                     \
    "(1,1,3,0,0,0,1,8,0,0,x'',x'',0,0,NULL,NULL,NULL,NULL,NULL,1,8,8),"                                            \
    "(1,2,1,9223372036854775807,9223372036854775807,9223372036854775807,0,0,0,0,x'01',NULL,0,0,NULL,NULL,NULL,"   \
    "NULL,NULL,NULL,NULL,NULL);"

/* A version-17 database (stats as rows) keeps its rows in stat_rows; the
 * view stats (piano_stats: piano-db's) reads them as the table did, and
 * takes inserts, updates and deletes. */
static void upgrades_version_17_stats(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/v17.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1);" UNDO_18 V17_STATS
                                  "PRAGMA user_version=17",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    char before[16384];
    snprintf(before, sizeof before, "%s", all_stats(db));
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(count_of(db, "SELECT user_version FROM pragma_user_version"), PIANO_SCHEMA_VERSION);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_rows"), 5);
    with_views(db);
    assert_string_equal(all_stats(db), before);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE stats SET calls = 7 WHERE run = 1 AND thread = 0 AND fn = 7;"
                                  "DELETE FROM stats WHERE run = 1 AND thread = 1 AND fn = 3;"
                                  "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns) VALUES(1,9,1,2,1,2)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT calls FROM stats WHERE thread = 0 AND fn = 7"), 7);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stats WHERE thread = 9 AND allocs = 0 AND child_calls = 0"),
                     1);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stats"), 5);
    sqlite3_close(db);
}

/* A version-18 database: its stats blobs (no v2 flag in their header) hold
 * v1 histograms, which the upgrade to 20 leaves as they are and piano_stats
 * reads back as they were; a blob written since holds v2 ones. The
 * blob, as schema 18's import wrote it: header nf 17 << 2, CPU measured; fn 3
 * (step 3 << 5, k 2): calls 3, self 500; hist_self x'0501' (bucket 4 x 1,
 * length + 1), hist_total x'0602' (length + 2); fn 4 (k 1): calls 1,
 * hist_total equal to hist_self x'0a04' (1). */
static void upgrades_version_18_histograms(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/v18_hist.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1);"
                                  "INSERT INTO stat_trees(run, thread, fns) VALUES"
                                  "(1, 0, x'456203f4030305010406020101030a0401');"
                                  "PRAGMA user_version=18",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(count_of(db, "SELECT user_version FROM pragma_user_version"), PIANO_SCHEMA_VERSION);
    static const char *want = "run=1|thread=0|fn=3|calls=3|self_ns=500|total_ns=500|allocs=0|alloc_bytes=0|"
                              "frees=0|free_bytes=0|hist_self=x'0501'|hist_total=x'0602'|child_calls=0|"
                              "unfinished=0|cpu_ns=0|cpu_total_ns=0|cpu_user_ns=0|cpu_sys_ns=0|offcpu_ns=0|"
                              "inuse_objects=NULL|inuse_bytes=NULL|peak_inuse_bytes=NULL\n"
                              "run=1|thread=0|fn=4|calls=1|self_ns=0|total_ns=0|allocs=0|alloc_bytes=0|"
                              "frees=0|free_bytes=0|hist_self=x'0a04'|hist_total=x'0a04'|child_calls=0|"
                              "unfinished=0|cpu_ns=0|cpu_total_ns=0|cpu_user_ns=0|cpu_sys_ns=0|offcpu_ns=0|"
                              "inuse_objects=NULL|inuse_bytes=NULL|peak_inuse_bytes=NULL\n";
    with_views(db);
    assert_string_equal(all_stats(db), want);   /* piano_stats */
    /* a thread written now: v2 histograms, read back as whole v2 blobs */
    piano_stats_writer w = {0};
    piano_stats_begin(&w, PIANO_STATS_CPU);
    int64_t v[PIANO_STATS_NV] = {0};
    v[PIANO_M_calls] = 3, v[PIANO_M_self_ns] = 500;
    piano_stats_put(&w, 3, v, "\x05\x01", 2, "\x06\x02", 2);
    v[PIANO_M_calls] = 1, v[PIANO_M_self_ns] = 0;
    piano_stats_put(&w, 4, v, "\x0a\x04", 2, "\x0a\x04", 2);
    assert_false(w.failed);
    assert_int_equal(w.buf[0], 0x80 | PIANO_STATS_V3_NF << 2 | PIANO_STATS_CPU);
    assert_int_equal(w.buf[1], 17);
    sqlite3_stmt *ins;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO stat_trees(run, thread, fns) VALUES(1, 1, ?1)", -1, &ins,
                                        NULL),
                     SQLITE_OK);
    sqlite3_bind_blob(ins, 1, w.buf, (int)w.len, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_finalize(ins);
    free(w.buf);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stats WHERE thread = 1 AND hist_self = x'0015' AND "
                                  "hist_total = x'001a' AND fn = 3"),
                     1);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stats WHERE thread = 1 AND hist_self = x'002804' AND "
                                  "hist_total = x'002804' AND fn = 4"),
                     1);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stats WHERE thread = 0 AND hist_self = x'0501'"), 1);
    sqlite3_close(db);
}

/* V17_STATS with its histograms in the compact v2 format (spool/hist.h) the
 * import writes since schema 20: the same buckets (x'01', a cut blob, as
 * bucket 0 x 1), so that rows and blobs read the same bytes. */
#define V20_STATS                                                                                                  \
    "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,free_bytes,hist_self,"        \
    "hist_total,child_calls,unfinished,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,"        \
    "inuse_bytes,peak_inuse_bytes) VALUES"                                                                         \
    "(1,0,1,3,500,900,0,0,0,0,x'0015',x'001a',2,0,400,800,700,100,100,NULL,NULL,NULL),"                           \
    "(1,0,7,4,400,400,2,64,0,0,x'002804',x'002804',0,1,300,300,300,0,100,NULL,NULL,NULL),"                        \
    "(1,1,2,3,30,30,1,16,1,16,NULL,NULL,0,0,NULL,NULL,NULL,NULL,NULL,0,0,48),"                                     \
    "(1,1,3,0,0,0,1,8,0,0,x'',x'',0,0,NULL,NULL,NULL,NULL,NULL,1,8,8),"                                            \
    "(1,2,1,9223372036854775807,9223372036854775807,9223372036854775807,0,0,0,0,x'0005',NULL,0,0,NULL,NULL,NULL,"  \
    "NULL,NULL,NULL,NULL,NULL);"

/* Schema 18's stats blob writer (before v2 histograms): the histograms'
 * bytes as they are, no 0x80 in the header. For databases made as that
 * schema's import made them. */
static void v18_stats_put(piano_stats_writer *w, int64_t fn, const int64_t v[PIANO_STATS_NV], const void *hs,
                          size_t hs_len, const void *ht, size_t ht_len)
{
    static const int f18[] = {PIANO_M_calls, PIANO_M_self_ns, PIANO_M_total_ns, PIANO_M_allocs,
                              PIANO_M_alloc_bytes, PIANO_M_frees, PIANO_M_free_bytes, PIANO_STATS_CHILD,
                              PIANO_M_unfinished, PIANO_M_cpu_ns, PIANO_M_cpu_total_ns, PIANO_M_cpu_user_ns,
                              PIANO_M_cpu_sys_ns, PIANO_M_offcpu_ns, PIANO_M_inuse_objects, PIANO_M_inuse_bytes,
                              PIANO_M_peak_inuse_bytes};
    enum { NF18 = sizeof f18 / sizeof *f18 };
    size_t need = w->len + (3 + NF18) * 10 + hs_len + ht_len;
    if (need > w->cap) {
        w->cap = need * 2;
        w->buf = realloc(w->buf, w->cap);
    }
    if (w->len == 2) {   /* (begun by piano_stats_begin: a v3 header) */
        w->buf[0] = (unsigned char)((w->buf[0] & 3) | w->buf[1] << 2);
        w->len = 1;
    }
    int64_t f[NF18];
    for (int i = 0; i < NF18; i++)
        f[i] = v[f18[i]] > 0 ? v[f18[i]] : 0;
    uint64_t d = (uint64_t)f[2] - (uint64_t)f[1];
    f[2] = (int64_t)(f[2] >= f[1] ? d << 1 : ((uint64_t)(f[1] - f[2]) << 1) - 1);
    int k = NF18;
    while (k > 0 && f[k - 1] == 0)
        k--;
    w->len += piano_varint_put(w->buf + w->len, (uint64_t)(fn - w->last_fn - 1) << 5 | (uint64_t)k);
    for (int i = 0; i < k; i++)
        w->len += piano_varint_put(w->buf + w->len, (uint64_t)f[i]);
    w->len += piano_varint_put(w->buf + w->len, hs ? hs_len + 1 : 0);
    if (hs && hs_len)
        memcpy(w->buf + w->len, hs, hs_len), w->len += hs_len;
    if (ht && hs && ht_len == hs_len && memcmp(ht, hs, ht_len) == 0) {
        w->len += piano_varint_put(w->buf + w->len, 1);
    } else {
        w->len += piano_varint_put(w->buf + w->len, ht ? ht_len + 2 : 0);
        if (ht && ht_len)
            memcpy(w->buf + w->len, ht, ht_len), w->len += ht_len;
    }
    w->last_fn = fn;
}

/* V17_STATS with its histograms in the compact v2 format (spool/hist.h) the
 * import writes since schema 20: the same buckets (x'01', a cut blob, as
 * bucket 0 x 1), so that rows and blobs read the same bytes. */
#define V20_STATS                                                                                                  \
    "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,free_bytes,hist_self,"        \
    "hist_total,child_calls,unfinished,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,"        \
    "inuse_bytes,peak_inuse_bytes) VALUES"                                                                         \
    "(1,0,1,3,500,900,0,0,0,0,x'0015',x'001a',2,0,400,800,700,100,100,NULL,NULL,NULL),"                           \
    "(1,0,7,4,400,400,2,64,0,0,x'002804',x'002804',0,1,300,300,300,0,100,NULL,NULL,NULL),"                        \
    "(1,1,2,3,30,30,1,16,1,16,NULL,NULL,0,0,NULL,NULL,NULL,NULL,NULL,0,0,48),"                                     \
    "(1,1,3,0,0,0,1,8,0,0,x'',x'',0,0,NULL,NULL,NULL,NULL,NULL,1,8,8),"                                            \
    "(1,2,1,9223372036854775807,9223372036854775807,9223372036854775807,0,0,0,0,x'0005',NULL,0,0,NULL,NULL,NULL,"  \
    "NULL,NULL,NULL,NULL,NULL);"

/* Moves the rows of stat_rows into blobs, a thread each, as the import
 * writes them (thread 0 measured CPU time, thread 1 heap in use); v18: as
 * schema 18's did (v1 histograms as they are: v18_stats_put). */
/* Rewrites the contexts blobs of db in the format of schemas 17-20 (v1: no
 * ancestry heads, fn as it is), as those schemas' databases hold them. */
static void contexts_blobs_to_v1(sqlite3 *db)
{
    static const int fields[] = {PIANO_CTX_FIELDS};
    const int nf = (int)(sizeof fields / sizeof *fields);
    sqlite3_stmt *st, *up;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT rowid, nodes FROM context_trees", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "UPDATE context_trees SET nodes = ?2 WHERE rowid = ?1", -1, &up, NULL),
                     SQLITE_OK);
    piano_ctx_reader r = {0};
    piano_ctx_row row;
    unsigned char out[4096];
    while (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *b = sqlite3_column_blob(st, 1);
        assert_int_equal(piano_ctx_open(&r, b, (size_t)sqlite3_column_bytes(st, 1)), 0);
        size_t n = 0;
        out[n++] = b[0] & 0x7f;
        int64_t last = 0;
        int rc;
        while ((rc = piano_ctx_next(&r, &row)) == 1) {
            uint64_t f[32] = {0};
            for (int i = 0; i < nf; i++)
                f[i] = (uint64_t)row.v[fields[i]];
            f[2] = f[2] >= f[1] ? (f[2] - f[1]) << 1 : ((f[1] - f[2]) << 1) - 1;
            int k = nf;
            while (k > 0 && f[k - 1] == 0)
                k--;
            n += piano_varint_put(out + n, (uint64_t)(row.id - last - 1) << 5 | (uint64_t)k);
            n += piano_varint_put(out + n, row.parent < 0 ? 0 : (uint64_t)(row.id - row.parent));
            n += piano_varint_put(out + n, (uint64_t)row.fn);
            for (int i = 0; i < k; i++)
                n += piano_varint_put(out + n, f[i]);
            last = row.id;
            assert_true(n < sizeof out - 400);
        }
        assert_int_equal(rc, 0);
        sqlite3_bind_int64(up, 1, sqlite3_column_int64(st, 0));
        sqlite3_bind_blob(up, 2, out, (int)n, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(up), SQLITE_DONE);
        sqlite3_reset(up);
    }
    piano_ctx_close(&r);
    sqlite3_finalize(st);
    sqlite3_finalize(up);
}

static void stats_rows_to_blobs(sqlite3 *db, int v18)
{
    sqlite3_stmt *st, *ins;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees,"
                                            " free_bytes, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns,"
                                            " cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes,"
                                            " hist_self, hist_total FROM stat_rows ORDER BY thread, fn",
                                       -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO stat_trees(run, thread, fns) VALUES(1, ?1, ?2)", -1, &ins,
                                        NULL),
                     SQLITE_OK);
    static const int order[] = {PIANO_M_calls, PIANO_M_self_ns, PIANO_M_total_ns, PIANO_M_allocs,
                                PIANO_M_alloc_bytes, PIANO_M_frees, PIANO_M_free_bytes, PIANO_STATS_CHILD,
                                PIANO_M_unfinished, PIANO_M_cpu_ns, PIANO_M_cpu_total_ns, PIANO_M_cpu_user_ns,
                                PIANO_M_cpu_sys_ns, PIANO_M_offcpu_ns, PIANO_M_inuse_objects, PIANO_M_inuse_bytes,
                                PIANO_M_peak_inuse_bytes};
    piano_stats_writer w = {0};
    int thread = -1;
    for (;;) {
        int rc = sqlite3_step(st);
        int t = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -2;
        if (t != thread && thread >= 0) {
            sqlite3_bind_int(ins, 1, thread);
            sqlite3_bind_blob(ins, 2, w.buf, (int)w.len, SQLITE_STATIC);
            assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
            sqlite3_reset(ins);
        }
        if (rc != SQLITE_ROW)
            break;
        if (t != thread)   /* thread 0 measured CPU time, thread 1 heap in use */
            piano_stats_begin(&w, t == 0 ? PIANO_STATS_CPU : t == 1 ? PIANO_STATS_HEAP : 0);
        thread = t;
        int64_t v[PIANO_STATS_NV] = {0};
        for (size_t i = 0; i < sizeof order / sizeof *order; i++)
            v[order[i]] = sqlite3_column_int64(st, 2 + (int)i);
        const void *hs = sqlite3_column_blob(st, 19);
        size_t hs_len = (size_t)sqlite3_column_bytes(st, 19);
        if (sqlite3_column_type(st, 19) != SQLITE_NULL && !hs)
            hs = "";
        const void *ht = sqlite3_column_blob(st, 20);
        size_t ht_len = (size_t)sqlite3_column_bytes(st, 20);
        if (sqlite3_column_type(st, 20) != SQLITE_NULL && !ht)
            ht = "";
        /* (copies: the next column's read may move the previous one's bytes) */
        unsigned char a[16], b[16];
        memcpy(a, hs ? hs : "", hs_len);
        memcpy(b, ht ? ht : "", ht_len);
        (v18 ? v18_stats_put : piano_stats_put)(&w, sqlite3_column_int64(st, 1), v, hs ? a : NULL, hs_len,
                                               ht ? b : NULL, ht_len);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    assert_false(w.failed);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM stat_rows", NULL, NULL, NULL), SQLITE_OK);
    free(w.buf);
}

/* The rows of V20_STATS as the import writes them: a blob per thread
 * (stat_trees), read by piano_stats as the rows were; an update moves a
 * thread's blob to rows. */
static void stats_blobs_read_as_rows(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/blobs.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    with_views(db);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1);" V20_STATS,
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    char rows[16384];
    snprintf(rows, sizeof rows, "%s", all_stats(db));
    stats_rows_to_blobs(db, 0);
    /* thread 0's blob: its header (2 bytes: v3); fn 1: fn step and k, then
     * calls 3 (1 byte), self 500 (2), total 900 as +400 (2), child_calls 2,
     * 4 zeros and unfinished 0 (1 each), CPU 400, 800, 700 (2 each), 100, 100 (1 each),
     * hist_self and hist_total (1 + 1 each: a v2 blob's bucket without its
     * leading 0): 24; fn 7: its step of 6 and k in 2 bytes, 18 bytes of
     * figures (total as +0: 1), hist_self 1 + 2, and hist_total, equal to it,
     * 1: 24 */
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_trees"), 3);
    assert_int_equal(count_of(db, "SELECT length(fns) FROM stat_trees WHERE thread = 0"), 2 + 24 + 24);
    assert_string_equal(all_stats(db), rows);   /* piano_stats */
    assert_int_equal(sqlite3_exec(db, "UPDATE stats SET calls = 5 WHERE thread = 0 AND fn = 1", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_trees"), 2);
    assert_int_equal(count_of(db, "SELECT calls FROM stats WHERE thread = 0 AND fn = 1"), 5);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stats"), 5);
    sqlite3_close(db);
}

/* A version-18 database (the views contexts and stats in plain SQL in its
 * schema, with their triggers) loses them on the upgrade to 19, its figures
 * kept: read by piano-db's views (and, before, by the plain-SQL ones) the
 * same, blobs and rows. */
static void upgrades_version_18_views(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/v18.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    with_views(db);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1);" V17_STATS V16_CONTEXTS,
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    stats_rows_to_blobs(db, 1);   /* threads 0, 1, 2 in blobs (schema 18's); 5 (a negative count) as rows */
    assert_int_equal(sqlite3_exec(db, "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns) VALUES(1,5,1,-2,1,2)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(piano_contexts_pack(db), SQLITE_OK);   /* threads 0, 1, 2 in blobs; 3, 4 rows */
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_trees"), 3);
    assert_int_equal(count_of(db, "SELECT count(*) FROM context_trees"), 3);
    char stats[16384], contexts[8192];
    snprintf(stats, sizeof stats, "%s", all_stats(db));
    snprintf(contexts, sizeof contexts, "%s", all_contexts(db));
    sqlite3_close(db);
    /* schema 18: its views and triggers, as it stored them, its blobs v1 */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    contexts_blobs_to_v1(db);
    assert_int_equal(sqlite3_exec(db, SCHEMA18_VIEWS "PRAGMA user_version=18", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('stats', 'contexts')"), 2);
    assert_string_equal(all_stats(db), stats);   /* the plain-SQL views: the same */
    assert_string_equal(all_contexts(db), contexts);
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(count_of(db, "SELECT user_version FROM pragma_user_version"), PIANO_SCHEMA_VERSION);
    assert_int_equal(count_of(db, "SELECT count(*) FROM sqlite_master WHERE type IN ('view', 'trigger') AND"
                                  " name NOT IN ('functions', 'functions_insert')"),
                     0);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_trees"), 3);
    assert_int_equal(count_of(db, "SELECT count(*) FROM context_trees"), 3);
    with_views(db);
    assert_string_equal(all_stats(db), stats);
    assert_string_equal(all_contexts(db), contexts);
    sqlite3_close(db);
}

/* A blob's functions read back as written; every truncation of it and a
 * damaged header are refused, never read past. */
static void stats_blob_round_trip(void **state)
{
    (void)state;
    piano_stats_writer w = {0};
    piano_stats_begin(&w, PIANO_STATS_CPU);
    int64_t v[PIANO_STATS_NV] = {0};
    v[PIANO_M_calls] = 3, v[PIANO_M_self_ns] = INT64_MAX, v[PIANO_M_cpu_ns] = 5, v[PIANO_STATS_CHILD] = 9;
    piano_stats_put(&w, 1, v, "\x05\x01", 2, "\x06\x02", 2);
    size_t first = w.len;
    memset(v, 0, sizeof v);
    v[PIANO_M_total_ns] = INT64_MAX;
    piano_stats_put(&w, 65536 + 7, v, NULL, 0, NULL, 0);
    size_t second = w.len;
    piano_stats_put(&w, 65536 + 8, v, "\x01\x01", 2, "\x01\x01", 2);
    assert_false(w.failed);
    piano_stats_reader r;
    piano_stats_row row;
    assert_int_equal(piano_stats_open(&r, w.buf, w.len), 0);
    assert_int_equal(piano_stats_next(&r, &row), 1);
    assert_true(row.fn == 1 && row.v[PIANO_M_calls] == 3 && row.v[PIANO_STATS_CHILD] == 9);
    assert_true(row.v[PIANO_M_self_ns] == INT64_MAX && row.v[PIANO_M_cpu_ns] == 5 && !row.null[PIANO_M_cpu_ns]);
    assert_true(row.v[PIANO_M_total_ns] == 0);   /* (less than self: a negative difference) */
    assert_true(row.null[PIANO_M_inuse_bytes] && !row.null[PIANO_M_allocs]);
    /* v1 blobs in, their v2 buckets kept: bucket 4 x 1 (5 << 2 | 1), bucket 5 x 2 */
    assert_true(r.hist_v2);
    assert_true(row.hs_len == 1 && memcmp(row.hs, "\x15", 1) == 0);
    assert_true(row.ht_len == 1 && memcmp(row.ht, "\x1a", 1) == 0);
    assert_int_equal(piano_stats_next(&r, &row), 1);
    assert_true(row.fn == 65543 && row.v[PIANO_M_calls] == 0 && !row.hs && !row.ht);
    assert_true(row.v[PIANO_M_total_ns] == INT64_MAX && row.v[PIANO_M_self_ns] == 0);
    assert_int_equal(piano_stats_next(&r, &row), 1);
    assert_true(row.fn == 65544 && row.hs && row.ht == row.hs && row.ht_len == 1);
    assert_int_equal(piano_stats_next(&r, &row), 0);
    for (size_t cut = 3; cut < w.len; cut++) {   /* every truncation within a function (after the header) */
        assert_int_equal(piano_stats_open(&r, w.buf, cut), 0);
        int rc;
        while ((rc = piano_stats_next(&r, &row)) == 1)
            ;
        assert_true(rc == -1 || cut == first || cut == second);   /* (where functions end) */
    }
    assert_int_equal(piano_stats_open(&r, w.buf, 0), -1);
    /* a malformed histogram fails the blob */
    piano_stats_put(&w, 65536 + 9, v, "\x01", 1, NULL, 0);
    assert_true(w.failed);
    /* v3 (schema 22): child_calls fourth, so a function that calls others
     * and allocates nothing ends there: head, calls, self, total, child,
     * then its two histograms' lengths */
    piano_stats_begin(&w, 0);
    assert_int_equal(w.buf[1], 17);
    memset(v, 0, sizeof v);
    v[PIANO_M_calls] = 2, v[PIANO_M_self_ns] = 5, v[PIANO_M_total_ns] = 6, v[PIANO_STATS_CHILD] = 7;
    piano_stats_put(&w, 0, v, NULL, 0, NULL, 0);
    static const unsigned char want3[] = {0x80 | 31 << 2, 17, 4, 2, 5, 2, 7, 0, 0};
    assert_int_equal(w.len, sizeof want3);
    assert_memory_equal(w.buf, want3, sizeof want3);
    /* the header's nf in v3 is below 31 */
    unsigned char bad[sizeof want3];
    memcpy(bad, want3, sizeof bad);
    bad[1] = 31;
    assert_int_equal(piano_stats_open(&r, bad, sizeof bad), -1);
    assert_int_equal(piano_stats_open(&r, want3, 1), -1);
    /* schema 20-21's order (one header byte, child_calls eighth) still reads:
     * the same function */
    static const unsigned char v21[] = {0x80 | 17 << 2, 8, 2, 5, 2, 0, 0, 0, 0, 7, 0, 0};
    for (int b = 0; b < 2; b++) {
        assert_int_equal(b ? piano_stats_open(&r, v21, sizeof v21) : piano_stats_open(&r, want3, sizeof want3), 0);
        assert_int_equal(piano_stats_next(&r, &row), 1);
        assert_true(row.fn == 0 && row.v[PIANO_M_calls] == 2 && row.v[PIANO_M_self_ns] == 5);
        assert_true(row.v[PIANO_M_total_ns] == 6 && row.v[PIANO_STATS_CHILD] == 7 && row.v[PIANO_M_allocs] == 0);
        assert_true(!row.null[PIANO_M_allocs] && row.null[PIANO_M_cpu_ns] && !row.hs && !row.ht);
        assert_int_equal(piano_stats_next(&r, &row), 0);
    }
    free(w.buf);
}

/* A schema-21 database (stats blobs in the v2 order: one header byte,
 * child_calls eighth) opened by this build: its version becomes 24, its blob
 * stays as it was and reads the same rows as a v3 blob of the same figures
 * written now. */
static void upgrade_from_21_keeps_stats(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/from21.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    /* fn 0: calls 2, self 5, total 6, allocs 1, alloc_bytes 16, child_calls 7, hist_self bucket 4 x 1 */
    static const unsigned char v21[] = {0x80 | 17 << 2, 8, 2, 5, 2, 1, 16, 0, 0, 7, 2, 0x15, 0};
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1);"
                                  "INSERT INTO stat_trees(run, thread, fns) VALUES(1, 0, x'c4080205020110000007021500');"
                                  "PRAGMA user_version=21",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_trees WHERE fns = x'c4080205020110000007021500'"), 1);
    assert_int_equal(sizeof v21, 13);
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(count_of(db, "PRAGMA user_version"), PIANO_SCHEMA_VERSION);
    assert_int_equal(PIANO_SCHEMA_VERSION, 24 + PIANO_METRICS_SCHEMA);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_trees WHERE fns = x'c4080205020110000007021500'"), 1);
    with_views(db);
    char old[4096];
    snprintf(old, sizeof old, "%s", all_stats(db));
    assert_non_null(strstr(old, "fn=0|calls=2|self_ns=5|total_ns=6|allocs=1|alloc_bytes=16|frees=0|free_bytes=0|"
                                "hist_self=x'0015'|hist_total=NULL|child_calls=7|"));
    /* the same figures written now (v3) read the same */
    piano_stats_writer w = {0};
    piano_stats_begin(&w, 0);
    int64_t v[PIANO_STATS_NV] = {0};
    v[PIANO_M_calls] = 2, v[PIANO_M_self_ns] = 5, v[PIANO_M_total_ns] = 6, v[PIANO_M_allocs] = 1;
    v[PIANO_M_alloc_bytes] = 16, v[PIANO_STATS_CHILD] = 7;
    piano_stats_put(&w, 0, v, "\x00\x15", 2, NULL, 0);
    assert_false(w.failed);
    assert_int_equal(w.len, sizeof v21 - 2 + 1);   /* a header byte more, two zeros fewer */
    sqlite3_stmt *up;
    assert_int_equal(sqlite3_prepare_v2(db, "UPDATE stat_trees SET fns = ?1", -1, &up, NULL), SQLITE_OK);
    sqlite3_bind_blob(up, 1, w.buf, (int)w.len, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(up), SQLITE_DONE);
    sqlite3_finalize(up);
    free(w.buf);
    assert_string_equal(all_stats(db), old);
    sqlite3_close(db);
}

/* ------------------------------------------------ packed blobs (blob_pack.h) */

static unsigned packed_seed = 12345;
static unsigned packed_rand(void)
{
    packed_seed = packed_seed * 1103515245u + 12345u;
    return packed_seed >> 16;
}

/* Bytes as a stream of LEB128 varints of skewed sizes: what the blobs hold. */
static void varint_stream(unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned r = packed_rand();
        uint64_t v = r % 7 ? r % 40 : (uint64_t)r * 977;
        for (; v >= 0x80 && i < n; v >>= 7)
            b[i++] = (unsigned char)(v | 0x80);
        if (i < n)
            b[i++] = (unsigned char)v;
    }
}

static void round_trip(const unsigned char *raw, size_t n, int must_pack)
{
    unsigned char *out = malloc(n + 256), *back = malloc(n + 1);
    assert_non_null(out);
    assert_non_null(back);
    size_t len = piano_blob_pack(raw, n, out, n + 256);
    if (must_pack)
        assert_true(len > 0);
    if (len) {
        assert_true(len < n);
        assert_true(piano_blob_packed(out, len));
        assert_int_equal(piano_blob_unpacked_size(out, len), n);
        assert_int_equal(piano_blob_unpack(out, len, back, n), 0);
        assert_memory_equal(back, raw, n);
        /* every truncation is refused (no crash, no partial success) */
        for (size_t cut = 0; cut < len; cut += 1 + cut / 8) {
            size_t m = piano_blob_unpacked_size(out, cut);
            if (m)
                assert_int_equal(piano_blob_unpack(out, cut, back, m), -1);
        }
        /* a byte more is refused */
        out[len] = 0x55;
        assert_int_equal(piano_blob_unpack(out, len + 1, back, n), -1);
    }
    free(out);
    free(back);
}

/* Varint streams shrink and come back byte for byte; uniform bytes are left
 * as they are (packing would not make them shorter); one repeated byte, and
 * two, pack to a bit each. */
static void blob_pack_round_trip(void **state)
{
    (void)state;
    static unsigned char b[200000];
    for (size_t n = 1; n < sizeof b; n = n * 3 + 7) {
        varint_stream(b, n);
        round_trip(b, n, n > 400);
    }
    for (size_t i = 0; i < 5000; i++)
        b[i] = (unsigned char)packed_rand();
    unsigned char out[6000];
    assert_int_equal(piano_blob_pack(b, 5000, out, sizeof out), 0);
    memset(b, 0x42, 4000);
    round_trip(b, 4000, 1);
    unsigned char one[4000];
    assert_int_equal(piano_blob_pack(b, 4000, one, sizeof one), 1 + 2 + 128 + 500);
    for (size_t i = 0; i < 4000; i++)
        b[i] = i % 3 ? 7 : 200;
    round_trip(b, 4000, 1);
    /* skewed enough that an unlimited code would be deeper than 12 bits */
    size_t k = 0;
    for (int v = 0; v < 256; v++)
        for (unsigned c = 0; c < (v < 20 ? 1u << (v % 20) : 1u) && k < sizeof b; c++)
            b[k++] = (unsigned char)v;
    round_trip(b, k, 1);
    /* too small to gain: not packed */
    assert_int_equal(piano_blob_pack(b, 100, out, sizeof out), 0);
    assert_int_equal(piano_blob_pack(b, 0, out, sizeof out), 0);
}

/* Malformed packed blobs are refused: a header cut short, a length the codes
 * cannot hold, over-subscribed or too long code lengths, a code that is not
 * in the table. */
static void blob_pack_refuses_malformed(void **state)
{
    (void)state;
    unsigned char raw[3000], p[3000], back[3000];
    varint_stream(raw, sizeof raw);
    size_t len = piano_blob_pack(raw, sizeof raw, p, sizeof p);
    assert_true(len > 0);
    size_t lengths = 1 + 2;   /* the marker, then 3000 as two varint bytes */
    assert_int_equal(piano_blob_unpacked_size(p, lengths + 128), 0);   /* no codes: not even a byte */
    unsigned char bad[3000];
    memcpy(bad, p, len);
    bad[1] = 0xff, bad[2] = 0xff, bad[3] = 0x7f;   /* a length of 2^21 - 1 with the codes of 3000 bytes */
    assert_int_equal(piano_blob_unpacked_size(bad, len), 0);
    memcpy(bad, p, len);
    memset(bad + lengths, 0x11, 128);   /* 256 codes of 1 bit: over-subscribed */
    assert_int_equal(piano_blob_unpack(bad, len, back, sizeof raw), -1);
    memcpy(bad, p, len);
    memset(bad + lengths, 0xdd, 128);   /* 13 bits: longer than the table */
    assert_int_equal(piano_blob_unpack(bad, len, back, sizeof raw), -1);
    memcpy(bad, p, len);
    memset(bad + lengths, 0, 128);
    bad[lengths] = 0x01;   /* one code, value 0, of 1 bit: a 1 bit is no code */
    memset(bad + lengths + 128, 0xff, len - lengths - 128);
    assert_int_equal(piano_blob_unpack(bad, len, back, sizeof raw), -1);
    assert_int_equal(piano_blob_unpack(p, len, back, sizeof raw - 1), -1);   /* not its length */
    assert_int_equal(piano_blob_unpack(p, len, back, sizeof raw), 0);
    assert_memory_equal(back, raw, sizeof raw);
}

/* The codes of raw (n bytes) as blob_pack.h describes them, made here
 * plainly from the lengths packed blob p gives: canonical (a length's first
 * code follows the shorter ones' last, then ascending by value), each code's
 * bits from its first, the stream's bits from each byte's lowest. Returns the
 * bytes written to out. */
static size_t reference_codes(const unsigned char *p, size_t lengths, const unsigned char *raw, size_t n,
                              unsigned char *out)
{
    unsigned len[256], code[256], count[16] = {0}, next[16], c = 0;
    for (int v = 0; v < 256; v++) {
        len[v] = v % 2 ? p[lengths + v / 2] >> 4 : p[lengths + v / 2] & 15;
        count[len[v]]++;
    }
    count[0] = 0;
    for (unsigned l = 1; l < 16; l++)
        next[l] = c = (c + count[l - 1]) << 1;
    for (int v = 0; v < 256; v++)
        if (len[v])
            code[v] = next[len[v]]++;
    size_t bit = 0;
    for (size_t i = 0; i < n; i++)
        for (unsigned k = len[raw[i]]; k-- > 0; bit++) {
            if (bit % 8 == 0)
                out[bit / 8] = 0;
            out[bit / 8] |= (unsigned char)(((code[raw[i]] >> k) & 1) << (bit % 8));
        }
    return (bit + 7) / 8;
}

/* The packed bytes are those blob_pack.h describes, bit for bit (so that a
 * blob stored by one piano reads in another): 200 'A', 100 'B', 60 'C' and 40
 * 'D' have code lengths 1, 2, 3, 3, codes 0, 10, 110, 111; "ABCD" first packs
 * to the bits 0 10 110 111, lowest first: 0xda, then a 1. And a skewed blob
 * with codes of 1 to 12 bits packs to the codes made plainly from its lengths. */
static void blob_pack_codes_as_documented(void **state)
{
    (void)state;
    unsigned char raw[400], out[400];
    memcpy(raw, "ABCD", 4);
    size_t n = 4;
    const int more[] = {199, 99, 59, 39};
    for (int v = 0; v < 4; v++)
        for (int k = 0; k < more[v]; k++)
            raw[n++] = (unsigned char)('A' + v);
    size_t len = piano_blob_pack(raw, n, out, sizeof out);
    assert_int_equal(len, 1 + 2 + 128 + (200 * 1 + 100 * 2 + 60 * 3 + 40 * 3 + 7) / 8);
    assert_int_equal(out[0], PIANO_BLOB_PACKED);
    assert_int_equal(out[1], 400 % 128 | 0x80);
    assert_int_equal(out[2], 400 / 128);
    for (int i = 0; i < 128; i++)   /* 'A' (65) 1 bit, 'B' (66) 2, 'C' (67) 3, 'D' (68) 3 */
        assert_int_equal(out[3 + i], i == 32 ? 1 << 4 : i == 33 ? 2 | 3 << 4 : i == 34 ? 3 : 0);
    assert_int_equal(out[131], 0xda);
    assert_int_equal(out[132] & 1, 1);
    unsigned char want[400];
    assert_int_equal(reference_codes(out, 3, raw, n, want), len - 131);
    assert_memory_equal(out + 131, want, len - 131);

    /* value v 2^v times (v < 17), the others once: lengths up to 12 bits */
    static unsigned char b[1 << 18], p[1 << 18], ref[1 << 18];
    size_t k = 0;
    for (int v = 0; v < 256; v++)
        for (unsigned c = 0; c < (v < 17 ? 1u << v : 1u); c++)
            b[k++] = (unsigned char)v;
    len = piano_blob_pack(b, k, p, sizeof p);
    assert_true(len > 0);
    size_t lengths = 1 + 3;   /* the marker, then k as three varint bytes */
    unsigned deepest = 0;
    for (int v = 0; v < 256; v++) {
        unsigned l = v % 2 ? p[lengths + v / 2] >> 4 : p[lengths + v / 2] & 15;
        deepest = l > deepest ? l : deepest;
    }
    assert_int_equal(deepest, PIANO_PACK_MAX_BITS);
    assert_int_equal(reference_codes(p, lengths, b, k, ref), len - lengths - 128);
    assert_memory_equal(p + lengths + 128, ref, len - lengths - 128);
}

/* A packed stats blob reads through the stats view as the same blob stored
 * as it is; a damaged one is an error naming the table, not a crash. */
static void packed_stats_read_the_same(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/packed.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    piano_stats_writer w = {0};
    piano_stats_begin(&w, 0);
    for (int fn = 0; fn < 60; fn++) {
        int64_t v[PIANO_STATS_NV] = {0};
        v[PIANO_M_calls] = 1 + fn % 7, v[PIANO_M_self_ns] = 100 + fn * 37, v[PIANO_M_total_ns] = 200 + fn * 41;
        v[PIANO_M_allocs] = fn % 3, v[PIANO_STATS_CHILD] = fn % 5;
        piano_stats_put(&w, fn, v, "\x00\x15\x09", 3, fn % 2 ? "\x00\x19" : NULL, fn % 2 ? 2 : 0);
    }
    assert_false(w.failed);
    unsigned char packed[8192];
    size_t len = piano_blob_pack(w.buf, w.len, packed, sizeof packed);
    assert_true(len > 0 && len < w.len);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                  "ns_per_tick) VALUES('k',1,'c',0,0,'complete','tsc',1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_stmt *ins;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO stat_trees(run, thread, fns) VALUES(1, 0, ?1)",
                                        -1, &ins, NULL),
                     SQLITE_OK);
    with_views(db);
    sqlite3_bind_blob(ins, 1, w.buf, (int)w.len, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
    static char raw_rows[65536];
    snprintf(raw_rows, sizeof raw_rows, "%s", all_stats(db));
    assert_non_null(strstr(raw_rows, "fn=59|calls=4|"));
    sqlite3_bind_blob(ins, 1, packed, (int)len, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
    assert_int_equal(count_of(db, "SELECT count(*) FROM stat_trees WHERE hex(substr(fns, 1, 1)) = '7F'"), 1);
    assert_string_equal(all_stats(db), raw_rows);
    packed[len - 1] ^= 0x5a;   /* damaged: a code, or the padding, is wrong */
    packed[len / 2] ^= 0xff;
    sqlite3_bind_blob(ins, 1, packed, (int)len, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_finalize(ins);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM stats", -1, &st, NULL), SQLITE_OK);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)   /* (a damage the code cannot tell reads as other bytes: then the format's reader judges) */
        assert_non_null(strstr(sqlite3_errmsg(db), "stat_trees.fns"));
    free(w.buf);
    sqlite3_close(db);
}

/* Varints: the largest values round-trip; truncated, overlong and
 * overflowing ones are refused. */
static void fns_blob_varints(void **state)
{
    (void)state;
    unsigned char b[PIANO_FNS_ENTRY_MAX];
    size_t len = piano_fns_put(b, UINT32_MAX, UINT64_MAX), at = 0;
    assert_int_equal(len, PIANO_FNS_ENTRY_MAX);
    uint32_t fn = 0;
    uint64_t ns = 0;
    assert_int_equal(piano_fns_get(b, len, &at, &fn, &ns), 0);
    assert_true(fn == UINT32_MAX && ns == UINT64_MAX && at == len);
    for (size_t cut = 0; cut < len; cut++) {   /* every truncation */
        at = 0;
        assert_int_equal(piano_fns_get(b, cut, &at, &fn, &ns), -1);
    }
    const unsigned char big_id[] = { 0x80, 0x80, 0x80, 0x80, 0x10, 0x00 };   /* 2^32 */
    at = 0;
    assert_int_equal(piano_fns_get(big_id, sizeof big_id, &at, &fn, &ns), -1);
    unsigned char over[12] = { 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
    at = 0;   /* the ns varint's tenth byte carries bits past 64 */
    assert_int_equal(piano_fns_get(over, sizeof over, &at, &fn, &ns), -1);
}

/* A run's functions blob reads back as written (ids apart, names up and
 * down, large values); every truncation and another format are refused. */
static void functions_blob_round_trip(void **state)
{
    (void)state;
    static const int64_t ids[] = {0, 1, 2, 40, 41, 1000000, ((int64_t)1 << 60) + 999999};
    static const int64_t names[] = {5, 6, 7, 3, 100000, 0, INT64_MAX};
    piano_fnlist_writer w = {0};
    piano_fnlist_begin(&w);
    for (int i = 0; i < 7; i++)
        piano_fnlist_put(&w, ids[i], names[i]);
    assert_false(w.failed);
    assert_int_equal(w.buf[1], 7);   /* id 0, name 5: z = 10, past 6: escaped, then z */
    assert_int_equal(w.buf[2], 10);
    piano_fnlist_reader r;
    assert_int_equal(piano_fnlist_open(&r, w.buf, w.len), 0);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(piano_fnlist_next(&r), 1);
        assert_true(r.id == ids[i] && r.name == names[i]);
    }
    assert_int_equal(piano_fnlist_next(&r), 0);
    /* the second and third: a byte each (the next id, the next name) */
    piano_fnlist_begin(&w);
    piano_fnlist_put(&w, 3, 1);
    piano_fnlist_put(&w, 4, 2);
    piano_fnlist_put(&w, 6, 3);
    assert_int_equal(w.len, 4);
    assert_false(w.failed);
    piano_fnlist_put(&w, 6, 4);   /* not above the last id */
    assert_true(w.failed);
    piano_fnlist_begin(&w);
    piano_fnlist_put(&w, 0, 0);
    piano_fnlist_put(&w, ((int64_t)1 << 60) + 1, 0);   /* too far past it */
    assert_true(w.failed);
    /* every truncation of a blob whose entries are longer than a byte */
    piano_fnlist_begin(&w);
    piano_fnlist_put(&w, 1000, 1000000);
    size_t first = w.len;
    piano_fnlist_put(&w, (int64_t)1 << 59, 0);
    assert_false(w.failed);
    for (size_t cut = 1; cut < w.len; cut++) {
        assert_int_equal(piano_fnlist_open(&r, w.buf, cut), 0);
        int rc;
        while ((rc = piano_fnlist_next(&r)) == 1)
            ;
        assert_int_equal(rc, cut == 1 || cut == first ? 0 : -1);   /* (1: none; first: one whole) */
    }
    unsigned char other[] = {1, 2};
    assert_int_equal(piano_fnlist_open(&r, other, sizeof other), -1);
    const unsigned char below_zero[] = {0, 3};   /* name 0 - 2 */
    assert_int_equal(piano_fnlist_open(&r, below_zero, sizeof below_zero), 0);
    assert_int_equal(piano_fnlist_next(&r), -1);
    free(w.buf);
}

/* A version-20 database (the stored view functions over run_functions) gets
 * fn_lists, its runs' rows packed into blobs (but a run with a negative id,
 * which the format does not hold), and its view goes: piano-db's TEMP view
 * reads them as the stored one did, and takes inserts (one of an id a run
 * has, in rows or its blob, ignored as before). */
static void upgrades_version_20_functions(void **state)
{
    (void)state;
    sqlite3 *db = open_undone("v20.db", "",
                              "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,ns_per_tick) "
                              "VALUES('k2',2,'c',0,0,'complete','tsc',1);"
                              "INSERT INTO functions VALUES(1,2,'main','a.c',3),(1,3,'work','a.c',9),"
                              "(2,2,'main','a.c',3),(2,-1,'neg','a.c',1);"
                              "PRAGMA user_version=20");
    sqlite3_stmt *st = first_upgraded_row(db, "(SELECT count(*) FROM sqlite_master WHERE name LIKE 'functions%'), "
                                              "(SELECT group_concat(run || ':' || id || ':' || name || ':' || line) "
                                              "FROM (SELECT * FROM functions ORDER BY run, id)), "
                                              "(SELECT group_concat(run) FROM fn_lists), "
                                              "(SELECT group_concat(DISTINCT run) FROM run_functions)");
    assert_int_equal(sqlite3_column_int(st, 1), 0);
    assert_string_equal((const char *)sqlite3_column_text(st, 2), "1:2:main:3,1:3:work:9,2:-1:neg:1,2:2:main:3");
    assert_string_equal((const char *)sqlite3_column_text(st, 3), "1");
    assert_string_equal((const char *)sqlite3_column_text(st, 4), "2");
    sqlite3_finalize(st);
    /* run 3 as the import stores it: work (names.id 2) as 1, main (1) as 5 */
    piano_fnlist_writer w = {0};
    piano_fnlist_begin(&w);
    piano_fnlist_put(&w, 1, 2);
    piano_fnlist_put(&w, 5, 1);
    sqlite3_stmt *ins;
    assert_int_equal(sqlite3_exec(db, "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,"
                                      "ns_per_tick) VALUES('k3',3,'c',0,0,'complete','tsc',1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO fn_lists(run, fns) VALUES(3, ?)", -1, &ins, NULL), SQLITE_OK);
    sqlite3_bind_blob(ins, 1, w.buf, (int)w.len, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_finalize(ins);
    free(w.buf);
    assert_int_equal(sqlite3_exec(db, "INSERT INTO functions VALUES(3,5,'other','b.c',1),(3,6,'new','b.c',2),"
                                      "(1,2,'other','b.c',1),(2,2,'other','b.c',1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    st = first_upgraded_row(db, "(SELECT count(*) FROM names), "
                                "(SELECT group_concat(run || ':' || id || ':' || name || ':' || file || ':' || line) "
                                "FROM (SELECT * FROM functions ORDER BY run, id))");
    /* (3, 5) and (1, 2) were there: not added ('other' goes into names, as schema 20's trigger did) */
    assert_int_equal(sqlite3_column_int(st, 1), 5);
    assert_string_equal((const char *)sqlite3_column_text(st, 2), "1:2:main:a.c:3,1:3:work:a.c:9,2:-1:neg:a.c:1,"
                                                                  "2:2:main:a.c:3,3:1:work:a.c:9,3:5:main:a.c:3,3:6:new:b.c:2");
    sqlite3_finalize(st);
    /* a run's rm takes its blob */
    assert_int_equal(sqlite3_exec(db, "DELETE FROM runs WHERE id = 3", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT count(*) FROM fn_lists"), 1);
    sqlite3_close(db);
}

/* Every frame of the database, each column quoted, in (run, seq) order. */
static char *all_frames(sqlite3 *db)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
        "SELECT group_concat(x, ';') FROM (SELECT quote(run)||','||quote(seq)||','||quote(thread)||','||"
        "quote(start_ns)||','||quote(total_ns)||','||quote(allocs)||','||quote(alloc_bytes)||','||quote(frees)||','||"
        "quote(free_bytes)||','||quote(fns)||','||quote(thread_seq)||','||quote(spike)||','||quote(cpu_ns) AS x "
        "FROM frames ORDER BY run, seq)", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *out = strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
    sqlite3_finalize(st);
    return out;
}

/* A schema-22 database (a row per frame in the table frames) opened by this
 * build: the table becomes frame_rows, the frames a block holds as they are
 * move into blocks of up to 256 (frame_blocks), the others stay rows, and
 * the view frames reads every frame back as it was, in order; writes through
 * the view keep the table's rules. */
static void upgrade_from_22_packs_frames(void **state)
{
    (void)state;
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/from22.db", dir);
    sqlite3 *db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(sqlite3_exec(db, UNDO_24, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "INSERT INTO runs(key,pid,command,started_ns,duration_ns,status,clock,ns_per_tick)"
        " VALUES('a',1,'c',0,0,'complete','tsc',1),('b',2,'c',0,0,'complete','tsc',1);"
        /* run 1: 600 frames of two threads, starts going back and forth, a few with
         * allocations, CPU time and thread_seq unknown in some, every 7th a spike */
        "WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 600)"
        " INSERT INTO frames SELECT 1, n * 3, n % 2, (n * 7919) % 1000 - 300, n * 11, (n % 5 = 0) * n,"
        " (n % 5 = 0) * 64 * n, (n % 10 = 0), (n % 10 = 0) * 32, CASE WHEN n % 4 THEN CAST(x'0a05' || randomblob(n % 9) AS BLOB)"
        " ELSE x'' END, CASE WHEN n % 13 THEN (n + 1) / 2 END, n % 7 = 0, CASE WHEN n % 3 THEN n * 5 END FROM i;"
        /* the ends of int64 */
        "INSERT INTO frames VALUES(1, 9223372036854775807, 4294967296, -9223372036854775808, 9223372036854775807,"
        " 9223372036854775807, 1, 0, 0, x'00', -9223372036854775808, 1, -9223372036854775808);"
        /* rows no block holds as they are: they stay rows */
        "INSERT INTO frames VALUES(1, 5000, 0, 0, 1.5, 0, 0, 0, 0, x'', 1, 0, NULL);"
        "INSERT INTO frames VALUES(1, 5001, 0, 0, 1, 0, 0, 0, 0, 'text', 1, 0, NULL);"
        "INSERT INTO frames VALUES(1, 5002, 0, 0, 1, 0, 0, 0, 0, x'', 1, 2, NULL);"
        "INSERT INTO frames VALUES(2, 1, 0, 0, 5, 0, 0, 0, 0, x'0102', 1, 0, NULL);"
        "PRAGMA user_version=22",
        NULL, NULL, NULL), SQLITE_OK);
    char *before = all_frames(db);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frames"), 605);
    sqlite3_close(db);
    db = piano_store_open(path, PIANO_STORE_WRITE, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(count_of(db, "PRAGMA user_version"), PIANO_SCHEMA_VERSION);
    assert_int_equal(count_of(db, "SELECT count(*) FROM sqlite_master WHERE name = 'frames'"), 0);
    /* run 1: 601 frames in 256 + 256 + 89; run 2: 1; 3 rows left */
    assert_int_equal(count_of(db, "SELECT count(*) FROM frame_blocks WHERE run = 1"), 3);
    assert_int_equal(count_of(db, "SELECT sum(n) FROM frame_blocks"), 602);
    assert_int_equal(count_of(db, "SELECT sum(spikes) FROM frame_blocks"), 85 + 1);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frame_rows"), 3);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frame_blocks WHERE seq = 3 AND last = 768 AND n = 256"), 1);
    with_views(db);
    char *after = all_frames(db);
    assert_string_equal(after, before);
    free(after);
    /* the key: a seq a block holds is refused, another goes to frame_rows */
    assert_int_not_equal(sqlite3_exec(db, "INSERT INTO frames(run,seq,thread,start_ns,total_ns,allocs,alloc_bytes,"
                                          "frees,free_bytes,fns) VALUES(1,30,0,0,1,0,0,0,0,x'')", NULL, NULL, NULL),
                         SQLITE_OK);
    assert_non_null(strstr(sqlite3_errmsg(db), "UNIQUE constraint failed: frames.run, frames.seq"));
    assert_int_equal(sqlite3_exec(db, "INSERT INTO frames(run,seq,thread,start_ns,total_ns,allocs,alloc_bytes,"
                                      "frees,free_bytes,fns) VALUES(1,31,0,0,1,0,0,0,0,x'')", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT spike FROM frames WHERE run = 1 AND seq = 31"), 0);
    /* an update or delete of a frame in a block: its block's frames become rows first */
    assert_int_equal(sqlite3_exec(db, "UPDATE frames SET total_ns = 77 WHERE run = 1 AND seq = 900;"
                                      "DELETE FROM frames WHERE run = 1 AND seq = 1800", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frame_blocks WHERE run = 1"), 1);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frame_rows"), 3 + 1 + 256 + 89 - 1);
    assert_int_equal(count_of(db, "SELECT total_ns FROM frames WHERE run = 1 AND seq = 900"), 77);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frames WHERE run = 1 AND seq = 1800"), 0);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frames"), 605);
    /* a run's rm takes its blocks */
    assert_int_equal(sqlite3_exec(db, "DELETE FROM runs WHERE id = 2", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(count_of(db, "SELECT count(*) FROM frame_blocks WHERE run = 2"), 0);
    free(before);
    sqlite3_close(db);
}

/* Blocks written and read back: every figure as it was, the first frame's
 * seq and the varints' ends; a blob cut anywhere, or with a byte past its
 * last frame, is malformed. */
static void frames_blob_round_trip(void **state)
{
    (void)state;
    piano_frames_writer w = {0};
    piano_frames_begin(&w);
    static const unsigned char fns[] = {7, 0x80, 1};
    piano_frame_row in[3] = {
        {.seq = 5, .thread = 0, .start_ns = 100, .total_ns = 50, .thread_seq = 1, .has_thread_seq = 1, .fns = fns,
         .fns_len = 3},
        {.seq = 6, .thread = 1, .start_ns = 90, .total_ns = 70, .allocs = 1, .alloc_bytes = 16, .spike = 1,
         .cpu_ns = 60, .has_cpu = 1},
        {.seq = 9, .thread = 0, .start_ns = -4, .total_ns = 0, .thread_seq = 2, .has_thread_seq = 1, .frees = 3,
         .cpu_ns = INT64_MIN, .has_cpu = 1},
    };
    for (int i = 0; i < 3; i++)
        piano_frames_put(&w, &in[i]);
    assert_int_equal(w.failed, 0);
    assert_int_equal(w.spikes, 1);
    size_t len;
    const unsigned char *b = piano_frames_end(&w, &len);
    /* format, first 5, n 3; frame 5: flags 8, gap 0, thread 0, z(100) 200 (2 bytes), 50, z(1) 2, fns 3 bytes */
    static const unsigned char head[] = {1, 5, 3, 8, 0, 0, 0xc8, 1, 50, 2, 3, 7, 0x80, 1};
    assert_memory_equal(b, head, sizeof head);
    for (size_t cut = 0; cut <= len; cut++) {
        piano_frames_reader r;
        int rc = piano_frames_open(&r, b, cut) ? -1 : 1, i = 0;
        while (rc == 1 && (rc = piano_frames_next(&r)) == 1) {
            const piano_frame_row *f = &r.row;
            assert_true(i < 3);
            assert_true(f->seq == in[i].seq && f->thread == in[i].thread && f->start_ns == in[i].start_ns &&
                        f->total_ns == in[i].total_ns && f->allocs == in[i].allocs &&
                        f->alloc_bytes == in[i].alloc_bytes && f->frees == in[i].frees && f->spike == in[i].spike &&
                        f->has_cpu == in[i].has_cpu && (!f->has_cpu || f->cpu_ns == in[i].cpu_ns) &&
                        f->has_thread_seq == in[i].has_thread_seq &&
                        (!f->has_thread_seq || f->thread_seq == in[i].thread_seq) && f->fns_len == in[i].fns_len);
            i++;
        }
        if (cut == len) {
            assert_int_equal(rc, 0);
            assert_int_equal(i, 3);
        } else {
            assert_int_equal(rc, -1);   /* cut short: malformed, never a frame made up */
        }
    }
    unsigned char longer[256];
    memcpy(longer, b, len);
    longer[len] = 0;
    piano_frames_reader r;
    assert_int_equal(piano_frames_open(&r, longer, len + 1), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(piano_frames_next(&r), 1);
    assert_int_equal(piano_frames_next(&r), -1);   /* a byte past the last frame */
    /* a seq not above the last fails the block */
    piano_frames_put(&w, &in[0]);
    assert_int_equal(w.failed, 1);
    free(w.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(creates_schema_with_version),
        cmocka_unit_test(refuses_newer_schema),
        cmocka_unit_test(refuses_foreign_files),
        cmocka_unit_test(upgrades_version_1),
        cmocka_unit_test(upgrades_version_2_frame_blobs),
        cmocka_unit_test(upgrades_version_3),
        cmocka_unit_test(upgrades_version_4),
        cmocka_unit_test(upgrades_version_5),
        cmocka_unit_test(upgrades_version_6),
        cmocka_unit_test(upgrades_version_7),
        cmocka_unit_test(upgrades_version_8),
        cmocka_unit_test(upgrades_version_9),
        cmocka_unit_test(upgrades_version_10),
        cmocka_unit_test(upgrades_version_11),
        cmocka_unit_test(upgrades_version_12),
        cmocka_unit_test(upgrades_version_13),
        cmocka_unit_test(upgrades_version_16_contexts),
        cmocka_unit_test(contexts_blob_round_trip),
        cmocka_unit_test(contexts_blob_ancestry),
        cmocka_unit_test(upgrades_version_17_stats),
        cmocka_unit_test(stats_blobs_read_as_rows),
        cmocka_unit_test(upgrades_version_18_views),
        cmocka_unit_test(upgrades_version_18_histograms),
        cmocka_unit_test(stats_blob_round_trip),
        cmocka_unit_test(upgrade_from_21_keeps_stats),
        cmocka_unit_test(blob_pack_round_trip),
        cmocka_unit_test(blob_pack_refuses_malformed),
        cmocka_unit_test(blob_pack_codes_as_documented),
        cmocka_unit_test(packed_stats_read_the_same),
        cmocka_unit_test(fns_blob_varints),
        cmocka_unit_test(functions_blob_round_trip),
        cmocka_unit_test(upgrades_version_20_functions),
        cmocka_unit_test(upgrade_from_22_packs_frames),
        cmocka_unit_test(frames_blob_round_trip),
    };
    return cmocka_run_group_tests_name("schema", tests, setup, teardown);
}
