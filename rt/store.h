/*
 * store.h - opening piano's SQLite database, shared by the runtime and piano-db.
 */
#ifndef PIANO_STORE_H
#define PIANO_STORE_H
#include <sqlite3.h>
#include <stddef.h>

/* The database path: $PIANO_DB, else ~/.piano/piano.db. Writes into buf (size n).
 * Returns buf, or NULL if no path can be formed (no HOME). */
const char *piano_store_default_path(char *buf, size_t n);

enum { PIANO_STORE_READ = 0, PIANO_STORE_WRITE = 1 };

/* Opens the database at path. With PIANO_STORE_WRITE, creates the parent folder
 * (0700) and file (0600) as needed and the schema. Sets WAL, a busy timeout and
 * foreign keys. Checks the schema version. Returns the handle, or NULL with a
 * one-line reason in err (size errn). */
sqlite3 *piano_store_open(const char *path, int mode, char *err, size_t errn);

/* Creates the folders above path (the last one 0700). Returns 0, or -1 with a
 * one-line reason in err. */
int piano_store_make_parent(const char *path, char *err, size_t errn);

/* Runs sql (no results) and returns the SQLite result code. */
int piano_store_exec(sqlite3 *db, const char *sql);

#endif
