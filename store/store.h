/*
 * store.h - opening piano's SQLite database, shared by the runtime and piano-db.
 */
#ifndef PIANO_STORE_H
#define PIANO_STORE_H
#include <sqlite3.h>
#include <stddef.h>
#include <sys/types.h>
#include "db_path.h"   /* the database's path: spool/ */

enum { PIANO_STORE_READ = 0, PIANO_STORE_WRITE = 1 };

/* Opens the database at path. With PIANO_STORE_WRITE, creates the parent folder
 * (0700), the file (0600, O_CREAT|O_EXCL|O_NOFOLLOW: never through a link) and the
 * schema as needed, and sets WAL. PIANO_STORE_READ opens read-only (a database in
 * a read-only folder or on a full disk can still be read; one of an older schema
 * is upgraded first when it can be written). Sets a busy timeout and foreign keys,
 * checks the path as piano_db_resolve_path does and the schema version.
 * Returns the handle, or NULL with a one-line reason in err (size errn) that says
 * what is wrong (read-only, disk full, permission, not a piano database...). */
sqlite3 *piano_store_open(const char *path, int mode, char *err, size_t errn);

/* The pages in the write-ahead log (<path>-wal) past which a process that
 * stored its run folds the log into the database file when it closes: 512
 * KiB of 4 KiB pages, 131 KiB of the 1 KiB pages of databases made with
 * schema 20, 262 KiB of the 2 KiB pages of those made since schema 21 (the
 * next process reads the log back a page a read). */
#define PIANO_STORE_CHECKPOINT_PAGES 128

/* Closes db, the connection that stored a run into the database at path
 * (a link leads to its file): the log is checkpointed (and emptied) only when
 * it holds at least PIANO_STORE_CHECKPOINT_PAGES (and this is the last
 * connection). Committed runs stay in the log meanwhile, read by every
 * connection as usual. Returns sqlite3_close's result. */
int piano_store_close_stored(sqlite3 *db, const char *path);

/* Bytes in the write-ahead log of the database at path (beside the file a
 * link leads to), or -1 when there is none. */
off_t piano_store_log_bytes(const char *path);

/* Runs sql (no results) and returns the SQLite result code. */
int piano_store_exec(sqlite3 *db, const char *sql);

#endif
