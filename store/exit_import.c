/* exit_import.c - a process stores its own run at exit (see exit_import.h). */
#include "exit_import.h"
#include "import.h"
#include "store.h"

#include <stdint.h>
#include <time.h>

/* SQLite's busy handler for the exit's store: tries again every millisecond
 * for PIANO_EXIT_WAIT_MS. A reading piano-db holds the write lock for the
 * milliseconds its live read takes (tools/db/common.c), and a loop of them
 * leaves gaps of a few milliseconds: sqlite3_busy_timeout's sleeps, growing to
 * 100 ms, kept missing them (issue 20). */
static int exit_busy(void *arg, int tries)
{
    struct timespec *start = arg, now, ms = { 0, 1000000 };
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (tries == 0)   /* a new wait (SQLite counts the tries of each): from now */
        *start = now;
    int64_t waited = (int64_t)(now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
    if (waited >= PIANO_EXIT_WAIT_MS)
        return 0;
    nanosleep(&ms, NULL);
    return 1;
}

int piano_store_exit_import(const char *db_path, const char *dir, const struct piano_import_mem *mem, char *err,
                            size_t errn)
{
    sqlite3 *db = piano_store_open(db_path, PIANO_STORE_WRITE, err, errn);
    if (!db)
        return PIANO_EXIT_NOT_OPENED;
    struct timespec wait_start = { 0, 0 };
    sqlite3_busy_handler(db, exit_busy, &wait_start);
    /* The import only adds rows, each naming the run it has just inserted
     * and the names it has just found or added, in one transaction: the
     * checks of those references (a lookup in runs or names per row, ~5% of
     * the exit's instructions for jq's 216 functions) cannot fail, and there
     * is nothing to cascade. piano-db's connections keep them. */
    piano_store_exec(db, "PRAGMA foreign_keys=OFF");
    int r = piano_import_spool_mem(db, dir, 1, mem, err, errn);
    if (r >= 0)
        piano_spool_retire(dir);   /* a spare for the next run, or removed */
    piano_store_close_stored(db, db_path);
    return r < 0 ? PIANO_EXIT_NOT_STORED : r > 0 ? PIANO_EXIT_STORED : PIANO_EXIT_NOTHING;
}
