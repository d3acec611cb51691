/*
 * db_path.h - the database's path, which the recorder checks at its start (and
 * whose parent folder it makes with its spool) and piano-db when it opens the
 * database: in spool/, so that the recorder needs nothing of store/ but the
 * import at exit. No SQLite here.
 */
#ifndef PIANO_DB_PATH_H
#define PIANO_DB_PATH_H
#include <stddef.h>

/* The database path: $PIANO_DB, else ~/.piano/piano.db (~: $HOME, else the
 * user's passwd entry's home). Writes into buf (size n). Returns buf, or NULL
 * if no path can be formed (no home) or it does not fit. */
const char *piano_db_default_path(char *buf, size_t n);

/* The longest database path piano takes: the spool's files (<path>.spool/<run>/...)
 * must fit in PATH_MAX. */
#define PIANO_DB_PATH_MAX 3840

/* The one check of a database path, made once before anything is created.
 * in: the path asked for (NULL or "": $PIANO_DB, else ~/.piano/piano.db).
 * Writes into out (size n) the absolute path (a relative one joined to the
 * current folder, so a later chdir does not move the database), and refuses,
 * with a one-line reason in err and -1: a path ending in '/'; one too long; an
 * existing path that is not a regular file (folder, device, fifo, socket, a
 * dangling or another user's symbolic link); an existing database not owned by
 * this user or writable by group or others; an existing <path>.spool that is not
 * a folder (a symbolic link neither) owned by this user and closed to group and
 * others. Nothing is created. Returns 0 when the path may be used. */
int piano_db_resolve_path(const char *in, char *out, size_t n, char *err, size_t errn);

/* Why the database at path (existing or not) cannot be written now, as a phrase
 * ("read-only file system", "the disk is full", "permission denied: ..."), or
 * NULL when it can. Writes into buf (size n). */
const char *piano_db_unwritable(const char *path, char *buf, size_t n);

/* Creates the folders above path (the last one 0700). Returns 0, or -1 with a
 * one-line reason in err. */
int piano_db_make_parent(const char *path, char *err, size_t errn);

/* The checks of piano_db_resolve_path on an absolute or relative path (the
 * database if it exists, the folders above it, its side files, its spool
 * folder), for the opening of the database (store.c). *is_link (NULL: not
 * asked): the database is a symbolic link (owned by this user) to a good file.
 * Returns 0, or -1 with a reason in err. */
int piano_db_check_path(const char *path, int *is_link, char *err, size_t errn);

/* The folders above the database at path and its side files (next to the file
 * a link the user made leads to); exists: the database file exists. Returns 0,
 * or -1 with a reason in err. */
int piano_db_check_around(const char *path, int exists, char *err, size_t errn);

#endif
