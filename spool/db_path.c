/* db_path.c - the database's path: the default, the one check of a path asked
 * for (the file, its side files, the folders above, its spool folder), why it
 * cannot be written, its parent folder made. Both the recorder (at start) and
 * piano-db (at open) use it; it needs no SQLite (see db_path.h). */
#include "db_path.h"
#include "spool.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* The user's home: $HOME, else its passwd entry's, as ~ means to a shell. A
 * program run with an emptied environment (env -i, bash's exec -c, a service
 * manager's) has no HOME: it still records, where ~ says, and says nothing
 * on its stderr (bash's own test suite compares it). */
static const char *home_folder(char *buf, size_t n)
{
    const char *home = getenv("HOME");
    if (home && *home)
        return home;
    struct passwd pw, *found = NULL;
    char tmp[4096];
    if (getpwuid_r(geteuid(), &pw, tmp, sizeof tmp, &found) != 0 || !found || !found->pw_dir ||
        found->pw_dir[0] != '/')
        return NULL;
    int w = snprintf(buf, n, "%s", found->pw_dir);
    return w >= 0 && (size_t)w < n ? buf : NULL;
}

const char *piano_db_default_path(char *buf, size_t n)
{
    const char *env = getenv("PIANO_DB");
    int w;
    if (env && *env) {
        w = snprintf(buf, n, "%s", env);
    } else {
        char home_buf[PATH_MAX];
        const char *home = home_folder(home_buf, sizeof home_buf);
        if (!home)
            return NULL;
        w = snprintf(buf, n, "%s/.piano/piano.db", home);
    }
    return w >= 0 && (size_t)w < n ? buf : NULL;
}

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m))
        return "a folder";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISFIFO(m))
        return "a fifo";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISLNK(m))
        return "a symbolic link";
    if (S_ISREG(m))
        return "a file";
    return "an unusual file";
}

/* What the database file (folder 0) and its spool folder (folder 1) must be,
 * st their lstat (a link to the file followed): of that kind, owned by this
 * user, not writable by others. Returns 0, or -1 with a reason in err. */
static int check_own(const char *path, const struct stat *st, int folder, char *err, size_t errn)
{
    if (folder && !S_ISDIR(st->st_mode)) {
        snprintf(err, errn, "%s is %s, not a folder; piano will not use it", path, kind_of(st->st_mode));
        return -1;
    }
    if (!folder && !S_ISREG(st->st_mode)) {
        snprintf(err, errn, "%s is %s, not a database file", path, kind_of(st->st_mode));
        return -1;
    }
    if (st->st_uid != geteuid()) {
        snprintf(err, errn, "%s is owned by another user (uid %u); piano will not use it", path,
                 (unsigned)st->st_uid);
        return -1;
    }
    if (st->st_mode & 022) {
        snprintf(err, errn, "%s is writable by other users (mode %04o); piano will not use it: chmod go-w it",
                 path, (unsigned)(st->st_mode & 07777));
        return -1;
    }
    return 0;
}

/* The files SQLite keeps beside the database file: the write-ahead log and its
 * index (WAL mode, which piano's databases are in), the rollback journal. */
static const char *const side_suffix[] = {"-wal", "-shm", "-journal"};

/* Each of the database's side files beside real (the database file, a link
 * followed) that exists: a file of this user's, not a link, not writable by
 * others, as the database itself. Another user's planted -wal or -shm would
 * receive the run. Returns 0, or -1 with a reason in err. */
static int check_sides(const char *real, char *err, size_t errn)
{
    for (size_t i = 0; i < sizeof side_suffix / sizeof *side_suffix; i++) {
        char side[PATH_MAX + 16];
        struct stat st;
        if ((size_t)snprintf(side, sizeof side, "%s%s", real, side_suffix[i]) >= sizeof side) {
            snprintf(err, errn, "%.60s...: the path is too long", real);
            return -1;
        }
        if (lstat(side, &st) != 0) {
            if (errno == ENOENT)
                continue;
            snprintf(err, errn, "%s: %s", side, strerror(errno));
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, errn, "%s is %s, not a file of the database; piano will not use it", side,
                     kind_of(st.st_mode));
            return -1;
        }
        if (check_own(side, &st, 0, err, errn))
            return -1;
    }
    return 0;
}

/* The folder dir (it exists) and every folder above it, as ssh checks the
 * folders of ~/.ssh: each owned by root or this user, and not writable by
 * group or others unless sticky (like /tmp: others can add files there but
 * not remove or rename this user's; the side files they could plant first
 * are refused by check_sides). Another user who can write a folder on the
 * way could put a database, a log or a folder of his own in its place.
 * Returns 0, or -1 with a reason in err. */
static int check_folders(const char *dir, char *err, size_t errn)
{
    char real[PATH_MAX];
    if (!realpath(dir, real)) {
        snprintf(err, errn, "%s: %s", dir, strerror(errno));
        return -1;
    }
    for (;;) {
        struct stat st;
        if (lstat(real, &st) != 0) {
            snprintf(err, errn, "%s: %s", real, strerror(errno));
            return -1;
        }
        if (st.st_uid != 0 && st.st_uid != geteuid()) {
            snprintf(err, errn, "the folder %s is owned by another user (uid %u); piano will not keep a database under it",
                     real, (unsigned)st.st_uid);
            return -1;
        }
        if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
            snprintf(err, errn,
                     "the folder %s is writable by other users (mode %04o) and not sticky; piano will not keep a database under it",
                     real, (unsigned)(st.st_mode & 07777));
            return -1;
        }
        char *slash = strrchr(real, '/');
        if (!slash || slash == real) {
            if (real[1] == 0)
                return 0;
            real[1] = 0;   /* then "/" itself */
            continue;
        }
        *slash = 0;
    }
}

static void existing_dir(const char *path, char *dir, size_t n);

/* The folders above the database and its side files (next to the file a link
 * the user made leads to). Returns 0, or -1 with a reason in err. */
int piano_db_check_around(const char *path, int exists, char *err, size_t errn)
{
    char real[PATH_MAX], dir[PATH_MAX];
    if (exists) {
        if (!realpath(path, real)) {
            snprintf(err, errn, "%s: %s", path, strerror(errno));
            return -1;
        }
    } else if ((size_t)snprintf(real, sizeof real, "%s", path) >= sizeof real) {
        snprintf(err, errn, "%.60s...: the path is too long", path);
        return -1;
    }
    existing_dir(real, dir, sizeof dir);
    if (check_folders(dir, err, errn))
        return -1;
    return check_sides(real, err, errn);
}

/* The checks of piano_db_resolve_path on an absolute or relative path: the
 * database (if it exists), the folders above it, its side files and its spool
 * folder (if they exist). *is_link: the database is a symbolic link (owned by
 * this user) to a good file. */
int piano_db_check_path(const char *path, int *is_link, char *err, size_t errn)
{
    struct stat st;
    int exists = 0;
    if (is_link)
        *is_link = 0;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            snprintf(err, errn, "%s: %s", path, strerror(errno));
            return -1;
        }
    } else {
        exists = 1;
        if (S_ISLNK(st.st_mode)) {
            if (st.st_uid != geteuid()) {
                snprintf(err, errn, "%s is a symbolic link owned by another user (uid %u); piano will not follow it",
                         path, (unsigned)st.st_uid);
                return -1;
            }
            if (stat(path, &st) != 0) {
                snprintf(err, errn, "%s is a symbolic link to nothing (%s); piano will not create a database through it",
                         path, strerror(errno));
                return -1;
            }
            if (is_link)
                *is_link = 1;
        }
        if (check_own(path, &st, 0, err, errn))
            return -1;
    }
    if (piano_db_check_around(path, exists, err, errn))
        return -1;
    char spool[PATH_MAX + sizeof PIANO_SPOOL_SUFFIX];
    if (piano_spool_root(spool, sizeof spool, path) != 0) {
        snprintf(err, errn, "%.60s...: the path is too long", path);
        return -1;
    }
    if (lstat(spool, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errn, "%s: %s", spool, strerror(errno));
        return -1;
    }
    return check_own(spool, &st, 1, err, errn);
}

int piano_db_resolve_path(const char *in, char *out, size_t n, char *err, size_t errn)
{
    char dflt[PIANO_DB_PATH_MAX + 2];
    const char *src = in;
    if (!src || !*src) {
        src = piano_db_default_path(dflt, sizeof dflt);
        if (!src) {
            const char *env = getenv("PIANO_DB");
            char home[PATH_MAX];
            if ((env && *env) || home_folder(home, sizeof home))
                snprintf(err, errn, "the database path is too long (at most %d bytes)", PIANO_DB_PATH_MAX);
            else
                snprintf(err, errn, "no PIANO_DB, no HOME and no home folder for this user: no place for the database");
            return -1;
        }
    }
    size_t len = strlen(src);
    if (src[len - 1] == '/') {
        snprintf(err, errn, "%s ends in '/': name the database file, not a folder (e.g. %spiano.db)", src, src);
        return -1;
    }
    size_t max = n - 1 < PIANO_DB_PATH_MAX ? n - 1 : PIANO_DB_PATH_MAX;
    if (n == 0 || len > max) {
        snprintf(err, errn, "%.60s...: the path is too long (%zu bytes, at most %zu)", src, len, n ? max : 0);
        return -1;
    }
    if (src[0] == '/') {
        memcpy(out, src, len + 1);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            snprintf(err, errn, "%s: cannot tell the current folder to make it absolute (%s)", src, strerror(errno));
            return -1;
        }
        size_t cl = strlen(cwd);
        int slash = cl > 0 && cwd[cl - 1] == '/';
        if (cl + !slash + len > max) {
            snprintf(err, errn, "%s/%.40s...: the path is too long (%zu bytes, at most %zu)", cwd, src,
                     cl + !slash + len, max);
            return -1;
        }
        snprintf(out, n, "%s%s%s", cwd, slash ? "" : "/", src);
    }
    return piano_db_check_path(out, NULL, err, errn);
}

/* The folder path is in, or the nearest ancestor that exists (it will be created). */
static void existing_dir(const char *path, char *dir, size_t n)
{
    snprintf(dir, n, "%s", path);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) {
            snprintf(dir, n, ".");
            return;
        }
        if (slash == dir) {
            dir[1] = 0;
            return;
        }
        *slash = 0;
        struct stat st;
        if (stat(dir, &st) == 0)
            return;
    }
}

const char *piano_db_unwritable(const char *path, char *buf, size_t n)
{
    char dir[PATH_MAX];
    existing_dir(path, dir, sizeof dir);
    struct statvfs vs;
    int have_vfs = statvfs(dir, &vs) == 0;
    if (have_vfs && (vs.f_flag & ST_RDONLY)) {
        snprintf(buf, n, "read-only file system");
        return buf;
    }
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
        if (errno == EROFS)
            snprintf(buf, n, "read-only file system");
        else if (errno == EACCES || errno == EPERM)
            snprintf(buf, n, "permission denied: the folder %s is not writable", dir);
        else
            snprintf(buf, n, "the folder %s is not writable: %s", dir, strerror(errno));
        return buf;
    }
    if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0 && errno != ENOENT) {
        if (errno == EROFS)
            snprintf(buf, n, "read-only file system");
        else if (errno == EACCES || errno == EPERM)
            snprintf(buf, n, "permission denied: the file is read-only");
        else
            snprintf(buf, n, "the file is not writable: %s", strerror(errno));
        return buf;
    }
    if (have_vfs && (geteuid() == 0 ? vs.f_bfree : vs.f_bavail) == 0) {
        snprintf(buf, n, "the disk is full");
        return buf;
    }
    return NULL;
}
/* Creates the folder that will hold path, mode 0700 for the last component. */
int piano_db_make_parent(const char *path, char *err, size_t errn)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s", path) >= sizeof dir) {
        snprintf(err, errn, "%.60s...: the path is too long", path);
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    struct stat st;
    if (stat(dir, &st) == 0)
        return 0;
    /* Create missing ancestors, then the folder itself. */
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errn, "cannot create folder %s: %s", dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errn, "cannot create folder %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}
