/*
 * fns_file.c - the spool's fns file: a record appended per function
 * registered, in batches (a module's constructor registers all its functions
 * at once).
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

/* ---------------------------------------------------------------- the fns file */

/* Appends to this run's fns file. Opened for each append rather than kept
 * open: a program that closes descriptors it did not open, then reuses the
 * number, must never get piano's records in its own files. */
void append_fns(const void *buf, size_t n)
{
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_FNS, O_WRONLY | O_CREAT | O_APPEND);
    if (fd >= 0) {
        ssize_t w = write(fd, buf, n);
        (void)w;
        close(fd);
    }
    quiet_end(&q);
}
void batch_flush(struct fn_batch *b)
{
    if (b->used)
        append_fns(b->buf, b->used);
    b->used = 0;
}

/* The modules a program registers before its first call (its constructors,
 * jq's 24) write their records together, once: each append is 10 system
 * calls (the folder and the file opened anew, two fstats, SIGPIPE and SIGXFSZ
 * held), 240 of a short run's 837. A module's batch is kept, filled, as the
 * spare for the next one until the first call (a thread's state made:
 * state_new), a fork or the exit (fns_settle), whichever comes first; from
 * then on each module's batch is appended as its registration ends, before
 * any of its functions can run. Only a run's calls need the names (the import
 * stores those its rows name), so a run killed or exec'd before its first
 * call loses nothing it would store. Kept in memory (MAP_PRIVATE), never a
 * descriptor: the program may close or reuse any number. No lock: the first
 * call may be a signal handler's. */
static struct fn_batch *_Atomic spare_batch;
static _Atomic int fns_now;   /* 1: batches are appended as their registration ends */

struct fn_batch *batch_take(void)
{
    /* Not on the stack: a dlopen may run this on a thread with a small one.
     * One mapping serves module after module: a new one's first pages were
     * faults again, 20-40 us each on a VM (bench/README.md); a module
     * registering meanwhile on another thread maps its own. */
    struct fn_batch *b = atomic_exchange(&spare_batch, NULL);
    if (!b) {
        b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b == MAP_FAILED)
            b = NULL;   /* one append per function */
    }
    return b;
}

/* Gives back a batch as the spare, or unmaps it when another is the spare. */
static void batch_keep(struct fn_batch *b)
{
    struct fn_batch *none = NULL;
    if (!atomic_compare_exchange_strong(&spare_batch, &none, b)) {
        batch_flush(b);
        munmap(b, sizeof *b);
    }
}

void batch_done(struct fn_batch *b)
{
    if (!atomic_load(&fns_now)) {
        struct fn_batch *none = NULL;
        if (atomic_compare_exchange_strong(&spare_batch, &none, b)) {
            /* Kept with its records. A first call that set fns_now after our
             * load may have found no spare: then this settles it (seq_cst:
             * either it took the spare after us, or we see fns_now). */
            if (atomic_load(&fns_now))
                fns_settle();
            return;
        }
    }
    batch_flush(b);
    batch_keep(b);
}

void fns_settle(void)
{
    atomic_store(&fns_now, 1);
    struct fn_batch *b = atomic_exchange(&spare_batch, NULL);
    if (b) {
        batch_flush(b);
        batch_keep(b);
    }
}

int fns_settled(void)
{
    return atomic_load_explicit(&fns_now, memory_order_relaxed);
}

/* Records a function name in the fns file, now (b NULL: one append, atomic
 * for the reader) or with the batch's next flush. */
void write_fn_record(struct fn_batch *b, uint32_t id, uint32_t line, const char *name, const char *file)
{
    char one[sizeof(struct piano_spool_fn) + 2 * PIANO_FN_TEXT_MAX];
    struct piano_spool_fn r = { id, line, (uint32_t)strlen(name), (uint32_t)strlen(file) };
    if (r.name_len > PIANO_FN_TEXT_MAX)
        r.name_len = PIANO_FN_TEXT_MAX;
    if (r.file_len > PIANO_FN_TEXT_MAX)
        r.file_len = PIANO_FN_TEXT_MAX;
    size_t n = sizeof r + r.name_len + r.file_len;
    if (b && b->used + n > sizeof b->buf)
        batch_flush(b);
    char *buf = b ? b->buf + b->used : one;
    memcpy(buf, &r, sizeof r);
    memcpy(buf + sizeof r, name, r.name_len);
    memcpy(buf + sizeof r + r.name_len, file, r.file_len);
    if (b)
        b->used += n;
    else
        append_fns(buf, n);
}
