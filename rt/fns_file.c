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
