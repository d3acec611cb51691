/*
 * run_folder.c - this run's spool folder (spool.h): made at start with its
 * lock and run header, opened by name for every write (never kept open: a
 * program may close or reuse any descriptor; once the program changes its
 * user, through the descriptors user.c keeps), and the run header saved.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "db_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sched.h>
#include <sys/syscall.h>

/* ---------------------------------------------------------------- the run folder */

/* Opens this run's spool folder, checked to be the one this process made:
 * a folder renamed away or put in its place is not written into. Returns a
 * descriptor, or -1 with errno set. */
int run_dir_open(void)
{
    int dfd = open(g.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 && (errno == EACCES || errno == EPERM) && geteuid() != g.start_euid) {
        int e = errno;
        say("piano: this process changed its user (uid %u -> %u) and can no longer write its spool %s: "
            "threads and frames from now on may be counted only, not recorded (doc/running.md, daemons that drop root)",
            (unsigned)g.start_euid, (unsigned)geteuid(), g.dir);
        errno = e;
    }
    struct stat st;
    if (dfd >= 0 && (fstat(dfd, &st) != 0 || st.st_dev != g.dir_dev || st.st_ino != g.dir_ino)) {
        /* A folder put in the run's place: not written into. Anything else is
         * the program's: it closed the number (close_range) and opened a file
         * of its own there, between the open and this check: left alone, and
         * tried again later (EBADF, as a descriptor taken back). */
        struct stat path_st;
        int impostor = fstat(dfd, &st) == 0 && S_ISDIR(st.st_mode) &&
                       !(stat(g.dir, &path_st) == 0 && path_st.st_dev == g.dir_dev && path_st.st_ino == g.dir_ino);
        if (impostor)
            close(dfd);
        errno = impostor ? ESTALE : EBADF;
        return -1;
    }
    return dfd;
}

/* Opens file `name` of this run's spool folder (never through a symbolic
 * link; made 0600). Not kept open: a program may close any descriptor it did
 * not open, or reuse its number. Returns a descriptor, or -1 with errno set. */
int run_open(const char *name, int flags)
{
    int kept = held_open(name);   /* the program changed its user: the files piano kept (user.c) */
    if (kept >= 0)
        return kept;
    int dfd = run_dir_open();
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
    int e = errno;
    struct stat st;   /* closed only if still the folder: the program may have closed it and reused its number */
    if (fstat(dfd, &st) == 0 && st.st_dev == g.dir_dev && st.st_ino == g.dir_ino)
        close(dfd);
    errno = e;
    return fd;
}

/* Whether descriptor fd is one that run_open(name, flags) returned and still
 * names it: the run's file `name` (the one at its path now, or the one kept
 * for a program that changed its user), open with those flags (access mode
 * and O_APPEND: piano's states are read-only where the recording threads'
 * are read-write). A thread other than the program's that opens a file gets
 * a low number, which the program may close (close_range) and open again
 * (its own file, or a file of piano's opened by piano on the program's
 * thread) before the opener looks at it: what fd names then is checked
 * against what was meant, never taken from fd itself. */
int run_file_is(int fd, const char *name, int flags)
{
    if (held_is(fd, name))
        return 1;
    char path[PIANO_PATH_MAX];
    return spool_path(path, g.dir, name) == 0 && fd_names_file(fd, AT_FDCWD, path, flags);
}

/* Whether descriptor fd is open with flags' access mode and O_APPEND on the
 * file that path (relative to folder descriptor at) names now. */
int fd_names_file(int fd, int at, const char *path, int flags)
{
    struct stat want, st;
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    return fl >= 0 && (fl & (O_ACCMODE | O_APPEND)) == (flags & (O_ACCMODE | O_APPEND)) &&
           fstatat(at, path, &want, 0) == 0 && fstat(fd, &st) == 0 && st.st_dev == want.st_dev &&
           st.st_ino == want.st_ino;
}

/* dir/name into out (PIANO_PATH_MAX bytes): the one place a path is joined.
 * Returns 0, or -1 when it does not fit (no such path could be opened). */
int spool_path(char out[PIANO_PATH_MAX], const char *dir, const char *name)
{
    int n = snprintf(out, PIANO_PATH_MAX, "%s/%s", dir, name);
    return n < 0 || n >= PIANO_PATH_MAX ? -1 : 0;
}

static void read_command(char *out, uint32_t *len, size_t cap)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, cap - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0)
        n = 0;
    while (n > 0 && out[n - 1] == 0)
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == 0)
            out[i] = ' ';
    out[n] = 0;
    *len = (uint32_t)n;
}

/* The run's command is read again: the title the process has now (a daemon
 * renames itself after the fork that made its run, as nginx's master and
 * workers do: setproctitle over argv[0]); kept when it cannot be read. */
void refresh_command(void)
{
    char cmd[sizeof g.run.cmd];
    uint32_t len = 0;
    read_command(cmd, &len, sizeof cmd);
    if (len) {
        memcpy(g.run.cmd, cmd, len + 1);
        g.run.cmd_len = len;
    }
}

/* Removes folder path and the files in it (a spare that cannot be used). */
static void remove_folder(const char *path)
{
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    char buf[2048];
    long n;
    while (dfd >= 0 && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
        for (long at = 0; at < n;) {   /* struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name */
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            const char *name = buf + at + 19;
            if (strcmp(name, ".") && strcmp(name, ".."))
                unlinkat(dfd, name, 0);
            at += reclen ? reclen : n;
        }
    }
    if (dfd >= 0)
        close(dfd);
    rmdir(path);
}

/* Empties the spare folder dfd, just renamed to this run's dot name: its
 * files truncated (the run header is written over), any other file removed;
 * with warm, its states' slot 0 kept in memory instead (states_keep_warm).
 * Only when its lock is free (the process that ran in it has ended, and no
 * piano-db is storing it) and its fns takes an exclusive flock (no piano-db
 * is reading it live, no forked child is copying it: they hold it shared),
 * so that nobody has its files mapped (spool.h). Returns the lock's
 * descriptor, locked, or -1, with *held set when a lock was held (else the
 * spare cannot be used: a file missing or that cannot be emptied). */
static int empty_spare(int dfd, int warm, int *held)
{
    int lock = openat(dfd, PIANO_SPOOL_LOCK, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    int locked = lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0;
    *held = lock >= 0 && !locked && errno == EWOULDBLOCK;
    int fns = locked ? openat(dfd, PIANO_SPOOL_FNS, O_RDWR | O_NOFOLLOW | O_CLOEXEC) : -1;
    int fns_locked = fns >= 0 && flock(fns, LOCK_EX | LOCK_NB) == 0;
    if (fns >= 0 && !fns_locked)
        *held = errno == EWOULDBLOCK;
    int ok = fns_locked && ftruncate(fns, 0) == 0;
    char buf[2048];
    long n;
    while (ok && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
        for (long at = 0; ok && at < n;) {
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            const char *name = buf + at + 19;
            at += reclen ? reclen : n;
            if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, PIANO_SPOOL_LOCK) ||
                !strcmp(name, PIANO_SPOOL_FNS) || !strcmp(name, PIANO_SPOOL_RUN))
                continue;
            if (!strcmp(name, PIANO_SPOOL_STATES) || !strcmp(name, PIANO_SPOOL_ENDED)) {
                int states = !strcmp(name, PIANO_SPOOL_STATES);
                int fd = openat(dfd, name, (states ? O_RDWR : O_WRONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                /* states: its slot 0 kept warm for this run's first thread (slots.c) */
                ok = fd >= 0 && ((states && warm && states_keep_warm(fd) == 0) || ftruncate(fd, 0) == 0);
                if (fd >= 0)
                    close(fd);
            } else {
                ok = unlinkat(dfd, name, 0) == 0;   /* chunk files, snaps, chunks */
            }
        }
    }
    if (fns >= 0)
        close(fns);
    if (!ok && lock >= 0) {
        close(lock);
        lock = -1;
    }
    return lock;
}

/* Takes a spare run folder (spool.h) of spool root `root` under the name tmp
 * (this run's dot name), emptied (warm: empty_spare). Returns its lock, held (empty_spare), or
 * -1: none, or none that could be emptied (given back, or removed). */
static int take_spare(const char *root, const char *tmp, int warm)
{
    char spare[PIANO_PATH_MAX];
    for (unsigned i = 0; i < PIANO_SPARES_MAX; i++) {
        if (spool_path(spare, root, piano_spool_spare_name(i).s) != 0 ||
            renameat2(AT_FDCWD, spare, AT_FDCWD, tmp, RENAME_NOREPLACE) != 0)
            continue;   /* none of that name, or another start took it first */
        int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), held = 0;
        int lock = dfd >= 0 ? empty_spare(dfd, warm, &held) : -1;
        if (dfd >= 0)
            close(dfd);
        if (lock >= 0)
            return lock;
        /* Still held: given back for a later start; when that fails, or when
         * it cannot be used (a file missing: given back, it would cost every
         * later start two renames), removed. */
        if (!held || renameat2(AT_FDCWD, tmp, AT_FDCWD, spare, RENAME_NOREPLACE) != 0)
            remove_folder(tmp);
    }
    return -1;
}

/* Makes this run's spool folder: built under a dot name with its lock held,
 * its run header, fns and (empty) states files made, then renamed, so a recovering piano-db
 * never sees it half made. The lock is held through a mapping of the lock
 * file, not a descriptor: a program that closes every descriptor, or dup2s
 * onto one, cannot release it; exit and exec do (spool.h). The spool root
 * must be a folder of this user that nobody else can write. Returns 0, or -1
 * after one line on stderr. */
int make_spool(const char *parent_key)
{
    char root[PIANO_PATH_MAX], tmp[PIANO_PATH_MAX];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    memset(&g.run, 0, sizeof g.run);
    g.run.magic = PIANO_SPOOL_MAGIC;
    g.run.version = PIANO_SPOOL_VERSION;
    g.run.pid = (uint32_t)getpid();
    g.run.start_real_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
    snprintf(g.run.key, sizeof g.run.key, "%u-%llu", g.run.pid, (unsigned long long)g.run.start_real_ns);
    if (parent_key)
        snprintf(g.run.parent_key, sizeof g.run.parent_key, "%s", parent_key);
    g.run.clock = g.use_tsc ? PIANO_CLOCK_TSC : PIANO_CLOCK_MONO;
    g.run.heap = (uint32_t)g_heap_on;
    g.run.mono0 = mono_ns();
    g.run.tick0 = piano_now();
    g.run.cpu_mode = (uint32_t)g_cpu_mode;
    const char *keep = getenv("PIANO_KEEP_EMPTY");
    g.run.keep_empty = keep && *keep && strcmp(keep, "0") != 0;
    read_command(g.run.cmd, &g.run.cmd_len, sizeof g.run.cmd);
    run_selection(&g.run);

    char dot_key[sizeof g.run.key + 1];
    snprintf(dot_key, sizeof dot_key, ".%s", g.run.key);
    if (piano_spool_root(root, sizeof root, g.db_path) != 0 || spool_path(tmp, root, dot_key) != 0 ||
        spool_path(g.dir, root, g.run.key) != 0) {
        say("piano: the path of %s is too long; this run is not recorded", g.db_path);
        return -1;
    }
    char why[PIANO_WHY_MAX];
    if (piano_db_make_parent(g.db_path, why, sizeof why) != 0) {
        say("piano: %s; this run is not recorded", why);
        return -1;
    }
    if (mkdir(root, 0700) != 0 && errno != EEXIST) {
        say("piano: cannot create %s: %s; this run is not recorded", root, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(root, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
        say("piano: %s is not a folder of this user that only it can write; this run is not recorded", root);
        return -1;
    }
    say_log_root(st.st_dev, st.st_ino);
    /* A spare folder, emptied, or a new one. */
    /* A forked child's states are emptied whole (slots.c, warm slot 0). */
    states_warm_forget();
    int lock = take_spare(root, tmp, parent_key == NULL), spare = lock >= 0;
    g.took_spare = spare;
    if (!spare && mkdir(tmp, 0700) != 0) {
        say("piano: cannot create %s: %s; this run is not recorded", tmp, strerror(errno));
        return -1;
    }
    int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    /* A spare's files are there, empty (a missing one is made). */
    int excl = spare ? 0 : O_EXCL;
    if (!spare && dfd >= 0)
        lock = openat(dfd, PIANO_SPOOL_LOCK, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    void *map = MAP_FAILED;
    int ok = lock >= 0 && fstat(dfd, &st) == 0 && (spare || flock(lock, LOCK_EX) == 0) &&
             (map = mmap(NULL, PIANO_LOCK_MAP, PROT_READ, MAP_SHARED, lock, 0)) != MAP_FAILED;
    if (lock >= 0)
        close(lock);
    int fns = ok ? openat(dfd, PIANO_SPOOL_FNS, O_WRONLY | O_CREAT | excl | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    int states = fns >= 0 ? openat(dfd, PIANO_SPOOL_STATES, O_WRONLY | O_CREAT | excl | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    int run = states >= 0 ? openat(dfd, PIANO_SPOOL_RUN, O_RDWR | O_CREAT | excl | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    ok = run >= 0 && write_all(run, &g.run, sizeof g.run, 0) == 0 && rename(tmp, g.dir) == 0;
    int e = errno;
    /* Written above, its blocks exist: a write through the mapping cannot
     * meet a full disk. Without the mapping, the header is written by path. */
    void *run_map = ok ? mmap(NULL, sizeof g.run, PROT_READ | PROT_WRITE, MAP_SHARED, run, 0) : MAP_FAILED;
    if (fns >= 0)
        close(fns);
    if (states >= 0)
        close(states);
    if (run >= 0)
        close(run);
    if (dfd >= 0)
        close(dfd);
    if (!ok) {
        if (map != MAP_FAILED)
            munmap(map, PIANO_LOCK_MAP);
        say("piano: cannot prepare %s: %s; this run is not recorded", tmp, strerror(e));
        return -1;
    }
    g.dir_dev = st.st_dev;
    g.dir_ino = st.st_ino;
    g.lock_map = map;
    if (g.run_map)   /* a forked child's copy of its parent's */
        munmap(g.run_map, sizeof g.run);
    g.run_map = run_map == MAP_FAILED ? NULL : run_map;
    g.run_map_pid = g.run.pid;
    g.start_euid = geteuid();
    return 0;
}

void save_run_header(void)
{
    if (g.run_map && g.run_map_pid == (uint32_t)getpid()) {
        memcpy(g.run_map, &g.run, sizeof g.run);
        return;
    }
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_RUN, O_WRONLY | O_CREAT);
    if (fd >= 0) {
        write_all(fd, &g.run, sizeof g.run, 0);
        close(fd);
    }
    quiet_end(&q);
}
