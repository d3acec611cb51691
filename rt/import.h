/*
 * import.h - moving a process's spool (its memory-mapped per-thread records)
 * into the database.
 */
#ifndef PIANO_IMPORT_H
#define PIANO_IMPORT_H
#include <sqlite3.h>
#include <stddef.h>

/* Imports every spool left by a process that is gone (crashed, killed, exec'd)
 * next to the database at db_path, marking those runs 'recovered'. Spools of
 * live processes are left alone. Returns the number of runs imported, or -1
 * with a one-line reason in err. */
int piano_import_recover(sqlite3 *db, const char *db_path, char *err, size_t errn);

/* Imports the spool folder dir as one run ('complete' if the run header says
 * it ended normally, else 'recovered'). Returns 1 if stored, 0 if that run
 * was already stored, -1 with a one-line reason in err. */
int piano_import_spool(sqlite3 *db, const char *dir, int complete, char *err, size_t errn);

/* Deletes a spool folder and the files in it. */
void piano_spool_remove(const char *dir);

#endif
