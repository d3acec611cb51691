/*
 * user.c - a program that changes its user keeps its run. A daemon started as
 * root drops to `nobody` (nginx's workers, sshd, postfix: setgid, initgroups,
 * setuid); from then on it can open nothing in root's spool folder (0700),
 * not even relative to a descriptor of the folder (each lookup checks the
 * folder's permissions against the new user). So, just before the program
 * calls setuid or one of its family, piano opens the run's files it writes
 * later and keeps them open: states (new threads' slots, frame buffers grown,
 * states held in memory written at the end), fns (functions of a library
 * loaded later), ended (short threads whose slots are reused), snaps
 * (PIANO_INTERVAL), and chunks, where full frame buffers are appended from
 * then on (a chunk file f<N>.<K> is a new name in the folder: it cannot be
 * made). The run stays root's: its files are root's, 0600, and root's
 * piano-db stores it (the process, now another user, cannot open root's
 * database at its exit, and leaves its spool for the next piano-db command:
 * finish.c).
 *
 * The descriptors are close-on-exec, numbered high (a program's own opens
 * get the low numbers they expect), and never trusted: each use takes a
 * duplicate and checks that it is still the file piano opened (its device
 * and inode), so a program that closed the number and opened a file of its
 * own in its place never gets piano's records. The snapshot thread has a
 * descriptor table of its own (snap.c own_table): it is started again once
 * they are opened, so that its table has them too. A child forked after the
 * change cannot make a spool folder of its own (it is not recorded, in one
 * line); a child forked before it, which changes its user itself (nginx's
 * workers), keeps its run the same way. setuid called through syscall()
 * directly is not seen: then the old line says what is lost.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/resource.h>
#include <sys/stat.h>

static struct held {
    const char *name;
    int flags;
    _Atomic int fd;   /* -1: none */
    dev_t dev;
    ino_t ino;
} held[] = {
    { PIANO_SPOOL_STATES, O_RDWR, -1, 0, 0 },
    { PIANO_SPOOL_FNS, O_RDWR | O_APPEND, -1, 0, 0 },
    { PIANO_SPOOL_ENDED, O_RDWR | O_APPEND | O_CREAT, -1, 0, 0 },
    { PIANO_SPOOL_SNAPS, O_RDWR | O_APPEND | O_CREAT, -1, 0, 0 },
    { PIANO_SPOOL_CHUNKS, O_RDWR | O_APPEND | O_CREAT, -1, 0, 0 },
};
#define HELD_N (sizeof held / sizeof held[0])
_Static_assert(HELD_N <= PIANO_HELD_MAX, "held_fds: PIANO_HELD_MAX too small");
static _Atomic int held_on;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

int held_active(void)
{
    return atomic_load_explicit(&held_on, memory_order_acquire);
}

/* The lowest number a kept descriptor takes: under the program's limit,
 * above what it uses (open takes the lowest free number). */
static int held_base(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur < 256)
        return 3;
    rlim_t top = r.rlim_cur > 65536 ? 65536 : r.rlim_cur;
    return (int)(top - 64);
}

/* A duplicate of h's descriptor when it is still the file piano opened;
 * -1 otherwise (the duplicate, piano's own, is closed). */
static int held_dup(struct held *h)
{
    int fd = atomic_load(&h->fd);
    if (fd < 0)
        return -1;
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    struct stat st;
    if (d >= 0 && (fstat(d, &st) != 0 || st.st_dev != h->dev || st.st_ino != h->ino)) {
        close(d);   /* the program's file now has that number: never written */
        return -1;
    }
    return d;
}

/* The run's files are opened and kept (by name, while this process may
 * still open them). Files the program closed or replaced since are opened
 * again. */
static void held_take(void)
{
    if (atomic_load(&g.state) != 2 || g.off || g.finished || g.run_map_pid != (uint32_t)getpid())
        return;
    int saved = errno, opened = 0;
    pthread_mutex_lock(&held_lock);
    int base = held_base();
    for (size_t i = 0; i < HELD_N; i++) {
        struct held *h = &held[i];
        int d = held_dup(h);
        if (d >= 0) {
            close(d);
            continue;   /* still ours */
        }
        if (!strcmp(h->name, PIANO_SPOOL_SNAPS) && !snap_active())
            continue;
        int fd = run_open(h->name, h->flags);
        if (fd < 0)
            continue;
        int high = fcntl(fd, F_DUPFD_CLOEXEC, base);
        struct stat st;
        if (high >= 0 && fstat(high, &st) == 0) {
            h->dev = st.st_dev;
            h->ino = st.st_ino;
            atomic_store(&h->fd, high);   /* the old number, if any, is the program's now */
            opened++;
        } else if (high >= 0) {
            close(high);
        }
        close(fd);
    }
    atomic_store_explicit(&held_on, 1, memory_order_release);
    pthread_mutex_unlock(&held_lock);
    if (opened)
        snap_restart();   /* the snapshot thread's own table (snap.c own_table) has them from now on */
    errno = saved;
}

/* The kept descriptors that are still the files piano opened (at most max,
 * into out): those the snapshot thread keeps in its own table. Returns how
 * many. */
int held_fds(int *out, int max)
{
    int n = 0;
    if (!held_active())
        return 0;
    for (size_t i = 0; i < HELD_N && n < max; i++) {
        int fd = atomic_load(&held[i].fd);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == held[i].dev && st.st_ino == held[i].ino)
            out[n++] = fd;
    }
    return n;
}

/* A descriptor of the run's file `name` (the caller closes it), when the
 * files are kept and that one still is; -1 otherwise. */
int held_open(const char *name)
{
    if (!held_active())
        return -1;
    for (size_t i = 0; i < HELD_N; i++)
        if (!strcmp(held[i].name, name))
            return held_dup(&held[i]);
    return -1;
}

/* Whether fd names the kept file `name` with the kept descriptor's flags
 * (a duplicate held_open returned). */
int held_is(int fd, const char *name)
{
    if (!held_active() || fd < 0)
        return 0;
    for (size_t i = 0; i < HELD_N; i++) {
        struct stat st;
        int fl;
        if (strcmp(held[i].name, name) || atomic_load(&held[i].fd) < 0)
            continue;
        return (fl = fcntl(fd, F_GETFL)) >= 0 &&
               (fl & (O_ACCMODE | O_APPEND)) == (held[i].flags & (O_ACCMODE | O_APPEND)) && fstat(fd, &st) == 0 &&
               st.st_dev == held[i].dev && st.st_ino == held[i].ino;
    }
    return 0;
}

/* A forked child: the kept files are its parent's run's. They are closed
 * (the child's own copies of piano's descriptors) and forgotten. */
void held_forget(void)
{
    if (!held_active())
        return;
    for (size_t i = 0; i < HELD_N; i++) {
        int fd = atomic_exchange(&held[i].fd, -1);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == held[i].dev && st.st_ino == held[i].ino)
            close(fd);
    }
    atomic_store(&held_on, 0);
    pthread_mutex_init(&held_lock, NULL);
}

/* ---------------------------------------------------------------- the interposers */

typedef int (*id1_fn)(unsigned);
typedef int (*id2_fn)(unsigned, unsigned);
typedef int (*id3_fn)(unsigned, unsigned, unsigned);

/* The C library's own function `name` (type t), looked up once. */
#define REAL(name, t)                                                                                        \
    static t real;                                                                                           \
    if (!real)                                                                                               \
        real = (t)piano_next_symbol(name);                                                                   \
    if (!real) {                                                                                             \
        errno = ENOSYS;                                                                                      \
        return -1;                                                                                           \
    }
PIANO_API int setuid(uid_t u)
{
    REAL("setuid", id1_fn);
    held_take();
    return real(u);
}

PIANO_API int seteuid(uid_t u)
{
    REAL("seteuid", id1_fn);
    held_take();
    return real(u);
}

PIANO_API int setreuid(uid_t r, uid_t e)
{
    REAL("setreuid", id2_fn);
    held_take();
    return real(r, e);
}

PIANO_API int setresuid(uid_t r, uid_t e, uid_t s)
{
    REAL("setresuid", id3_fn);
    held_take();
    return real(r, e, s);
}

PIANO_API int setgid(gid_t v)
{
    REAL("setgid", id1_fn);
    held_take();
    return real(v);
}

PIANO_API int setegid(gid_t v)
{
    REAL("setegid", id1_fn);
    held_take();
    return real(v);
}

PIANO_API int setregid(gid_t r, gid_t e)
{
    REAL("setregid", id2_fn);
    held_take();
    return real(r, e);
}

PIANO_API int setresgid(gid_t r, gid_t e, gid_t s)
{
    REAL("setresgid", id3_fn);
    held_take();
    return real(r, e, s);
}
