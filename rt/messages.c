/*
 * messages.c - piano's own output: writes that raise no signal (quiet_begin,
 * quiet_end, write_all) and its one-line messages (say), on the standard
 * error piano started with, else in the spool root's log.
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

/* ---------------------------------------------------------------- quiet writes, messages */

static void pending_get(sigset_t *set)
{
    sigemptyset(set);
    syscall(SYS_rt_sigpending, set, _NSIG / 8);
}

void quiet_begin(struct quiet *q)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    sigaddset(&s, SIGXFSZ);
    mask_set(SIG_BLOCK, &s, &q->old);
    pending_get(&q->pending);
}

void quiet_end(struct quiet *q)
{
    static const int raised[] = { SIGPIPE, SIGXFSZ };
    sigset_t now;
    pending_get(&now);
    for (size_t i = 0; i < sizeof raised / sizeof raised[0]; i++) {
        if (!sigismember(&now, raised[i]) || sigismember(&q->pending, raised[i]))
            continue;
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, raised[i]);
        struct timespec zero = { 0, 0 };
        syscall(SYS_rt_sigtimedwait, &one, NULL, &zero, _NSIG / 8);
    }
    mask_set(SIG_SETMASK, &q->old, NULL);
}

/* The standard error that was open when piano started (its identity): a
 * daemon closes its standard descriptors and may open a file of its own at
 * number 2, which must never receive piano's messages. */
static struct {
    int open;
    dev_t dev;
    ino_t ino;
} say_err;
/* The spool root's identity (make_spool, through say_log_root): its log is
 * written only there. */
static dev_t spool_root_dev;
static ino_t spool_root_ino;
static int spool_root_known;

void say_log_root(dev_t dev, ino_t ino)
{
    spool_root_dev = dev;
    spool_root_ino = ino;
    spool_root_known = 1;
}

void say_init(void)
{
    struct stat st;
    say_err.open = fstat(2, &st) == 0;
    say_err.dev = say_err.open ? st.st_dev : 0;
    say_err.ino = say_err.open ? st.st_ino : 0;
}

/* Appends line (n bytes) to the spool root's log, <db>.spool/log, prefixed
 * with the process's id: when the standard error piano started with is gone.
 * Nothing when the root is not this run's (not made yet, or not the folder
 * it was: a chroot). */
static void log_line(const char *line, int n)
{
    char root[PIANO_PATH_MAX];
    if (!spool_root_known || piano_spool_root(root, sizeof root, g.db_path) != 0)
        return;
    int dfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (dfd < 0)
        return;
    if (fstat(dfd, &st) != 0 || st.st_dev != spool_root_dev || st.st_ino != spool_root_ino) {
        close(dfd);
        return;
    }
    int fd = openat(dfd, "log", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat fst;
    int mine = fd >= 0 && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode);
    if (fstat(dfd, &st) == 0 && st.st_dev == spool_root_dev && st.st_ino == spool_root_ino)
        close(dfd);
    if (!mine) {
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == fst.st_dev && st.st_ino == fst.st_ino)
            close(fd);
        return;
    }
    char head[32];
    int h = snprintf(head, sizeof head, "%u: ", (unsigned)getpid());
    struct iovec iov[2] = { { head, (size_t)h }, { (char *)line, (size_t)n } };
    if (fstat(fd, &st) == 0 && st.st_dev == fst.st_dev && st.st_ino == fst.st_ino) {
        ssize_t w = writev(fd, iov, 2);
        (void)w;
        close(fd);
    }
}

/* Prints one line on stderr, the first time only: whatever goes wrong, a
 * program run under piano gets at most one line from it. Only on the
 * standard error piano started with (say_init), checked by identity just
 * before: else the line goes to the spool's log (log_line). */
void say(const char *fmt, ...)
{
    static _Atomic int said;
    if (atomic_exchange(&said, 1))
        return;
    char line[PIANO_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    struct quiet q;
    quiet_begin(&q);
    int saved = errno;
    struct stat st;
    if (say_err.open && fstat(2, &st) == 0 && st.st_dev == say_err.dev && st.st_ino == say_err.ino) {
        ssize_t w = write(2, line, (size_t)n);
        (void)w;
    } else {
        log_line(line, n);
    }
    errno = saved;
    quiet_end(&q);
}

int write_all(int fd, const void *p, size_t n, off_t off)
{
    const char *c = p;
    while (n) {
        ssize_t w = pwrite(fd, c, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w, n -= (size_t)w, off += w;
    }
    return 0;
}
