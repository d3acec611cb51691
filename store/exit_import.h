/*
 * exit_import.h - the recorder's one call into store/: at exit, a process
 * stores its own run (rt/finish.c). Everything else the recorder needs is in
 * spool/ (the spool format, histograms, the database's path); store/ and
 * SQLite are libpiano_import.so, which libpiano_rt.so loads for this call
 * only (doc/architecture.md, "The layers").
 */
#ifndef PIANO_EXIT_IMPORT_H
#define PIANO_EXIT_IMPORT_H
#include <stddef.h>

/* States of this process's threads held in anonymous memory rather than in
 * t<N> files (the disk was nearly full, or the file-size limit is below a
 * state file's size): the runtime storing its own run at exit passes them,
 * and their figures and frame buffers are read from memory. */
struct piano_thread;
struct piano_import_mem {
    const struct piano_thread *const *states;
    size_t n;
};

/* How long an exiting program waits for a database another process holds. */
#define PIANO_EXIT_WAIT_MS 3000

/* What piano_store_exit_import did. */
enum {
    PIANO_EXIT_NOT_OPENED = -2,   /* the database could not be opened: err says why */
    PIANO_EXIT_NOT_STORED = -1,   /* opened, but the run could not be stored: err says why */
    PIANO_EXIT_NOTHING = 0,       /* nothing to store (stored before, or a child that recorded nothing) */
    PIANO_EXIT_STORED = 1,        /* stored (err then names what could not be read, or is "") */
};

/* Opens the database at db_path for writing (waiting at most
 * PIANO_EXIT_WAIT_MS for a lock another process holds), imports the spool
 * folder dir as one complete run (the states in mem read from memory), removes
 * the folder when the run is stored (or there was nothing to store), and closes
 * the database (store.h: piano_store_close_stored). Returns a PIANO_EXIT_*
 * value; err (size errn) as they say. */
/* Exported from libpiano_import.so, which libpiano_rt.so loads for this call
 * (rt/import_load.c). */
__attribute__((visibility("default"))) int piano_store_exit_import(const char *db_path, const char *dir, const struct piano_import_mem *mem, char *err,
                            size_t errn);

#endif
