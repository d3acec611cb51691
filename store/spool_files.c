/*
 * spool_files.c - a spool's folders and files, opened as untrusted input
 * (import.h): regular files never through a symbolic link, folders only when
 * this user owns them and nobody else can write them; the run header; removing
 * a run folder.
 */
#define _GNU_SOURCE
#include "import_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Opens name in folder dfd for reading: a regular file, never through a
 * symbolic link, never blocking (a planted fifo). Returns the descriptor and
 * its size in *size, or -1 (errno: ELOOP for a link, EINVAL not a file). */
int spool_open_file_at(int dfd, const char *name, off_t *size)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    *size = st.st_size;
    return fd;
}

/* Maps at most max bytes of file name in dfd (MAP_SHARED, read-only). Returns
 * 0, or -1 (no such file, not a regular file, empty). */
int spool_map_at(int dfd, const char *name, size_t max, struct mapping *m)
{
    off_t size;
    int fd = spool_open_file_at(dfd, name, &size);
    if (fd < 0)
        return -1;
    size_t len = size > 0 && (uint64_t)size < max ? (size_t)size : size > 0 ? max : 0;
    void *p = len ? mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    int e = len ? errno : ENODATA;
    close(fd);
    if (p == MAP_FAILED) {
        errno = e;
        return -1;
    }
    m->p = p;
    m->len = len;
    return 0;
}

/* Maps len bytes of fd from off (a multiple of the page size; MAP_SHARED,
 * read-only). Returns 0, or -1 with errno set. */
int spool_map_range(int fd, uint64_t off, size_t len, struct mapping *m)
{
    void *p = len && off <= (uint64_t)INT64_MAX ? mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off) : MAP_FAILED;
    if (p == MAP_FAILED)
        return -1;
    m->p = p;
    m->len = len;
    return 0;
}

void spool_unmap(struct mapping *m)
{
    if (m->p)
        munmap(m->p, m->len);
    m->p = NULL;
}

/* Opens folder name in at (AT_FDCWD: a path) as piano's own: not through a
 * symbolic link, owned by this user, writable by nobody else. Returns the
 * descriptor, or -1 with a one-line reason in err (errno ENOENT when it does
 * not exist). */
int spool_open_own_dir(int at, const char *name, const char *shown, char *err, size_t errn)
{
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP || e == ENOTDIR)
            snprintf(err, errn, "%s is not a folder (a symbolic link, or a file): refused", shown);
        else
            snprintf(err, errn, "cannot open %s: %s", shown, strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errn, "cannot read %s: %s", shown, strerror(errno));
    } else if (st.st_uid != geteuid()) {
        snprintf(err, errn, "%s belongs to user %u, not to this user (%u): refused", shown, (unsigned)st.st_uid,
                 (unsigned)geteuid());
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errn, "%s is writable by other users (mode %03o): refused", shown,
                 (unsigned)(st.st_mode & 0777));
    } else {
        return fd;
    }
    close(fd);
    errno = EPERM;
    return -1;
}

#define LISTING_BUF (32u << 10)

/* Opens folder dfd for reading its entries from the first (its descriptor's
 * position is rewound: the listing reads through dfd itself, no dup, which
 * could fail at the descriptor limit). Returns 0, or -1 with errno set. */
int spool_listing_open(int dfd, struct spool_listing *l)
{
    l->fd = dfd;
    l->len = l->pos = 0;
    l->buf = NULL;
    if (lseek(dfd, 0, SEEK_SET) != 0)
        return -1;
    void *b = mmap(NULL, LISTING_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return -1;
    l->buf = b;
    return 0;
}

/* The name of the next entry ("." and ".." included), or NULL at the end or
 * when the folder cannot be read further. */
const char *spool_listing_next(struct spool_listing *l)
{
    if (!l->buf)
        return NULL;
    if (l->pos >= l->len) {
        long n = syscall(SYS_getdents64, l->fd, l->buf, LISTING_BUF);
        if (n <= 0)
            return NULL;
        l->len = (size_t)n;
        l->pos = 0;
    }
    /* struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name */
    const char *e = l->buf + l->pos;
    unsigned short reclen;
    memcpy(&reclen, e + 16, sizeof reclen);
    if (reclen < 20 || reclen > l->len - l->pos) {   /* not from a sane kernel: the end */
        l->len = l->pos = 0;
        return NULL;
    }
    l->pos += reclen;
    return e + 19;
}

void spool_listing_close(struct spool_listing *l)
{
    if (l->buf)
        munmap(l->buf, LISTING_BUF);
    l->buf = NULL;
}

/* Deletes the files of the spool folder dfd (not what is in its subfolders;
 * nothing is followed: unlinkat removes a link, not its target): the lock
 * last, then the run header, so that a piano-db looking at a folder being
 * removed sees it alive (locked) or with nothing but its lock left. */
void spool_remove_files_at(int dfd)
{
    struct spool_listing d;
    if (spool_listing_open(dfd, &d) != 0)
        return;
    const char *name;
    while ((name = spool_listing_next(&d)) != NULL)
        if (strcmp(name, ".") && strcmp(name, "..") && strcmp(name, PIANO_SPOOL_RUN) && strcmp(name, PIANO_SPOOL_LOCK))
            unlinkat(dfd, name, 0);
    spool_listing_close(&d);
    unlinkat(dfd, PIANO_SPOOL_RUN, 0);
    unlinkat(dfd, PIANO_SPOOL_LOCK, 0);
}

/* Whether name is one of the files a spare keeps (spool.h). */
static int spare_keeps(const char *name)
{
    return !strcmp(name, PIANO_SPOOL_LOCK) || !strcmp(name, PIANO_SPOOL_RUN) || !strcmp(name, PIANO_SPOOL_FNS) ||
           !strcmp(name, PIANO_SPOOL_STATES) || !strcmp(name, PIANO_SPOOL_ENDED);
}

/* Whether the states file fd (st: its stat) of a stored run's folder is kept
 * for the next run to find warm (spool.h): cut after slot 0, then at most
 * PIANO_SPARE_WARM_MAX bytes left (a short run's: its pages still in the page
 * cache, as the store just read them). */
static int states_kept_warm(int fd, struct stat *st)
{
    if ((uint64_t)st->st_size > PIANO_SLOT_SIZE && (ftruncate(fd, (off_t)PIANO_SLOT_SIZE) != 0 || fstat(fd, st) != 0))
        return 0;
    return (uint64_t)st->st_blocks * 512 <= PIANO_SPARE_WARM_MAX;
}

/* Renames run folder `name` (dfd) of spool root root_fd, stored, to a free
 * spare name (spool.h), then removes its other files (chunk files, snaps):
 * a spare holds no more than its five files. With `empty` (the run's
 * process has ended: a recovery), those are emptied too when fns can be
 * held alone (no reader maps them; a small states file is kept warm: above),
 * else left for the start that takes it;
 * the exit's own store leaves them (its other threads may still write their
 * states). Renamed first: a crash meanwhile leaves a spare, never a stored
 * run's folder that the next command would store again; no start takes it
 * before the caller lets its lock go (the exit's process, the recovery's
 * descriptor). Returns 0, or -1 when every spare name is taken (or the file
 * system cannot rename without replacing). */
static int spool_spare_at(int root_fd, int dfd, const char *name, int empty)
{
    unsigned i = 0;
    while (i < PIANO_SPARES_MAX && renameat2(root_fd, name, root_fd, piano_spool_spare_name(i).s, RENAME_NOREPLACE) != 0)
        i++;
    if (i == PIANO_SPARES_MAX)
        return -1;
    struct spool_listing d;
    if (spool_listing_open(dfd, &d) == 0) {
        const char *file;
        while ((file = spool_listing_next(&d)) != NULL)
            if (strcmp(file, ".") && strcmp(file, "..") && !spare_keeps(file))
                unlinkat(dfd, file, 0);
        spool_listing_close(&d);
    }
    int fns = empty ? openat(dfd, PIANO_SPOOL_FNS, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    if (fns >= 0 && flock(fns, LOCK_EX | LOCK_NB) == 0) {
        static const char *const emptied[] = { PIANO_SPOOL_STATES, PIANO_SPOOL_ENDED };
        for (size_t k = 0; k < sizeof emptied / sizeof *emptied; k++) {
            int fd = openat(dfd, emptied[k], O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            struct stat st;
            if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                !(!strcmp(emptied[k], PIANO_SPOOL_STATES) && states_kept_warm(fd, &st)))
                ftruncate(fd, 0);
            if (fd >= 0)
                close(fd);
        }
        struct stat st;
        if (fstat(fns, &st) == 0 && S_ISREG(st.st_mode))
            ftruncate(fns, 0);
    }
    if (fns >= 0)
        close(fns);
    return 0;
}

void spool_retire_at(int root_fd, int dfd, const char *name)
{
    if (spool_spare_at(root_fd, dfd, name, 1) == 0)
        return;
    spool_remove_files_at(dfd);
    unlinkat(root_fd, name, AT_REMOVEDIR);
}

void piano_spool_retire(const char *dir)
{
    char root[IMPORT_PATH_MAX];
    const char *slash = strrchr(dir, '/');
    int root_fd = -1, dfd = -1;
    if (slash && slash[1] && (size_t)snprintf(root, sizeof root, "%.*s", slash == dir ? 1 : (int)(slash - dir), dir) < sizeof root)
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root_fd >= 0)
        dfd = openat(root_fd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int spared = dfd >= 0 && spool_spare_at(root_fd, dfd, slash + 1, 0) == 0;
    if (dfd >= 0)
        close(dfd);
    if (root_fd >= 0)
        close(root_fd);
    if (!spared)
        piano_spool_remove(dir);
}

void piano_spool_remove(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return;
    /* Threads of a process storing its own run may still add chunk files. */
    for (int try = 0; try < 4; try++) {
        spool_remove_files_at(dfd);
        if (rmdir(dir) == 0 || errno != ENOTEMPTY)
            break;
    }
    close(dfd);
}

/* Reads the run header of spool folder dfd into *run. Returns 0; 1 when
 * there is none (errno ENOENT); -1 with a reason in err. */
int spool_read_run(int dfd, const char *shown, struct piano_spool_run *run, char *err, size_t errn)
{
    off_t size;
    int fd = spool_open_file_at(dfd, PIANO_SPOOL_RUN, &size);
    if (fd < 0 && errno == ENOENT)
        return 1;
    ssize_t got = fd >= 0 ? read(fd, run, sizeof *run) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof *run || run->magic != PIANO_SPOOL_MAGIC) {
        snprintf(err, errn, "%s/" PIANO_SPOOL_RUN " is not a piano run record", shown);
        return -1;
    }
    if (run->version != PIANO_SPOOL_VERSION) {
        snprintf(err, errn, "written by another version of piano (spool version %u, this one reads %u); "
                 "store it with that version or remove the folder", run->version, PIANO_SPOOL_VERSION);
        return -1;
    }
    run->key[sizeof run->key - 1] = 0;
    run->parent_key[sizeof run->parent_key - 1] = 0;
    run->cmd[sizeof run->cmd - 1] = 0;
    return 0;
}
