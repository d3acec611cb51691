/*
 * recover.c - the spools of processes that are gone (crashed, killed, exec'd),
 * imported by piano-db: the run folders of a spool root whose lock is free,
 * stored and removed, or kept (as <folder>.damaged when stored in part).
 */
#define _GNU_SOURCE
#include "import_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* True when folder dfd, which has no run header, holds nothing but its lock
 * and frame files: what is left of a stored run when its removal was cut short
 * (the header goes last but for the lock), or when threads of a process
 * storing its own run went on storing frames after the removal. */
static int only_leftovers(int dfd)
{
    int other = 0;
    struct spool_listing d;
    if (spool_listing_open(dfd, &d) != 0)
        return 0;
    const char *name;
    while ((name = spool_listing_next(&d)) != NULL)
        other |= strcmp(name, ".") && strcmp(name, "..") && strcmp(name, PIANO_SPOOL_LOCK) &&
                 name[0] != 'f';   /* f<N>.<K> and its .tmp (piano_spool_frames_file) */
    spool_listing_close(&d);
    return !other;
}

/* Appends "; what" (or "what") to the one-line message err, what formatted
 * as by printf. */
static void add_message(char *err, size_t errn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_message(char *err, size_t errn, const char *fmt, ...)
{
    char what[IMPORT_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t at = strlen(err);
    if (at + 4 < errn)
        snprintf(err + at, errn - at, "%s%s", at ? "; " : "", what);
}

/* Removes run folder `name` of the spool root root_fd (dfd: the folder). */
static void remove_folder(int root_fd, int dfd, const char *name)
{
    spool_remove_files_at(dfd);
    unlinkat(root_fd, name, AT_REMOVEDIR);
}

/* The recovery stores runs in batches, one transaction each: a commit per
 * run wrote ~100 pages to the log for jq's short run (index pages written
 * again by every run), most of piano-db's time storing 100 runs left at exit
 * (PIANO_STORE=later). A batch ends after BATCH_MAX runs or BATCH_MS: a
 * program storing its run at exit waits for the lock (PIANO_EXIT_WAIT_MS).
 * A stored run's folder is removed only once its batch is committed (its
 * lock held until then): a crash meanwhile leaves it to the next command. */
#define BATCH_MAX 64
#define BATCH_MS 100
struct batch_end {
    int dfd, lock;
    char name[NAME_MAX + 1];
};
static struct {
    int on;                     /* a batch's transaction is open */
    int failed;                 /* the last batch_end's commit failed */
    struct timespec start;
    size_t n;
    struct batch_end ends[BATCH_MAX];
} batch;

static void batch_begin(sqlite3 *db)
{
    if (batch.on || !sqlite3_get_autocommit(db))
        return;
    /* as import_dir sets it, which it cannot inside a transaction */
    sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK) {
        batch.on = 1;
        batch.n = 0;
        clock_gettime(CLOCK_MONOTONIC, &batch.start);
    }   /* else busy: each run in a transaction of its own (import_dir) */
}

/* Commits the batch, then removes its runs' folders; if the commit fails,
 * none is stored and every folder stays (said in err). Returns the runs that
 * were not stored. */
static int batch_end(sqlite3 *db, int root_fd, int *failed, char *err, size_t errn)
{
    if (!batch.on)
        return 0;
    batch.on = 0;
    int ok = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    batch.failed = !ok;
    if (!ok) {
        add_message(err, errn, "cannot store the runs of %zu processes (left in the spool): %s", batch.n,
                    sqlite3_errmsg(db));
        *failed = 1;
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    for (size_t i = 0; i < batch.n; i++) {
        if (ok)
            spool_retire_at(root_fd, batch.ends[i].dfd, batch.ends[i].name);
        if (batch.ends[i].lock >= 0)
            close(batch.ends[i].lock);
        close(batch.ends[i].dfd);
    }
    int lost = ok ? 0 : (int)batch.n;
    batch.n = 0;
    return lost;
}

/* Whether the batch is full, or has held the lock long enough. */
static int batch_due(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ms = (int64_t)(now.tv_sec - batch.start.tv_sec) * 1000 + (now.tv_nsec - batch.start.tv_nsec) / 1000000;
    return batch.n >= BATCH_MAX || ms >= BATCH_MS;
}

/* The lock file of run folder dfd (-1 when it has none), and whether a live
 * process holds it (*live). A dead folder's lock is then held by this
 * process until the descriptor is closed: another piano-db takes it for live
 * meanwhile and leaves it to a later command. A folder without a lock is
 * dead (made under a dot name with its lock, renamed: it lost it since). */
static int probe_lock(int dfd, int *live)
{
    int lock = openat(dfd, PIANO_SPOOL_LOCK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    *live = lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0;
    return lock;
}

/* Recovers the run folder `name` of the spool root root_fd (dir: its path,
 * for messages) unless a live process holds it. Appends to err what was
 * refused, kept or skipped, and sets *failed then. Returns the runs stored. */
static int recover_folder(sqlite3 *db, int root_fd, const struct spool_parents *parents, const char *name,
                          const char *dir, unsigned parts, int *failed, char *err, size_t errn)
{
    (void)parts;
    char why[IMPORT_LINE_MAX], note_buf[IMPORT_NOTE_MAX];
    int dfd = spool_open_own_dir(root_fd, name, dir, why, sizeof why);
    if (dfd < 0) {
        add_message(err, errn, "%s", why);
        *failed = 1;
        return 0;
    }
    int live, lock = probe_lock(dfd, &live);
    /* Still the folder of that name now that its lock is held: else it was
     * stored and retired (a spare, spool.h) between the listing and the
     * lock, by its process at exit or another piano-db, and maybe taken by a
     * run since; stored again, its retirement would empty a spare. */
    struct stat st, named;
    if (live || fstat(dfd, &st) != 0 || fstatat(root_fd, name, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
        st.st_ino != named.st_ino || st.st_dev != named.st_dev) {
        if (lock >= 0)
            close(lock);
        close(dfd);
        return 0;
    }
    batch_begin(db);
    int r = import_run_folder(db, root_fd, dfd, dir, 0, PIANO_LIVE_ALL, NULL, parents, why, sizeof why, note_buf,
                              sizeof note_buf);
    int imported = 0;
    if (r > 0 && !note_buf[0] && batch.on) {   /* a run stored (nothing stored: removed now, below) */
        /* removed once its batch is committed */
        struct batch_end *e = &batch.ends[batch.n++];
        e->dfd = dfd;
        e->lock = lock;
        snprintf(e->name, sizeof e->name, "%s", name);
        imported = r;
        if (batch_due())
            imported -= batch_end(db, root_fd, failed, err, errn);
        return imported;
    }
    batch.failed = 0;
    if (r >= 0 && r != IMPORT_NO_RUN && note_buf[0])
        imported -= batch_end(db, root_fd, failed, err, errn);   /* committed before the spool is renamed */
    if (batch.failed) {
        /* said by batch_end: the run stays as it is */
    } else if (r == IMPORT_NO_RUN && only_leftovers(dfd)) {
        remove_folder(root_fd, dfd, name);
    } else if (r == IMPORT_NO_RUN) {
        add_message(err, errn, "cannot recover %s: its run header is missing (kept)", dir);
        *failed = 1;
    } else if (r >= 0 && note_buf[0]) {   /* (its batch committed above) */
        /* Stored with what could be read; the rest is kept under a name
         * the next command skips. */
        char kept[NAME_MAX + sizeof PIANO_SPOOL_DAMAGED];
        int moved = (size_t)snprintf(kept, sizeof kept, "%s" PIANO_SPOOL_DAMAGED, name) < sizeof kept &&
                    renameat(root_fd, name, root_fd, kept) == 0;
        add_message(err, errn, "stored the run of %s without what could not be read (%s); %s %s" PIANO_SPOOL_DAMAGED,
                    dir, note_buf, moved ? "the spool is kept as" : "cannot rename it to", dir);
        imported += r;
        *failed = 1;
    } else if (r >= 0) {
        imported = r;
        spool_retire_at(root_fd, dfd, name);
    } else {
        add_message(err, errn, "cannot recover %s: %s", dir, why);
        *failed = 1;
    }
    if (lock >= 0)
        close(lock);
    close(dfd);
    return imported;
}

/* Imports run folder `name` if a live process holds its lock (the live
 * run as it is now, the parts asked for); leaves it as it is. Returns the
 * runs imported. */
static int live_folder(sqlite3 *db, int root_fd, const struct spool_parents *parents, const char *name,
                       const char *dir, unsigned parts, int *failed, char *err, size_t errn)
{
    (void)parents;   /* a live run is listed, whatever it recorded */
    char why[IMPORT_LINE_MAX], note_buf[IMPORT_NOTE_MAX];
    int dfd = spool_open_own_dir(root_fd, name, dir, why, sizeof why);
    if (dfd < 0)
        return 0;   /* said by the recovery, which ran first */
    int live, lock = probe_lock(dfd, &live), r = 0;
    /* Its files are mapped while read: fns held shared, so that no start
     * empties them meanwhile, should the folder become a spare (spool.h);
     * and still the folder of that name once held (else it is one now). */
    int fns = live ? openat(dfd, PIANO_SPOOL_FNS, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    struct stat st, named;
    live = fns >= 0 && flock(fns, LOCK_SH | LOCK_NB) == 0 && fstat(dfd, &st) == 0 &&
           fstatat(root_fd, name, &named, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == named.st_ino &&
           st.st_dev == named.st_dev;
    if (live) {
        r = import_run_folder(db, root_fd, dfd, dir, IMPORT_LIVE, parts, NULL, NULL, why, sizeof why, note_buf,
                              sizeof note_buf);
        if (r == IMPORT_NO_RUN) {
            r = 0;   /* being made: its header comes with its folder's name */
        } else if (r < 0) {
            add_message(err, errn, "cannot read the live run of %s: %s", dir, why);
            *failed = 1;
        }
    }
    if (fns >= 0)
        close(fns);
    if (lock >= 0)
        close(lock);
    close(dfd);
    return r > 0 ? r : 0;
}

/* Calls one_folder on each run folder of the spool next to db_path; says
 * which entries are symbolic links when say_links (once: the recovery, which
 * reads the folders' parents first). */
static int each_folder(sqlite3 *db, const char *db_path,
                       int (*one_folder)(sqlite3 *, int, const struct spool_parents *, const char *, const char *,
                                         unsigned, int *, char *, size_t),
                       unsigned parts, int say_links, char *err, size_t errn)
{
    char root[IMPORT_PATH_MAX];
    err[0] = 0;
    if (piano_spool_root(root, sizeof root, db_path) != 0) {
        snprintf(err, errn, "%.60s...: the path is too long for its spool folder", db_path);
        return -1;
    }
    int root_fd = spool_open_own_dir(AT_FDCWD, root, root, err, errn);
    if (root_fd < 0)
        return errno == ENOENT ? (err[0] = 0, 0) : -1;
    struct spool_listing d;
    if (spool_listing_open(root_fd, &d) != 0) {
        snprintf(err, errn, "cannot read %s: %s", root, strerror(errno));
        close(root_fd);
        return -1;
    }
    struct spool_parents parents = { 0 };
    int have_parents = say_links && spool_parents_read(root_fd, &parents) == 0;
    const size_t damaged_len = sizeof PIANO_SPOOL_DAMAGED - 1;
    int imported = 0, failed = 0;
    const char *name;
    while ((name = spool_listing_next(&d)) != NULL) {
        size_t len = strlen(name);
        if (name[0] == '.' || (len > damaged_len && !strcmp(name + len - damaged_len, PIANO_SPOOL_DAMAGED)))
            continue;   /* '.', '..', spools still being made; spools kept after a partial import */
        char dir[IMPORT_PATH_MAX];
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root, name) >= sizeof dir)
            continue;   /* not a name piano makes */
        struct stat st;
        if (fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            if (say_links) {
                add_message(err, errn, "%s is a symbolic link: skipped", dir);
                failed = 1;
            }
        } else if (S_ISDIR(st.st_mode)) {   /* else the calibration cache */
            imported += one_folder(db, root_fd, have_parents ? &parents : NULL, name, dir, parts, &failed, err, errn);
        }
    }
    imported -= batch_end(db, root_fd, &failed, err, errn);
    spool_listing_close(&d);
    spool_parents_free(&parents);
    close(root_fd);
    return failed ? -1 : imported;
}

int piano_import_recover(sqlite3 *db, const char *db_path, char *err, size_t errn)
{
    return each_folder(db, db_path, recover_folder, 0, 1, err, errn);
}

int piano_import_live(sqlite3 *db, const char *db_path, unsigned parts, char *err, size_t errn)
{
    return each_folder(db, db_path, live_folder, parts, 0, err, errn);
}
