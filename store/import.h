/*
 * import.h - moving a process's spool (its memory-mapped per-thread records)
 * into the database.
 *
 * A spool is read as untrusted input: its threads may still be recording (the
 * runtime stores its own run at exit while other threads go on), it may be
 * damaged, and on a shared machine someone else may have planted files in it.
 * Folders are used only when this user owns them and nobody else can write
 * them; files are opened relative to them, never through a symbolic link.
 */
#ifndef PIANO_IMPORT_H
#define PIANO_IMPORT_H
#include <sqlite3.h>
#include <stddef.h>
#include "exit_import.h"   /* struct piano_import_mem */

/* Imports every spool left by a process that is gone (crashed, killed, exec'd:
 * its lock is free, or it has none) next to the database at db_path, marking
 * those runs 'recovered'. Spools of live processes are left alone. A spool
 * stored with parts that could not be read is kept as <folder>.damaged (and
 * skipped from then on); one that cannot be stored at all stays where it is.
 * Returns the number of runs imported, or -1 with a one-line message in err
 * naming what was refused, kept or skipped (the runs that could be imported
 * are). */
int piano_import_recover(sqlite3 *db, const char *db_path, char *err, size_t errn);

/* What of a live run piano_import_live reads besides its row, its totals
 * (duration, frame count and histogram, drops) and its threads' rows: a
 * reading command asks for what it shows, since a live run's frames can be
 * millions of rows (issue 20). */
#define PIANO_LIVE_STATE 1u      /* per-function stats and histograms, calls in flight */
#define PIANO_LIVE_CONTEXTS 2u   /* the calling contexts' rows (with PIANO_LIVE_STATE) */
#define PIANO_LIVE_FRAMES 4u     /* the kept frames (else runs.frames_kept is NULL: not read) */
#define PIANO_LIVE_SNAPS 8u      /* the snapshots (PIANO_INTERVAL) */
#define PIANO_LIVE_NAMES 16u     /* the threads' names as they are now (else as at each one's first call):
                                  * a read of /proc per thread, about 8 us */
#define PIANO_LIVE_ALL \
    (PIANO_LIVE_STATE | PIANO_LIVE_CONTEXTS | PIANO_LIVE_FRAMES | PIANO_LIVE_SNAPS | PIANO_LIVE_NAMES)

/* The runs of live processes (their lock is held) next to the database at
 * db_path, imported as they are now with status 'running', into the
 * transaction the caller has open: piano-db reads them and rolls back, so a
 * live run is never stored nor its spool touched. parts: PIANO_LIVE_* (what
 * besides the run's row). Returns the runs imported, or -1 with a one-line
 * message in err (those that could be read are). */
int piano_import_live(sqlite3 *db, const char *db_path, unsigned parts, char *err, size_t errn);

/* Imports the spool folder dir as one run ('complete' if complete or the run
 * header says it ended normally, else 'recovered'). Returns 1 if stored (err
 * then names what could not be read, or is ""), 0 if there was nothing to
 * store (that run was stored before, or it is a forked child that recorded
 * nothing of its own), -1 with a one-line reason in err. */
int piano_import_spool(sqlite3 *db, const char *dir, int complete, char *err, size_t errn);

/* piano_import_spool, with the states in mem (NULL: none) read from memory. */
int piano_import_spool_mem(sqlite3 *db, const char *dir, int complete, const struct piano_import_mem *mem,
                           char *err, size_t errn);

/* Deletes a spool folder and the files in it (never following a link). */
void piano_spool_remove(const char *dir);

/* A stored run's spool folder dir: renamed to a spare (spool.h), or, when
 * every spare name is taken, removed (piano_spool_remove). */
void piano_spool_retire(const char *dir);

#endif
