/* summary.c - write and read PIANO_SUMMARY lines; see summary.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "summary.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

struct buf {
    char *p;
    size_t len, cap;
    int oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void put_field(struct buf *b, const char *s)
{
    put(b, "\t", 1);
    for (; s && *s; s++) {
        switch (*s) {
        case '\\': put(b, "\\\\", 2); break;
        case '\t': put(b, "\\t", 2); break;
        case '\n': put(b, "\\n", 2); break;
        case '\r': put(b, "\\r", 2); break;
        default: put(b, s, 1);
        }
    }
}

/* The functions of one list: the defining file made absolute when relative
 * (no debug info: the unit's own name as given to the compiler), so that two
 * "main.c" of two folders stay two files. Consecutive functions mostly share
 * a file. */
static void put_fns(struct buf *b, const struct piano_summary_fn *fns, size_t n)
{
    const char *last_in = NULL;
    char last_out[2 * PATH_MAX + 2] = "";
    for (size_t i = 0; i < n; i++) {
        const char *file = fns[i].file ? fns[i].file : "";
        if (file[0] && file[0] != '/') {
            if (!last_in || strcmp(last_in, file) != 0) {
                last_in = file;
                if (realpath(file, last_out) == NULL)
                    snprintf(last_out, sizeof last_out, "%s", file);
            }
            file = last_out;
        }
        put_field(b, fns[i].match);
        put_field(b, file);
        put_field(b, fns[i].display);
    }
}

int piano_summary_append(const char *path, const char *source, const char *spec,
                         unsigned min_size, const struct piano_summary_fn *fns,
                         size_t n, const struct piano_summary_fn *small,
                         size_t k)
{
    struct buf b = {0};
    char abs[2 * PATH_MAX + 2], cwd[PATH_MAX];
    char num[32];

    if (!source)
        source = "";
    if (realpath(source, abs) == NULL) {
        if (source[0] != '/' && getcwd(cwd, sizeof cwd))
            snprintf(abs, sizeof abs, "%s/%s", cwd, source);
        else
            snprintf(abs, sizeof abs, "%s", source);
    }
    put(&b, "P2", 2);
    put_field(&b, abs);
    put_field(&b, spec ? spec : "");
    snprintf(num, sizeof num, "%u", min_size);
    put_field(&b, num);
    snprintf(num, sizeof num, "%zu", n);
    put_field(&b, num);
    snprintf(num, sizeof num, "%zu", k);
    put_field(&b, num);
    put_fns(&b, fns, n);
    put_fns(&b, small, k);
    put(&b, "\n", 1);
    if (b.oom) {
        free(b.p);
        errno = ENOMEM;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(b.p);
        return -1;
    }
    int rc = 0;
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
        ;
    size_t off = 0;
    while (off < b.len) {
        ssize_t w = write(fd, b.p + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    int saved = errno;
    close(fd); /* releases the lock */
    free(b.p);
    errno = saved;
    return rc;
}

/* Unescape [s, e) in place into d; returns the end of the written text. */
static char *unescape(char *d, const char *s, const char *e)
{
    while (s < e) {
        if (*s == '\\' && s + 1 < e) {
            s++;
            *d++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
            s++;
        } else {
            *d++ = *s++;
        }
    }
    *d = '\0';
    return d;
}

int piano_summary_read(FILE *f, struct piano_summary_line *out)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    memset(out, 0, sizeof *out);
    if (len < 0) {
        free(line);
        return 0;
    }
    if (len > 0 && line[len - 1] == '\n')
        line[--len] = '\0';
    /* Split on tabs; escaped text never holds a raw tab. */
    size_t nf = 1;
    for (char *c = line; *c; c++)
        nf += *c == '\t';
    char **fields = calloc(nf, sizeof *fields);
    if (!fields) {
        free(line);
        return -1;
    }
    size_t k = 0;
    char *s = line;
    for (;;) {
        char *t = strchr(s, '\t');
        char *e = t ? t : s + strlen(s);
        fields[k++] = s;
        unescape(s, s, e); /* shrinks in place, never past e */
        if (!t)
            break;
        s = t + 1;
    }
    char *endp;
    unsigned long n = 0, nk = 0, min_size = 0;
    size_t first; /* index of the first function field */
    if (k >= 4 && strcmp(fields[0], "P1") == 0) {
        n = strtoul(fields[3], &endp, 10);
        if (*endp || fields[3][0] == '\0')
            goto bad;
        first = 4;
    } else if (k >= 6 && strcmp(fields[0], "P2") == 0) {
        min_size = strtoul(fields[3], &endp, 10);
        if (*endp || fields[3][0] == '\0')
            goto bad;
        n = strtoul(fields[4], &endp, 10);
        if (*endp || fields[4][0] == '\0')
            goto bad;
        nk = strtoul(fields[5], &endp, 10);
        if (*endp || fields[5][0] == '\0')
            goto bad;
        first = 6;
    } else {
        goto bad;
    }
    if (n > k || nk > k || k != first + 3 * ((size_t)n + (size_t)nk))
        goto bad;
    out->fns = calloc(n + nk ? n + nk : 1, sizeof *out->fns);
    if (!out->fns)
        goto bad;
    out->source = fields[1];
    out->spec = fields[2];
    out->min_size = (unsigned)min_size;
    out->n = n;
    out->n_small = nk;
    out->small = out->fns + n;
    for (size_t i = 0; i < n + nk; i++) {
        out->fns[i].match = fields[first + 3 * i];
        out->fns[i].file = fields[first + 1 + 3 * i];
        out->fns[i].display = fields[first + 2 + 3 * i];
    }
    out->storage_ = line;
    free(fields);
    return 1;
bad:
    free(fields);
    free(line);
    memset(out, 0, sizeof *out);
    return -1;
}

void piano_summary_line_free(struct piano_summary_line *l)
{
    free(l->fns);
    free(l->storage_);
    memset(l, 0, sizeof *l);
}
