/*
 * blob_table.h - a table-valued function whose rows are those a blob
 * format's reader decodes from its one argument: piano_contexts(nodes)
 * (contexts_blob.c), piano_stats(fns) (stats_blob.c), piano_functions(fns)
 * (functions_blob.c) and piano_frames(frames) (frames_blob.c); the TEMP view
 * over it, and the view's triggers. The SQLite module (cursor, plan, copy of
 * the blob, unpacked) is here once; a format gives its columns and three
 * callbacks on a state of its own (its reader, and its current row when the
 * reader has none).
 */
#ifndef PIANO_BLOB_TABLE_H
#define PIANO_BLOB_TABLE_H

#include <sqlite3.h>
#include <stddef.h>

typedef struct {
    /* Writes the table's declaration, "CREATE TABLE x(c0, c1, ..., blob
     * HIDDEN)", into sql; returns the visible columns (the blob's is the
     * next). Rows are read in ascending order of column 0. */
    int (*declare)(char *sql, size_t n);
    /* Starts reading blob b into state: 0, or -1 when malformed. */
    int (*open)(void *state, const unsigned char *b, size_t len);
    /* The next row: 1, 0 at the end, -1 when malformed. */
    int (*next)(void *state);
    /* Column col of the current row into ctx. */
    void (*column)(const void *state, sqlite3_context *ctx, int col);
    /* Frees what open allocated in state (NULL: nothing). */
    void (*close)(void *state);
    size_t state_size;
    double rows;         /* the planner's estimate of a blob's rows */
    const char *malformed;   /* the error of a malformed blob */
} piano_blob_table;

/* Registers module `name` reading blobs as t says (t must outlive db), then
 * runs view_sql: the TEMP view that reads it (and the view's triggers, if
 * any). Returns SQLITE_OK or an error. */
int piano_blob_table_register(sqlite3 *db, const char *name, const piano_blob_table *t, const char *view_sql);

/* A column of such a view, after run and thread: its name, and whether a row
 * inserted with it NULL gets 0 (a figure always measured). */
typedef struct {
    const char *name;
    int zero_for_null;
} piano_view_col;

/* Makes TEMP view `view` (run, thread, then cols[0..n-1]: the rows of table
 * `rows` and those of the blobs of table `trees`, a blob a thread of a run)
 * take inserts, updates and deletes (`piano-db sql`): INSTEAD OF triggers,
 * inserted rows going to `rows`; an update or delete of the row with OLD's
 * `key` in a blob moves its thread's rows to `rows` first. TEMP triggers on
 * the TEMP view: nothing is stored in the schema. Returns SQLITE_OK or an
 * error. */
int piano_blob_view_triggers(sqlite3 *db, const char *view, const char *rows, const char *trees, const char *key,
                             const piano_view_col *cols, int n);

#endif
