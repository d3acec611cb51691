/*
 * sqlite_ext.c - libpiano_sqlite.so, a SQLite loadable extension: the views
 * stats, contexts, functions and frames (TEMP, with the INSTEAD OF triggers
 * that make them take writes) and the table-valued functions piano_stats,
 * piano_contexts, piano_functions and piano_frames, as
 * `piano-db sql` has them, for the sqlite3 shell and other SQLite clients:
 *   sqlite3 ~/.piano/piano.db -cmd '.load /usr/local/lib/libpiano_sqlite'
 * The database stores no view over the blobs since schema 19
 * (store/piano_schema.h), nor since 21 the view functions, nor since 24 a
 * table frames. blob_table.c, contexts_blob.c, stats_blob.c, functions_blob.c
 * and frames_blob.c are
 * compiled again for it with sqlite_ext.h forced in (store/CMakeLists.txt).
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include "contexts_blob.h"
#include "frames_blob.h"
#include "functions_blob.h"
#include "stats_blob.h"

#define EXPORT __attribute__((visibility("default")))

/* The name sqlite3's .load derives from libpiano_sqlite.so's. */
EXPORT int sqlite3_pianosqlite_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
    SQLITE_EXTENSION_INIT2(api);
    int rc = piano_contexts_register(db);
    if (rc == SQLITE_OK)
        rc = piano_stats_register(db);
    if (rc == SQLITE_OK)
        rc = piano_functions_register(db);
    if (rc == SQLITE_OK)
        rc = piano_frames_register(db);
    if (rc == SQLITE_OK)
        rc = piano_contexts_make_triggers(db);
    if (rc == SQLITE_OK)
        rc = piano_frames_make_triggers(db);
    if (rc == SQLITE_OK)
        rc = piano_stats_make_triggers(db);
    if (rc != SQLITE_OK && err)
        *err = sqlite3_mprintf("piano: %s", sqlite3_errmsg(db));
    return rc;
}

/* The default entry point, for a loader given no name. */
EXPORT int sqlite3_extension_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
    return sqlite3_pianosqlite_init(db, err, api);
}
