/*
 * import.c - turns a spool folder (spool.h) into one run in the database.
 *
 * Used by the runtime at exit for its own spool (other threads may still be
 * recording into it), and by piano-db for the spools of processes that died
 * before they could store theirs (written by anyone: a damaged or planted
 * spool). So nothing read from a spool is trusted: every count and link is
 * checked against its bound before use, a live frame buffer is copied under
 * its seqlock and only the copy is read, every walk is bounded, and files are
 * opened relative to a folder descriptor that was checked, never through a
 * symbolic link.
 *
 * Everything for one run goes in one transaction; a run key already present
 * means the spool was stored before (a crash between commit and clean-up),
 * so it is not stored twice.
 */
#define _GNU_SOURCE
#include "import.h"
#include "fns_blob.h"
#include "hist.h"
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* ---------------------------------------------------------------- files */

struct mapping {
    unsigned char *p;
    size_t len;
};

/* Opens name in folder dfd for reading: a regular file, never through a
 * symbolic link, never blocking (a planted fifo). Returns the descriptor and
 * its size in *size, or -1 (errno: ELOOP for a link, EINVAL not a file). */
static int open_file_at(int dfd, const char *name, off_t *size)
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
static int map_at(int dfd, const char *name, size_t max, struct mapping *m)
{
    off_t size;
    int fd = open_file_at(dfd, name, &size);
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

static void unmap(struct mapping *m)
{
    if (m->p)
        munmap(m->p, m->len);
    m->p = NULL;
}

/* Opens folder name in at (AT_FDCWD: a path) as piano's own: not through a
 * symbolic link, owned by this user, writable by nobody else. Returns the
 * descriptor, or -1 with a one-line reason in err (errno ENOENT when it does
 * not exist). */
static int open_own_dir(int at, const char *name, const char *shown, char *err, size_t errn)
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

/* Opens folder dfd for reading its entries from the first (a dup shares the
 * descriptor's position: rewound). Returns NULL when it cannot. */
static DIR *open_listing(int dfd)
{
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d && dup_fd >= 0)
        close(dup_fd);
    if (d)
        rewinddir(d);
    return d;
}

/* Deletes the files of the spool folder dfd (not what is in its subfolders;
 * nothing is followed: unlinkat removes a link, not its target): the lock
 * last, then the run header, so that a piano-db looking at a folder being
 * removed sees it alive (locked) or with nothing but its lock left. */
static void remove_files_at(int dfd)
{
    DIR *d = open_listing(dfd);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "run") &&
            strcmp(e->d_name, "lock"))
            unlinkat(dfd, e->d_name, 0);
    closedir(d);
    unlinkat(dfd, "run", 0);
    unlinkat(dfd, "lock", 0);
}

void piano_spool_remove(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return;
    /* Threads of a process storing its own run may still add chunk files. */
    for (int try = 0; try < 4; try++) {
        remove_files_at(dfd);
        if (rmdir(dir) == 0 || errno != ENOTEMPTY)
            break;
    }
    close(dfd);
}

/* ---------------------------------------------------------------- clock */

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return mono_ns();
#endif
}

/* The boot's id: the TSC rate measured once holds until the next boot. */
static int boot_id(char *out, size_t n)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, out, n - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return -1;
    out[got] = 0;
    return 0;
}

/* Nanoseconds per tick of the run's clock. The run's own span calibrates best;
 * when it is short (or the machine rebooted since), use the rate measured
 * before on this boot (kept in the spool root, root_fd, as "calibration";
 * root_fd -1: none), else measure 20 ms here: the invariant TSC has one rate
 * for the machine. */
static double calibrate(const struct piano_spool_run *run, int complete, int root_fd)
{
    if (run->clock == PIANO_CLOCK_MONO)
        return 1.0;
    uint64_t t1 = ticks(), m1 = mono_ns();
    if (complete && t1 > run->tick0 && m1 > run->mono0 + 20000000ull)
        return (double)(m1 - run->mono0) / (double)(t1 - run->tick0);
    char boot[64], line[160];
    int have_boot = root_fd >= 0 && boot_id(boot, sizeof boot) == 0;
    if (have_boot) {
        off_t size;
        int fd = open_file_at(root_fd, "calibration", &size);
        ssize_t got = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (got > 0) {
            line[got] = 0;
            char *sep = strchr(line, ' ');
            double npt = sep ? strtod(sep + 1, NULL) : 0;
            if (sep && (size_t)(sep - line) == strcspn(boot, "\n") &&
                strncmp(line, boot, (size_t)(sep - line)) == 0 && npt > 0 && npt < 1e3)
                return npt;
        }
    }
    uint64_t t0 = ticks(), m0 = mono_ns();
    do
        t1 = ticks(), m1 = mono_ns();
    while (m1 - m0 < 20000000ull);
    double npt = (double)(m1 - m0) / (double)(t1 - t0);
    if (have_boot) {
        boot[strcspn(boot, "\n")] = 0;
        int n = snprintf(line, sizeof line, "%s %.17g\n", boot, npt);
        char tmp[64];
        snprintf(tmp, sizeof tmp, ".calibration.%d", (int)getpid());
        unlinkat(root_fd, tmp, 0);   /* a leftover of a process that had this pid */
        int fd = openat(root_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            int ok = write(fd, line, (size_t)n) == n;
            close(fd);
            if (!ok || renameat(root_fd, tmp, root_fd, "calibration") != 0)
                unlinkat(root_fd, tmp, 0);
        }
    }
    return npt;
}

static int64_t to_ns(uint64_t t, double npt)
{
    double v = (double)t * npt;
    return v > 9.2e18 ? INT64_MAX : (int64_t)llround(v);
}

static int64_t since(uint64_t t, uint64_t t0, double npt)
{
    return t > t0 ? to_ns(t - t0, npt) : 0;
}

static sqlite3_int64 count64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

/* ---------------------------------------------------------------- the job */

/* A run of one thread's frame records, checked when found: a chunk file's, or
 * the copy of the buffer. A thread's records are in end order; the import
 * merges the threads' by end (insert_frames), so it never holds a frame list. */
struct frame_span {
    const unsigned char *p, *end;
    uint32_t thread;
};

/* One thread of the spool, as found in phase 1 (collect_thread). */
struct thread_in {
    uint32_t number;          /* N of t<N> / f<N>.*: the thread's number in the run */
    int has_state, has_hdr;   /* t<N> is whole; its header is readable */
    int live;                 /* a thread of this process that may still be recording */
    const struct piano_thread *mem;   /* its state in this process's memory, not in t<N> */
    struct piano_thread hdr;  /* a copy of the header, read once */
    const unsigned char *state;   /* t<N>, mapped (has_state) */
    int has_buf;              /* the buffer was copied: buf_seq is its chunk number */
    uint64_t buf_seq;
    unsigned char *buf;       /* the copy of f<N>.w's records */
    size_t buf_len;
};

/* A chunk file f<number>.<k>. */
struct chunk_name {
    uint32_t number;
    uint64_t k;
};

struct agg {
    uint64_t calls, self, total, allocs, alloc_bytes, frees, free_bytes, child_calls, unfinished;
    uint32_t inflight;        /* an in-flight call of it was seen below (import_inflight) */
};

/* An in-flight call's histogram samples. */
struct sample {
    uint32_t fn;
    uint16_t self, total;     /* buckets */
};

/* Everything one import holds; freed in one place. */
struct job {
    sqlite3 *db;
    int dfd;                  /* the run folder */
    const char *shown;        /* its name, for messages */
    const struct piano_spool_run *run;
    const struct piano_import_mem *mem;   /* states held in memory, or NULL */
    double npt;
    sqlite3_int64 run_id;
    sqlite3_stmt *fn_st, *thread_st, *ctx_st, *stats_st, *unf_st, *frame_st;
    struct mapping *maps;
    size_t n_maps, cap_maps;
    struct frame_span *spans;
    size_t n_spans, cap_spans;
    struct thread_in *threads;
    size_t n_threads, cap_threads;
    struct chunk_name *chunks;
    size_t n_chunks, cap_chunks;
    struct agg *agg;
    size_t agg_used;          /* agg[0..agg_used) may be non-zero */
    struct piano_node *nodes; /* the thread's nodes, copied and checked */
    uint64_t *node_total;
    struct sample *samples;
    size_t cap_samples;
    uint64_t *dense;          /* 2 x PIANO_HIST_BUCKETS counters, zero between uses */
    unsigned char *used;      /* bit per function id named by a stored row: only those are stored */
    unsigned char *blob;
    uint64_t frames_dropped, samples_dropped, calls_untimed, end_tick, end;
    /* The frame budget (runtime.c frame_keep): every frame counted, the run's
     * frame histogram, the final sample rate 2^sample_shift, the spike threshold. */
    uint64_t frames_all, frames_kept, spikes_unkept;
    uint32_t sample_shift;
    piano_hist *frame_hist;   /* the run's, summed over its threads */
    double spike_ns;          /* a frame longer is a spike (piano_frame_spike_ns) */
    uint64_t seen;            /* when the states of live threads were read: their calls ended before */
    int recorded;             /* a call, frame or allocation of this process's own */
    char note[1024];          /* what could not be read, for a warning; "" when all was */
};

/* Function fn is named by a row of this run. */
static inline void use_fn(struct job *j, uint64_t fn)
{
    if (fn < PIANO_FN_CAP)
        j->used[fn >> 3] |= (unsigned char)(1u << (fn & 7));
}

static void note(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct job *j, const char *fmt, ...)
{
    size_t at = strlen(j->note);
    if (at + 8 >= sizeof j->note)
        return;
    if (at)
        at += (size_t)snprintf(j->note + at, sizeof j->note - at, ", ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->note + at, sizeof j->note - at, fmt, ap);
    va_end(ap);
}

static int keep_map(struct job *j, struct mapping m)
{
    if (j->n_maps == j->cap_maps) {
        size_t cap = j->cap_maps ? j->cap_maps * 2 : 64;
        void *p = realloc(j->maps, cap * sizeof *j->maps);
        if (!p) {
            unmap(&m);
            return -1;
        }
        j->maps = p;
        j->cap_maps = cap;
    }
    j->maps[j->n_maps++] = m;
    return 0;
}

/* Appends *item (size bytes) to the array *v of *n items, *cap allocated. */
static int push(void *v, size_t *n, size_t *cap, const void *item, size_t size)
{
    void **pv = v;
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        void *q = realloc(*pv, c * size);
        if (!q)
            return -1;
        *pv = q;
        *cap = c;
    }
    memcpy((char *)*pv + *n * size, item, size);
    ++*n;
    return 0;
}

#define STEP(st) (sqlite3_step(st) == SQLITE_DONE ? (sqlite3_reset(st), 0) : (sqlite3_reset(st), -1))

/* ---------------------------------------------------------------- phase 1: find */

/* Parses a decimal number that is the whole of s (no sign, no spaces) and at
 * most max. Returns 0, or -1. */
static int parse_number(const char *s, const char *stop, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (s == stop)
        return -1;
    for (; s < stop; s++) {
        if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

/* Calls fn for every entry of folder dfd. Returns 0, or -1 (cannot read it). */
static int list_dir(int dfd, int (*fn)(struct job *, const char *), struct job *j)
{
    DIR *d = open_listing(dfd);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL)
        rc = fn(j, e->d_name);
    closedir(d);
    return rc;
}

static struct thread_in *find_thread(struct job *j, uint32_t number)
{
    size_t lo = 0, hi = j->n_threads;   /* sorted by number once the listing is done */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (j->threads[mid].number == number)
            return &j->threads[mid];
        if (j->threads[mid].number < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Listing 1: the threads, from t<N> and f<N>.w. */
static int see_thread(struct job *j, const char *name)
{
    uint64_t n;
    const char *end = name + strlen(name);
    if (name[0] == 't' && parse_number(name + 1, end, UINT32_MAX, &n) == 0) {
    } else if (name[0] == 'f' && end - name > 2 && !strcmp(end - 2, ".w") &&
               parse_number(name + 1, end - 2, UINT32_MAX, &n) == 0) {
    } else {
        return 0;
    }
    struct thread_in t = { .number = (uint32_t)n };
    return push(&j->threads, &j->n_threads, &j->cap_threads, &t, sizeof t);
}

static int by_thread_number(const void *a, const void *b)
{
    uint32_t x = ((const struct thread_in *)a)->number, y = ((const struct thread_in *)b)->number;
    return x < y ? -1 : x > y;
}

/* Copies the records of the frame buffer f<N>.w, which its thread may be
 * writing, by the seqlock protocol of spool.h: seq, used, the bytes, a fence,
 * seq again; equal seqs mean the copy holds whole records of chunk seq only. */
static void copy_records(struct thread_in *t, const struct piano_chunk_hdr *h, size_t room)
{
    t->buf = malloc(room ? room : 1);
    for (int try = 0; t->buf && try < 16; try++) {
        uint64_t seq = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
        uint64_t used = __atomic_load_n(&h->used, __ATOMIC_ACQUIRE);
        if (used > room)
            used = 0;   /* damaged: its chunk's records are not in it */
        memcpy(t->buf, (const unsigned char *)h + sizeof *h, (size_t)used);
        atomic_thread_fence(memory_order_acquire);
        if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) == seq) {
            t->has_buf = 1;
            t->buf_seq = seq;
            t->buf_len = (size_t)used;
            void *fit = used ? realloc(t->buf, (size_t)used) : NULL;   /* give back the rest */
            if (fit)
                t->buf = fit;
            break;
        }
    }
    if (!t->has_buf) {   /* stored again and again while we read: its chunk files hold the records */
        free(t->buf);
        t->buf = NULL;
    }
}

static void copy_buffer(struct job *j, struct thread_in *t)
{
    if (t->mem) {   /* an anonymous state's buffer is in memory too */
        if (t->mem->chunk)
            copy_records(t, (const struct piano_chunk_hdr *)t->mem->chunk,
                         PIANO_CHUNK_SIZE - sizeof(struct piano_chunk_hdr));
        return;
    }
    char name[32];
    snprintf(name, sizeof name, "f%u.w", t->number);
    struct mapping m = { 0 };
    if (map_at(j->dfd, name, PIANO_CHUNK_SIZE, &m) != 0)
        return;
    if (m.len < sizeof(struct piano_chunk_hdr)) {
        note(j, "%s is damaged (too short)", name);
        unmap(&m);
        return;
    }
    struct piano_chunk_hdr *h = (struct piano_chunk_hdr *)m.p;
    if (h->magic != PIANO_SPOOL_MAGIC) {
        if (h->magic)   /* 0: its thread was killed while making it */
            note(j, "%s is damaged (not a frame buffer)", name);
        unmap(&m);
        return;
    }
    copy_records(t, h, m.len - sizeof *h);
    unmap(&m);
}

/* Maps t<N> and copies its header; copies the frame buffer. */
static int collect_thread(struct job *j, struct thread_in *t)
{
    for (size_t i = 0; j->mem && i < j->mem->n; i++)
        if (j->mem->states[i]->thread == t->number)
            t->mem = j->mem->states[i];
    if (t->mem) {
        memcpy(&t->hdr, t->mem, sizeof t->hdr);
        t->has_hdr = t->has_state = 1;
        t->state = (const unsigned char *)t->mem;
        t->live = !t->hdr.dead && t->hdr.tid != (uint32_t)syscall(SYS_gettid);
        copy_buffer(j, t);
        return 0;
    }
    char name[32];
    snprintf(name, sizeof name, "t%u", t->number);
    struct mapping m = { 0 };
    if (map_at(j->dfd, name, PIANO_THREAD_FILE_SIZE, &m) == 0) {
        if (m.len >= sizeof t->hdr) {
            memcpy(&t->hdr, m.p, sizeof t->hdr);
            t->has_hdr = t->hdr.magic == PIANO_SPOOL_MAGIC && t->hdr.version == PIANO_SPOOL_VERSION;
        }
        if (!t->has_hdr && (m.len < sizeof t->hdr || t->hdr.magic))   /* magic 0: killed while making it */
            note(j, "%s is not a piano thread record (its figures are lost)", name);
        else if (m.len < PIANO_THREAD_FILE_SIZE)
            note(j, "%s is truncated (its calls are lost)", name);
        /* This process storing its own run: its other threads go on. */
        t->live = t->has_hdr && j->run->pid == (uint32_t)getpid() && !t->hdr.dead &&
                  t->hdr.tid != (uint32_t)syscall(SYS_gettid);
        if (t->has_hdr && m.len >= PIANO_THREAD_FILE_SIZE) {
            t->has_state = 1;
            t->state = m.p;
            if (keep_map(j, m))
                return -1;
        } else {
            unmap(&m);
        }
    } else if (errno == ELOOP || errno == EINVAL) {
        note(j, "%s is not a regular file (skipped)", name);
    } else if (errno == ENOENT) {
        note(j, "%s is missing (its calls are lost)", name);
    }
    copy_buffer(j, t);
    return 0;
}

/* Listing 2, after the buffers were copied: the chunk files. */
static int see_chunk(struct job *j, const char *name)
{
    uint64_t n, k;
    const char *dot = name[0] == 'f' ? strchr(name, '.') : NULL;
    if (!dot || parse_number(name + 1, dot, UINT32_MAX, &n) != 0 ||
        parse_number(dot + 1, name + strlen(name), UINT64_MAX, &k) != 0 || !find_thread(j, (uint32_t)n))
        return 0;
    struct chunk_name c = { (uint32_t)n, k };
    return push(&j->chunks, &j->n_chunks, &j->cap_chunks, &c, sizeof c);
}

static int by_chunk(const void *a, const void *b)
{
    const struct chunk_name *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* Adds the whole records of p[0..len) as a span of thread `thread` (coded from
 * tick 0: a buffer's first record is); what follows a malformed record is
 * named. Returns 0, or -1 (out of memory). */
static int add_records(struct job *j, const unsigned char *p, size_t len, uint32_t thread, const char *what)
{
    const unsigned char *at = p, *end = p + len;
    uint64_t base = 0, base_n = 0;
    while (at < end) {
        struct piano_frame_view f;
        const unsigned char *next = piano_frame_read(at, end, base, base_n, &f);
        if (!next) {
            note(j, "%s: %zu bytes after a malformed frame record are not read", what, (size_t)(end - at));
            break;
        }
        base = f.start + f.total;
        base_n = f.n;
        if (base > j->end_tick)
            j->end_tick = base;
        at = next;
    }
    if (at == p)
        return 0;
    j->recorded = 1;
    struct frame_span s = { p, at, thread };
    return push(&j->spans, &j->n_spans, &j->cap_spans, &s, sizeof s);
}

/* Adds chunk file f<number>.<k>'s records. Returns 1, 0 when it cannot be
 * read (named), or -1 (out of memory). */
static int add_chunk(struct job *j, uint32_t number, uint64_t k)
{
    char name[48];
    snprintf(name, sizeof name, "f%u.%llu", number, (unsigned long long)k);
    struct mapping c = { 0 };
    if (map_at(j->dfd, name, PIANO_CHUNK_SIZE, &c) != 0) {
        note(j, "%s is not a regular file (skipped)", name);
        return 0;
    }
    const struct piano_chunk_hdr *h = (const void *)c.p;
    uint64_t used;
    if (c.len < sizeof *h || h->magic != PIANO_SPOOL_MAGIC || (used = h->used) > c.len - sizeof *h) {
        note(j, "%s is damaged (not read)", name);
        unmap(&c);
        return 0;
    }
    if (keep_map(j, c))
        return -1;
    return add_records(j, c.p + sizeof *h, (size_t)used, number, name) ? -1 : 1;
}

/* The frames of every thread: every chunk file f<N>.<K> with K below the
 * buffer copy's seq S; then f<N>.<S> if it exists (the thread stored its
 * buffer but had not emptied it yet), else the copy. Chunks above S were
 * stored after the copy was made and hold no record before it. Without a
 * copy, every chunk file. */
static int collect_frames(struct job *j)
{
    if (list_dir(j->dfd, see_chunk, j))
        return -1;
    const struct chunk_name *v = j->chunks;
    size_t n = j->n_chunks, c = 0;
    if (n)
        qsort(j->chunks, n, sizeof *j->chunks, by_chunk);
    int rc = 0;
    for (size_t i = 0; i < j->n_threads && rc == 0; i++) {
        struct thread_in *t = &j->threads[i];
        int stored_s = 0;
        for (; c < n && v[c].number < t->number; c++)
            ;
        for (; c < n && v[c].number == t->number && rc == 0; c++) {
            uint64_t k = v[c].k;
            if (t->has_buf && k > t->buf_seq)
                continue;
            int r = add_chunk(j, t->number, k);
            stored_s |= t->has_buf && k == t->buf_seq && r == 1;
            rc = r < 0 ? -1 : 0;
        }
        if (rc == 0 && t->has_buf && !stored_s && t->buf_len) {
            char what[32];
            snprintf(what, sizeof what, "f%u.w", t->number);
            rc = add_records(j, t->buf, t->buf_len, t->number, what);
        }
    }
    return rc;
}

/* The latest tick the thread is known to have been alive at: its last frame
 * end or exit, the entry of a call in flight, or the end of its last call
 * (kept in the slot above the top, runtime.c). */
static void thread_last_tick(struct job *j, const struct thread_in *t)
{
    if (!t->has_state)
        return;
    uint64_t last = t->hdr.last_tick;
    uint32_t depth = piano_depth(t->hdr.depth);
    const struct piano_slot *stack = (const void *)(t->state + PIANO_OFF_STACK);
    for (uint32_t i = 1; i <= depth + (depth < PIANO_STACK_CAP); i++) {
        uint64_t t0 = __atomic_load_n(&stack[i].t0, __ATOMIC_RELAXED);
        if (t0 > last)
            last = t0;
    }
    if (last > j->end_tick)
        j->end_tick = last;
}

/* ---------------------------------------------------------------- phase 2: store */

/* Counts the calls in flight at the end (slots 1..depth of the shadow stack)
 * as calls: each timed to the end, its self time what is left after its
 * finished children and its in-flight child; added to its context (when the
 * slot's context is one of the thread's) before the inclusive times are
 * summed, listed in unfinished, and sampled into j->samples. Returns the
 * number of samples, or -1 on a database error. */
static long import_inflight(struct job *j, const struct thread_in *t, uint32_t n_nodes, int orphans,
                            uint32_t *max_fn)
{
    const struct piano_slot *stack = (const void *)(t->state + PIANO_OFF_STACK);
    uint32_t depth = piano_depth(t->hdr.depth);
    if (!depth)
        return 0;
    if (depth > j->cap_samples) {
        void *p = realloc(j->samples, depth * sizeof *j->samples);
        if (!p)
            return -1;
        j->samples = p;
        j->cap_samples = depth;
    }
    /* A forked child starts with the calls its parent was in, all at the
     * fork's tick and with no finished child: those are not its own. */
    int inherited = j->run->parent_key[0] && t->number == 0;
    long n = 0;
    struct piano_slot cur, next = { 0 };
    memcpy(&cur, &stack[1], sizeof cur);
    uint64_t first_t0 = cur.t0;
    for (uint32_t i = 1; i <= depth; i++) {
        if (cur.t0 > j->end)
            break;   /* entered after the end (a thread going on while the run is stored): not in this run */
        if (i < depth)
            memcpy(&next, &stack[i + 1], sizeof next);
        inherited &= j->run->fork_tick ? cur.t0 <= j->run->fork_tick : cur.t0 == first_t0 && cur.child == 0;
        uint64_t total = j->end > cur.t0 ? j->end - cur.t0 : 0;
        uint64_t above = i < depth && j->end > next.t0 ? j->end - next.t0 : 0;
        uint64_t self = total > cur.child ? total - cur.child : 0;
        self = self > above ? self - above : 0;
        uint32_t fn = cur.fn, node = cur.node;
        if (fn && fn < PIANO_FN_CAP) {
            struct agg *a = &j->agg[fn];
            if (fn > *max_fn)
                *max_fn = fn;
            int in_tree = node && node < n_nodes && j->nodes[node].fn == fn;
            int orphan = orphans && node >= PIANO_NODE_CAP && node < PIANO_NODES_TOTAL && j->nodes[node].fn == fn;
            if (in_tree || orphan) {
                j->nodes[node].calls++;
                j->nodes[node].self += self;
            } else {   /* no context: the function's own figures */
                a->calls++;
                a->self += self;
                if (!a->inflight)
                    a->total += total;
            }
            a->inflight = 1;
            a->unfinished++;
            j->samples[n++] = (struct sample){ fn, (uint16_t)piano_hist_bucket(self),
                                               (uint16_t)piano_hist_bucket(total) };
            sqlite3_stmt *st = j->unf_st;
            use_fn(j, fn);
            sqlite3_bind_int64(st, 1, j->run_id);
            sqlite3_bind_int64(st, 2, t->number);
            sqlite3_bind_int64(st, 3, i);
            sqlite3_bind_int64(st, 4, fn);
            sqlite3_bind_int64(st, 5, since(cur.t0, j->run->tick0, j->npt));
            sqlite3_bind_int64(st, 6, since(j->end, cur.t0, j->npt));
            if (STEP(st))
                return -1;
        }
        cur = next;
    }
    if (n && !inherited)
        j->recorded = 1;
    return n;
}

static int by_sample_fn(const void *a, const void *b)
{
    uint32_t x = ((const struct sample *)a)->fn, y = ((const struct sample *)b)->fn;
    return x < y ? -1 : x > y;
}

/* Encodes function fn's histogram k (0 self, 1 total) into j->blob: its pages,
 * plus the extra samples (the pending one, those of its calls in flight).
 * Returns the blob's length. */
static size_t encode_hist(struct job *j, const struct thread_in *t, uint32_t fn, int k, const struct sample *ex,
                          size_t n_ex, uint32_t n_pages)
{
    const struct piano_fnrec *fns = (const void *)(t->state + PIANO_OFF_FNS);
    const uint64_t *pages = (const void *)(t->state + PIANO_OFF_PAGES);
    uint64_t *dense = j->dense + (size_t)k * PIANO_HIST_BUCKETS, extra_octaves = 0;
    for (size_t i = 0; i < n_ex; i++) {
        unsigned b = k ? ex[i].total : ex[i].self;
        dense[b]++;
        extra_octaves |= 1ull << (b >> 6);
    }
    if (t->hdr.pend_fn == fn) {   /* the thread's latest call is not in the pages yet (runtime.c) */
        unsigned b = piano_hist_bucket(k ? t->hdr.pend_total : t->hdr.pend_self);
        dense[b]++;
        extra_octaves |= 1ull << (b >> 6);
    }
    size_t len = 0;
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++) {
        uint32_t p = __atomic_load_n(&fns[fn].page[o], __ATOMIC_RELAXED);
        int has_page = p && p < n_pages, has_extra = (extra_octaves >> o) & 1;
        if (!has_page && !has_extra)
            continue;
        uint64_t counts[64];
        for (unsigned b = 0; b < 64; b++)
            counts[b] = (has_page ? pages[(size_t)p * PIANO_PAGE_WORDS + b * 2 + (unsigned)k] : 0) +
                        dense[o * 64 + b];
        if (has_extra)
            memset(dense + o * 64, 0, 64 * sizeof *dense);
        len += piano_hist_encode(counts, o * 64, 64, j->blob + len);
    }
    return len;
}

/* Stores the contexts, per-function stats and calls in flight of a thread
 * whose state file is whole. Returns 0, or -1 on a database error. */
static int import_state(struct job *j, const struct thread_in *t)
{
    const struct piano_thread *h = &t->hdr;
    uint32_t n_nodes = h->n_nodes < PIANO_NODE_CAP ? h->n_nodes : PIANO_NODE_CAP;
    int orphans = h->contexts_truncated != 0;
    struct piano_node *nodes = j->nodes;
    const struct piano_node *live = (const void *)(t->state + PIANO_OFF_NODES);
    /* A copy, checked: a parent precedes its child (else the node is taken
     * as a root), so every walk up the tree ends. */
    memcpy(nodes, live, (size_t)n_nodes * sizeof *nodes);
    if (t->live) {   /* the calls in this copy ended before now: the run lasts at least until then */
        uint64_t now = j->run->clock == PIANO_CLOCK_MONO ? mono_ns() : ticks();
        if (now > j->seen)
            j->seen = now;
    }
    if (n_nodes)
        nodes[0].parent = nodes[0].fn = 0;
    uint32_t bad = 0;
    for (uint32_t i = 1; i < n_nodes; i++) {
        bad += nodes[i].parent >= i || nodes[i].fn >= PIANO_FN_CAP;
        if (nodes[i].parent >= i)
            nodes[i].parent = 0;
        if (nodes[i].fn >= PIANO_FN_CAP)
            nodes[i].fn = 0;
    }
    /* (a live thread adds nodes, never changes one: this is damage) */
    if (bad)
        note(j, "t%u: %u damaged context%s (parent or function out of range)", t->number, bad, bad == 1 ? "" : "s");
    if (orphans)
        for (uint32_t i = PIANO_NODE_CAP; i < PIANO_NODES_TOTAL; i++) {
            memcpy(&nodes[i], &live[i], sizeof *nodes);
            if (nodes[i].fn != i - PIANO_NODE_CAP)
                nodes[i].fn = 0;
        }
    /* Something of its own (see import_inflight for the calls in flight). */
    j->recorded |= h->allocs || h->frees;
    for (uint32_t i = 1; i < n_nodes && !j->recorded; i++)
        j->recorded = nodes[i].calls || nodes[i].allocs || nodes[i].frees;
    for (uint32_t i = PIANO_NODE_CAP; orphans && i < PIANO_NODES_TOTAL && !j->recorded; i++)
        j->recorded = nodes[i].calls || nodes[i].allocs || nodes[i].frees;

    /* Zero what the previous thread used (calloc zeroed the rest). */
    memset(j->agg, 0, j->agg_used * sizeof *j->agg);
    uint32_t max_fn = 0;
    long n_samples = import_inflight(j, t, n_nodes, orphans, &max_fn);
    if (n_samples < 0)
        return -1;

    /* A context's inclusive time is its self time plus its children's. Summed
     * here rather than on the per-call path, and right even for the context
     * shared by calls deeper than PIANO_CTX_DEPTH, which nests in itself. A
     * child comes after its parent, so one backward pass does it. */
    for (uint32_t i = 0; i < n_nodes; i++)
        j->node_total[i] = nodes[i].self;
    for (uint32_t i = n_nodes; i-- > 1;)
        j->node_total[nodes[i].parent] += j->node_total[i];
    for (uint32_t pass = 0; pass < 2; pass++) {
        uint32_t lo = pass ? PIANO_NODE_CAP : 1, hi = pass ? PIANO_NODES_TOTAL : n_nodes;
        if (pass && !orphans)
            break;
        for (uint32_t i = lo; i < hi; i++) {
            const struct piano_node *n = &nodes[i];
            if (!n->fn)
                continue;
            struct agg *a = &j->agg[n->fn];
            a->calls += n->calls, a->self += n->self, a->allocs += n->allocs;
            a->alloc_bytes += n->alloc_bytes, a->frees += n->frees, a->free_bytes += n->free_bytes;
            if (n->fn > max_fn)
                max_fn = n->fn;
            if (!pass && n->parent)
                j->agg[nodes[n->parent].fn].child_calls += n->calls;
            /* A function's inclusive time: its contexts with no ancestor of
             * the same function (a recursive call counts once, outermost).
             * Parents precede their children, so the walk up ends. */
            if (pass) {
                a->total += n->self;   /* an orphan context: no tree above it */
            } else {
                uint32_t up = n->parent;
                while (up && nodes[up].fn != n->fn)
                    up = nodes[up].parent;
                if (!up)
                    a->total += j->node_total[i];
            }
            sqlite3_stmt *st = j->ctx_st;
            use_fn(j, n->fn);
            sqlite3_bind_int64(st, 1, j->run_id);
            sqlite3_bind_int64(st, 2, t->number);
            sqlite3_bind_int64(st, 3, i);
            if (n->parent && !pass)
                sqlite3_bind_int64(st, 4, n->parent);
            else
                sqlite3_bind_null(st, 4);
            sqlite3_bind_int64(st, 5, n->fn);
            sqlite3_bind_int64(st, 6, count64(n->calls));
            sqlite3_bind_int64(st, 7, to_ns(n->self, j->npt));
            sqlite3_bind_int64(st, 8, to_ns(pass ? n->self : j->node_total[i], j->npt));
            sqlite3_bind_int64(st, 9, count64(n->allocs));
            sqlite3_bind_int64(st, 10, count64(n->alloc_bytes));
            sqlite3_bind_int64(st, 11, count64(n->frees));
            sqlite3_bind_int64(st, 12, count64(n->free_bytes));
            if (STEP(st))
                return -1;
        }
    }
    j->agg_used = (size_t)max_fn + 1;
    uint32_t n_pages = h->n_pages < PIANO_PAGE_CAP ? h->n_pages : PIANO_PAGE_CAP;
    if (n_samples)
        qsort(j->samples, (size_t)n_samples, sizeof *j->samples, by_sample_fn);
    size_t s = 0;
    for (uint32_t fn = 1; fn <= max_fn; fn++) {
        const struct agg *a = &j->agg[fn];
        size_t s0 = s;
        for (; s < (size_t)n_samples && j->samples[s].fn == fn; s++)
            ;
        if (!a->calls && !a->allocs && !a->frees)
            continue;
        sqlite3_stmt *st = j->stats_st;
        use_fn(j, fn);
        sqlite3_bind_int64(st, 1, j->run_id);
        sqlite3_bind_int64(st, 2, t->number);
        sqlite3_bind_int64(st, 3, fn);
        sqlite3_bind_int64(st, 4, count64(a->calls));
        sqlite3_bind_int64(st, 5, to_ns(a->self, j->npt));
        sqlite3_bind_int64(st, 6, to_ns(a->total > a->self ? a->total : a->self, j->npt));
        sqlite3_bind_int64(st, 7, count64(a->allocs));
        sqlite3_bind_int64(st, 8, count64(a->alloc_bytes));
        sqlite3_bind_int64(st, 9, count64(a->frees));
        sqlite3_bind_int64(st, 10, count64(a->free_bytes));
        for (int k = 0; k < 2; k++) {
            size_t len = encode_hist(j, t, fn, k, s > s0 ? j->samples + s0 : NULL, s - s0, n_pages);
            sqlite3_bind_blob(st, 11 + k, j->blob, (int)len, SQLITE_TRANSIENT);
        }
        sqlite3_bind_int64(st, 13, count64(a->child_calls));
        sqlite3_bind_int64(st, 14, count64(a->unfinished));
        if (STEP(st))
            return -1;
    }
    j->frames_dropped += h->frames_dropped;
    j->samples_dropped += h->hist_dropped;
    j->calls_untimed += h->deep_calls;
    return 0;
}

static int import_functions(struct job *j)
{
    struct mapping m = { 0 };
    if (map_at(j->dfd, "fns", (size_t)1 << 30, &m) != 0)
        return 0;
    size_t at = 0;
    while (at + sizeof(struct piano_spool_fn) <= m.len) {
        struct piano_spool_fn r;
        memcpy(&r, m.p + at, sizeof r);
        if (r.name_len > 4000 || r.file_len > 4000)
            break;
        size_t size = sizeof r + r.name_len + r.file_len;
        if (at + size > m.len)
            break;
        const char *name = (const char *)m.p + at + sizeof r;
        at += size;
        /* Only what the run's rows name: a program registers every function
         * it has, and most short runs call few (issue 15: 207 KB of names for
         * a 5 ms process). */
        if (r.id >= PIANO_FN_CAP || !(j->used[r.id >> 3] >> (r.id & 7) & 1))
            continue;
        sqlite3_bind_int64(j->fn_st, 1, j->run_id);
        sqlite3_bind_int64(j->fn_st, 2, r.id);
        sqlite3_bind_text(j->fn_st, 3, name, (int)r.name_len, SQLITE_TRANSIENT);
        sqlite3_bind_text(j->fn_st, 4, name + r.name_len, (int)r.file_len, SQLITE_TRANSIENT);
        sqlite3_bind_int64(j->fn_st, 5, r.line);
        if (STEP(j->fn_st)) {
            unmap(&m);
            return -1;
        }
    }
    unmap(&m);
    return 0;
}

/* Binds frame f (number seq in end order, of thread `thread`, in a span
 * ending at end) to the FRAME_NCOL parameters of st from col. Its fns blob is made at
 * j->blob + *at and bound without a copy (it stays there until the statement
 * has run); *at moves past it. */
static void bind_frame(struct job *j, sqlite3_stmt *st, int col, const struct piano_frame_view *f,
                       const unsigned char *end, uint32_t thread, uint64_t seq, size_t *at)
{
    const unsigned char *p = f->fns;
    unsigned char *blob = j->blob + *at;
    size_t len = 0;
    uint32_t fn = 0;
    for (uint32_t k = 0; k < f->nfns; k++) {
        uint64_t ticks = 0;
        if (!(p = piano_frame_fn(p, end, &fn, &ticks)))
            break;   /* checked when found: the bytes changed since (not piano's) */
        len += piano_fns_put(blob + len, fn, (uint64_t)to_ns(ticks, j->npt));
        use_fn(j, fn);
    }
    sqlite3_bind_int64(st, col, j->run_id);
    sqlite3_bind_int64(st, col + 1, (sqlite3_int64)seq);
    sqlite3_bind_int64(st, col + 2, thread);
    /* Both ends rounded alike: a frame ending at the end of the run ends within it. */
    int64_t start = since(f->start, j->run->tick0, j->npt), stop = since(f->start + f->total, j->run->tick0, j->npt);
    int64_t total = stop > start ? stop - start : 0;
    sqlite3_bind_int64(st, col + 3, start);
    sqlite3_bind_int64(st, col + 4, total);
    sqlite3_bind_int64(st, col + 5, count64(f->allocs));
    sqlite3_bind_int64(st, col + 6, count64(f->alloc_bytes));
    sqlite3_bind_int64(st, col + 7, count64(f->frees));
    sqlite3_bind_int64(st, col + 8, count64(f->free_bytes));
    sqlite3_bind_blob(st, col + 9, blob, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(st, col + 10, count64(f->n));
    sqlite3_bind_int(st, col + 11, (double)total > j->spike_ns);
    *at += len;
}

/* Frames go in FRAME_BATCH rows per statement: per-row statement overhead is
 * most of the cost of storing a run with many frames. */
#define FRAME_BATCH 64
/* j->blob's size: a batch's fns blobs, or one frame's (at most PIANO_FN_CAP
 * functions, PIANO_FNS_ENTRY_MAX bytes each), or one histogram's records. */
#define FRAME_BLOB_SIZE ((size_t)PIANO_CHUNK_SIZE)
#define FRAME_COLUMNS "run,seq,thread,start_ns,total_ns,allocs,alloc_bytes,frees,free_bytes,fns,thread_seq,spike"
#define FRAME_PARAMS "(?,?,?,?,?,?,?,?,?,?,?,?)"
#define FRAME_NCOL 12

/* One thread's frames, read in order across its spans. */
struct frame_cursor {
    const struct frame_span *span, *last;   /* the current span; one past the thread's last */
    const unsigned char *p, *next;          /* the current record; the one after it */
    uint64_t base, end;                     /* the tick p's start is coded from; p's end */
    uint64_t base_n;                        /* the frame number p's is coded from */
    struct piano_frame_view f;
};

/* Reads the record at c->p, going on to the thread's next span at the end of
 * one (or at a record that no longer reads: a chunk file is mapped, and
 * something other than piano may have changed it since it was checked).
 * Returns 0 when the thread has no more frames. */
static int cursor_read(struct frame_cursor *c)
{
    for (;;) {
        if (c->p < c->span->end && (c->next = piano_frame_read(c->p, c->span->end, c->base, c->base_n, &c->f))) {
            c->end = c->f.start + c->f.total;
            return 1;
        }
        if (++c->span == c->last)
            return 0;
        c->p = c->span->p;
        c->base = 0;   /* each span is one buffer's records: coded from tick 0 */
        c->base_n = 0;
    }
}

static int cursor_before(const struct frame_cursor *a, const struct frame_cursor *b)
{
    return a->end != b->end ? a->end < b->end : a->span->thread < b->span->thread;
}

static void heap_down(struct frame_cursor **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && cursor_before(h[l], h[m]))
            m = l;
        if (l + 1 < n && cursor_before(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        struct frame_cursor *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Inserts every frame, numbered in end order (ties: by thread), merging the
 * threads' frames, each already in end order, through a heap of cursors. */
/* Whether the import keeps record f: a sample record only when its number
 * is a multiple of the final K (the sample is then a uniform 1 in K). */
static int frame_kept(const struct job *j, const struct piano_frame_view *f)
{
    return f->kept != PIANO_KEPT_SAMPLE || (f->n & ((1ull << j->sample_shift) - 1)) == 0;
}

/* dry: counts them instead (into j->frames_kept), for a run stored without its frames. */
static int insert_frames(struct job *j, int dry)
{
    if (!j->n_spans)
        return 0;
    struct frame_cursor *cur = calloc(j->n_spans, sizeof *cur);
    struct frame_cursor **heap = calloc(j->n_spans, sizeof *heap);
    sqlite3_stmt *batch = NULL;
    int rc = -1;
    if (!cur || !heap)
        goto out;
    size_t n = 0;
    for (size_t i = 0, k; i < j->n_spans; i = k) {   /* a thread's spans are adjacent */
        for (k = i + 1; k < j->n_spans && j->spans[k].thread == j->spans[i].thread; k++)
            ;
        struct frame_cursor *c = &cur[n];
        *c = (struct frame_cursor){ .span = &j->spans[i], .last = &j->spans[k], .p = j->spans[i].p };
        if (cursor_read(c))
            heap[n++] = c;
    }
    for (size_t i = n / 2; i-- > 0;)
        heap_down(heap, n, i);

    char sql[FRAME_BATCH * 28 + 160];
    int len = snprintf(sql, sizeof sql, "INSERT INTO frames(" FRAME_COLUMNS ") VALUES");
    for (int k = 0; k < FRAME_BATCH; k++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, "%s" FRAME_PARAMS, k ? "," : "");
    if (sqlite3_prepare_v2(j->db, sql, -1, &batch, NULL) != SQLITE_OK)
        goto out;
    struct pending {
        struct piano_frame_view f;
        const unsigned char *end;
        uint32_t thread;
    } pend[FRAME_BATCH];
    uint64_t seq = 0;
    while (n) {
        int got = 0;
        size_t need = 0;
        while (got < FRAME_BATCH && n) {
            struct frame_cursor *c = heap[0];
            if (frame_kept(j, &c->f)) {
                pend[got++] = (struct pending){ c->f, c->span->end, c->span->thread };
                need += (size_t)PIANO_FNS_ENTRY_MAX * c->f.nfns;
            }
            c->base = c->end;
            c->base_n = c->f.n;
            c->p = c->next;
            if (!cursor_read(c))
                heap[0] = heap[--n];
            heap_down(heap, n, 0);
        }
        if (dry) {
            seq += (uint64_t)got;
            continue;
        }
        if (got == FRAME_BATCH && need <= FRAME_BLOB_SIZE) {
            size_t at = 0;
            for (int k = 0; k < got; k++)
                bind_frame(j, batch, 1 + FRAME_NCOL * k, &pend[k].f, pend[k].end, pend[k].thread, ++seq, &at);
            if (STEP(batch))
                goto out;
        } else {   /* the last frames, or rows of many functions: one statement each */
            for (int k = 0; k < got; k++) {
                size_t at = 0;
                bind_frame(j, j->frame_st, 1, &pend[k].f, pend[k].end, pend[k].thread, ++seq, &at);
                if (STEP(j->frame_st))
                    goto out;
            }
        }
    }
    rc = 0;
    j->frames_kept = seq;
out:
    sqlite3_finalize(batch);
    free(cur);
    free(heap);
    return rc;
}

/* Thread t's frame histogram: encoded into j->blob (returns its length) and
 * added to the run's. Its count and sample rate go to the run's too. */
static size_t thread_frames(struct job *j, const struct thread_in *t)
{
    if (!t->has_hdr)
        return 0;
    j->frames_all += t->hdr.frames_all;
    j->spikes_unkept += t->hdr.spikes_unkept;
    if (t->hdr.sample_shift > j->sample_shift && t->hdr.sample_shift < 64)
        j->sample_shift = t->hdr.sample_shift;
    if (!t->has_state)
        return 0;
    const uint64_t *pages = (const void *)(t->state + PIANO_OFF_PAGES);
    uint32_t n_pages = t->hdr.n_pages < PIANO_PAGE_CAP ? t->hdr.n_pages : PIANO_PAGE_CAP;
    size_t len = 0;
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++) {
        uint32_t pg = t->hdr.frame_pages[o];
        if (!pg || pg >= n_pages)
            continue;
        uint64_t counts[64];
        for (unsigned b = 0; b < 64; b++) {
            counts[b] = __atomic_load_n(&pages[(size_t)pg * PIANO_PAGE_WORDS + b * 2 + 1], __ATOMIC_RELAXED);
            j->frame_hist->count[o * 64 + b] += counts[b];
            j->frame_hist->total += counts[b];
        }
        len += piano_hist_encode(counts, o * 64, 64, j->blob + len);
    }
    return len;
}

static void job_free(struct job *j)
{
    sqlite3_finalize(j->fn_st);
    sqlite3_finalize(j->thread_st);
    sqlite3_finalize(j->ctx_st);
    sqlite3_finalize(j->stats_st);
    sqlite3_finalize(j->unf_st);
    sqlite3_finalize(j->frame_st);
    for (size_t i = 0; i < j->n_maps; i++)
        unmap(&j->maps[i]);
    for (size_t i = 0; i < j->n_threads; i++)
        free(j->threads[i].buf);
    free(j->threads);
    free(j->chunks);
    free(j->maps);
    free(j->spans);
    free(j->agg);
    free(j->nodes);
    free(j->node_total);
    free(j->samples);
    free(j->dense);
    free(j->used);
    free(j->blob);
    free(j->frame_hist);
}

/* Reads the run header of spool folder dfd into *run. Returns 0; 1 when
 * there is none (errno ENOENT); -1 with a reason in err. */
static int read_run(int dfd, const char *shown, struct piano_spool_run *run, char *err, size_t errn)
{
    off_t size;
    int fd = open_file_at(dfd, "run", &size);
    if (fd < 0 && errno == ENOENT)
        return 1;
    ssize_t got = fd >= 0 ? read(fd, run, sizeof *run) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof *run || run->magic != PIANO_SPOOL_MAGIC) {
        snprintf(err, errn, "%s/run is not a piano run record", shown);
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

/* import_dir's -1 when the database's disk was too full. */
#define IMPORT_FULL (-3)

/* Imports the spool folder dfd (named `shown` in messages; root_fd its spool
 * root, for the calibration cache, or -1). Returns 1 stored, 0 nothing to
 * store (stored before, or a forked child that recorded nothing of its own),
 * -1 with a reason in err; 2 when there is no run header. On 1, note gets
 * what could not be read ("" when everything could). */
static int import_dir(sqlite3 *db, int root_fd, int dfd, const char *shown, int complete,
                      const struct piano_import_mem *mem, int no_frames, char *err, size_t errn, char *note_out,
                      size_t noten)
{
    struct piano_spool_run run;
    note_out[0] = 0;
    int r = read_run(dfd, shown, &run, err, errn);
    if (r)
        return r > 0 ? 2 : -1;
    complete = complete || run.status == 1;
    double npt = calibrate(&run, complete, root_fd);

    struct job j = { .db = db, .dfd = dfd, .shown = shown, .run = &run, .mem = mem, .npt = npt };
    j.agg = calloc(PIANO_FN_CAP, sizeof *j.agg);
    j.nodes = malloc((size_t)PIANO_NODES_TOTAL * sizeof *j.nodes);
    j.node_total = malloc(PIANO_NODE_CAP * sizeof *j.node_total);
    j.dense = calloc(2 * PIANO_HIST_BUCKETS, sizeof *j.dense);
    j.used = calloc(PIANO_FN_CAP / 8, 1);
    j.frame_hist = calloc(1, sizeof *j.frame_hist);
    /* A blob holds at most one histogram's records or one frame's functions. */
    _Static_assert((uint64_t)PIANO_FN_CAP * PIANO_FNS_ENTRY_MAX <= PIANO_CHUNK_SIZE,
                   "a frame's functions fit the blob");
    j.blob = malloc(PIANO_CHUNK_SIZE > PIANO_HIST_BUCKETS * PIANO_HIST_RECORD ? PIANO_CHUNK_SIZE
                                                                               : PIANO_HIST_BUCKETS * PIANO_HIST_RECORD);
    int rc = -1;
    if (!j.agg || !j.blob || !j.nodes || !j.node_total || !j.dense || !j.used || !j.frame_hist) {
        snprintf(err, errn, "out of memory");
        goto out;
    }

    /* Phase 1, before the database is locked: find the threads, copy their
     * live buffers, then take the chunk files the copies call for. */
    if (list_dir(dfd, see_thread, &j) != 0) {
        snprintf(err, errn, "cannot read %s: %s", shown, strerror(errno));
        goto out;
    }
    for (size_t i = 0; mem && i < mem->n; i++) {   /* states with no file of their own */
        struct thread_in t = { .number = mem->states[i]->thread };
        if (push(&j.threads, &j.n_threads, &j.cap_threads, &t, sizeof t)) {
            snprintf(err, errn, "out of memory");
            goto out;
        }
    }
    if (j.n_threads)
        qsort(j.threads, j.n_threads, sizeof *j.threads, by_thread_number);
    size_t kept = 0;
    for (size_t i = 0; i < j.n_threads; i++)   /* t<N> and f<N>.w name one thread */
        if (!kept || j.threads[kept - 1].number != j.threads[i].number)
            j.threads[kept++] = j.threads[i];
    j.n_threads = kept;
    for (size_t i = 0; i < j.n_threads; i++)
        if (collect_thread(&j, &j.threads[i])) {
            snprintf(err, errn, "out of memory");
            goto out;
        }
    j.end_tick = run.tick0;
    if (collect_frames(&j)) {
        snprintf(err, errn, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < j.n_threads; i++)
        thread_last_tick(&j, &j.threads[i]);
    /* The end of the run: its exit (or later, when other threads went on
     * while it was being stored), else the last moment it was seen alive. */
    j.end = complete && run.end_tick > j.end_tick ? run.end_tick : j.end_tick;

    /* Phase 2: one transaction. One big page cache holds it, which avoids
     * reading pages back, and WAL with synchronous=NORMAL never corrupts,
     * only defers durability to the next checkpoint. */
    sqlite3_exec(db, "PRAGMA cache_size=-16384; PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto sql_error;
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO runs(key, parent_key, pid, command, started_ns, duration_ns, status, "
                           "clock, ns_per_tick, overhead_ns) VALUES(?,?,?,?,?,0,?,?,?,?) ON CONFLICT(key) DO NOTHING",
                           -1, &ins, NULL) != SQLITE_OK)
        goto sql_error_rollback;
    sqlite3_bind_text(ins, 1, run.key, -1, SQLITE_STATIC);
    if (run.parent_key[0])
        sqlite3_bind_text(ins, 2, run.parent_key, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(ins, 2);
    sqlite3_bind_int64(ins, 3, run.pid);
    sqlite3_bind_text(ins, 4, run.cmd, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 5, count64(run.start_real_ns));
    sqlite3_bind_text(ins, 6, complete ? "complete" : "recovered", -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 7, run.clock == PIANO_CLOCK_TSC ? "tsc" : "monotonic", -1, SQLITE_STATIC);
    sqlite3_bind_double(ins, 8, npt);
    sqlite3_bind_double(ins, 9, run.overhead_ticks > 0 && run.overhead_ticks < 1e6 ? run.overhead_ticks * npt : 0);
    int step = sqlite3_step(ins);
    sqlite3_finalize(ins);
    if (step != SQLITE_DONE)
        goto sql_error_rollback;
    if (sqlite3_changes(db) == 0) {   /* stored before */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = 0;
        goto out;
    }
    j.run_id = sqlite3_last_insert_rowid(db);
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO functions(run,id,name,file,line) VALUES(?,?,?,?,?)", -1,
                           &j.fn_st, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO threads(run,thread,tid,name,frames,frame_hist) VALUES(?,?,?,?,?,?)", -1,
                           &j.thread_st,
                           NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO contexts(run,thread,id,parent,fn,calls,self_ns,total_ns,allocs,"
                           "alloc_bytes,frees,free_bytes) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &j.ctx_st, NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,"
                           "free_bytes,hist_self,hist_total,child_calls,unfinished) "
                           "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &j.stats_st, NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO unfinished(run,thread,depth,fn,start_ns,elapsed_ns) VALUES(?,?,?,?,?,?)",
                           -1, &j.unf_st, NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO frames(" FRAME_COLUMNS ") VALUES" FRAME_PARAMS,
                           -1, &j.frame_st, NULL))
        goto sql_error_rollback;

    for (size_t i = 0; i < j.n_threads; i++) {
        const struct thread_in *t = &j.threads[i];
        char name[sizeof t->hdr.name + 1] = "";
        if (t->has_hdr) {
            memcpy(name, t->hdr.name, sizeof t->hdr.name);
            name[sizeof t->hdr.name] = 0;
        }
        sqlite3_bind_int64(j.thread_st, 1, j.run_id);
        sqlite3_bind_int64(j.thread_st, 2, t->number);
        sqlite3_bind_int64(j.thread_st, 3, t->has_hdr ? t->hdr.tid : 0);
        sqlite3_bind_text(j.thread_st, 4, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(j.thread_st, 5, t->has_hdr ? count64(t->hdr.frames_all) : 0);
        size_t hist_len = thread_frames(&j, t);
        sqlite3_bind_blob(j.thread_st, 6, j.blob, (int)hist_len, SQLITE_TRANSIENT);
        if (STEP(j.thread_st) || (t->has_state && import_state(&j, t)))
            goto sql_error_rollback;
    }
    if (run.parent_key[0] && !j.recorded) {   /* a forked child that did nothing of its own (exec) */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = 0;
        goto out;
    }
    j.spike_ns = piano_frame_spike_ns(j.frame_hist, npt);
    if (insert_frames(&j, no_frames) || import_functions(&j))   /* names last: only those the rows use */
        goto sql_error_rollback;
    if (no_frames) {
        j.frames_dropped += j.frames_kept;
        j.frames_kept = 0;
    }
    if (j.frames_all < j.frames_kept + j.frames_dropped)   /* records of threads whose state is lost */
        j.frames_all = j.frames_kept + j.frames_dropped;
    size_t run_hist = 0;
    for (unsigned o = 0; o < PIANO_HIST_OCTAVES; o++)
        run_hist += piano_hist_encode(j.frame_hist->count + o * 64, o * 64, 64, j.blob + run_hist);
    sqlite3_stmt *upd = NULL;
    if (sqlite3_prepare_v2(db,
                           "UPDATE runs SET duration_ns=?, frames_dropped=?, samples_dropped=?, "
                           "calls_untimed=?, frames=?, frames_kept=?, frame_hist=?, spikes_unkept=? WHERE id=?",
                           -1, &upd, NULL))
        goto sql_error_rollback;
    sqlite3_bind_int64(upd, 1, since(j.end > j.seen ? j.end : j.seen, run.tick0, npt));
    sqlite3_bind_int64(upd, 2, count64(j.frames_dropped));
    sqlite3_bind_int64(upd, 3, count64(j.samples_dropped));
    /* The calls on threads whose records could not be made (runtime.c). */
    sqlite3_bind_int64(upd, 4, count64(j.calls_untimed + run.calls_unrecorded));
    sqlite3_bind_int64(upd, 5, count64(j.frames_all));
    sqlite3_bind_int64(upd, 6, count64(j.frames_kept));
    sqlite3_bind_blob(upd, 7, j.blob, (int)run_hist, SQLITE_STATIC);
    sqlite3_bind_int64(upd, 8, count64(j.spikes_unkept));
    sqlite3_bind_int64(upd, 9, j.run_id);
    step = sqlite3_step(upd);
    sqlite3_finalize(upd);
    if (step != SQLITE_DONE || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto sql_error_rollback;
    snprintf(note_out, noten, "%s", j.note);
    rc = 1;
    goto out;

sql_error_rollback:
    snprintf(err, errn, "%s", sqlite3_errmsg(db));
    if (sqlite3_errcode(db) == SQLITE_FULL)
        rc = IMPORT_FULL;
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    goto out;
sql_error:
    snprintf(err, errn, "%s", sqlite3_errmsg(db));
out:
    job_free(&j);
    return rc;
}

/* import_dir; when the disk is too full for the run's frames, again without
 * them: its figures are stored and its frames counted as dropped. */
static int import_full(sqlite3 *db, int root_fd, int dfd, const char *shown, int complete,
                       const struct piano_import_mem *mem, char *err, size_t errn, char *note_out, size_t noten)
{
    int r = import_dir(db, root_fd, dfd, shown, complete, mem, 0, err, errn, note_out, noten);
    if (r == IMPORT_FULL) {
        char first[512];
        snprintf(first, sizeof first, "%s", err);
        r = import_dir(db, root_fd, dfd, shown, complete, mem, 1, err, errn, note_out, noten);
        if (r == 1 && !note_out[0])
            snprintf(note_out, noten, "the disk is too full for its frames (%s): they are counted as dropped",
                     first);
        else if (r < 0)
            snprintf(err, errn, "%s", first);
    }
    return r == IMPORT_FULL ? -1 : r;
}

int piano_import_spool(sqlite3 *db, const char *dir, int complete, char *err, size_t errn)
{
    return piano_import_spool_mem(db, dir, complete, NULL, err, errn);
}

int piano_import_spool_mem(sqlite3 *db, const char *dir, int complete, const struct piano_import_mem *mem,
                           char *err, size_t errn)
{
    /* The spool root, then the run folder in it: both checked. */
    char parent[4400];
    const char *slash = strrchr(dir, '/'), *base = slash ? slash + 1 : dir;
    if (!*base || (size_t)snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - dir) : 0, dir) >= sizeof parent) {
        snprintf(err, errn, "%s is not a spool folder", dir);
        return -1;
    }
    if (!parent[0])
        snprintf(parent, sizeof parent, slash ? "/" : ".");
    int root_fd = open_own_dir(AT_FDCWD, parent, parent, err, errn);
    if (root_fd < 0)
        return -1;
    int dfd = open_own_dir(root_fd, base, dir, err, errn);
    if (dfd < 0) {
        close(root_fd);
        return -1;
    }
    char note_buf[1024];
    int r = import_full(db, root_fd, dfd, dir, complete, mem, err, errn, note_buf, sizeof note_buf);
    if (r == 2) {
        snprintf(err, errn, "%s/run is missing", dir);
        r = -1;
    } else if (r == 1 && note_buf[0]) {
        snprintf(err, errn, "%s", note_buf);
    }
    close(dfd);
    close(root_fd);
    return r;
}

/* True when folder dfd, which has no run header, holds nothing but its lock
 * and frame files: what is left of a stored run when its removal was cut short
 * (the header goes last but for the lock), or when threads of a process
 * storing its own run went on storing frames after the removal. */
static int only_leftovers(int dfd)
{
    int other = 0;
    DIR *d = open_listing(dfd);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        other |= strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "lock") &&
                 e->d_name[0] != 'f';
    closedir(d);
    return !other;
}

/* Appends "; what" (or "what") to the one-line message err. */
static void add_message(char *err, size_t errn, const char *what)
{
    size_t at = strlen(err);
    if (at + 4 < errn)
        snprintf(err + at, errn - at, "%s%s", at ? "; " : "", what);
}

int piano_import_recover(sqlite3 *db, const char *db_path, char *err, size_t errn)
{
    char root[4200], why[8192], msg[16384];
    snprintf(root, sizeof root, "%s.spool", db_path);
    err[0] = 0;
    int root_fd = open_own_dir(AT_FDCWD, root, root, err, errn);
    if (root_fd < 0)
        return errno == ENOENT ? (err[0] = 0, 0) : -1;
    DIR *d = open_listing(root_fd);
    if (!d) {
        snprintf(err, errn, "cannot read %s: %s", root, strerror(errno));
        close(root_fd);
        return -1;
    }
    int imported = 0, failed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        if (name[0] == '.' || (len > 8 && !strcmp(name + len - 8, ".damaged")))
            continue;   /* '.', '..', spools still being made; spools kept after a partial import */
        char dir[4400];
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root, name) >= sizeof dir)
            continue;   /* not a name piano makes */
        struct stat st;
        if (fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            snprintf(why, sizeof why, "%s is a symbolic link: skipped", dir);
            add_message(err, errn, why);
            failed = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode))
            continue;   /* the calibration cache */
        int dfd = open_own_dir(root_fd, name, dir, why, sizeof why);
        if (dfd < 0) {
            add_message(err, errn, why);
            failed = 1;
            continue;
        }
        /* A live process holds its lock; a folder without one is dead (made
         * under a dot name with its lock, renamed: it lost it since). */
        int lock = openat(dfd, "lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0) {
            close(lock);
            close(dfd);
            continue;
        }
        char note_buf[1024];
        int r = import_full(db, root_fd, dfd, dir, 0, NULL, why, sizeof why, note_buf, sizeof note_buf);
        if (r == 2 && only_leftovers(dfd)) {
            remove_files_at(dfd);
            unlinkat(root_fd, name, AT_REMOVEDIR);
        } else if (r == 2) {
            snprintf(why, sizeof why, "cannot recover %s: its run header is missing (kept)", dir);
            add_message(err, errn, why);
            failed = 1;
        } else if (r >= 0 && note_buf[0]) {
            /* Stored with what could be read; the rest is kept under a name
             * the next command skips. */
            char kept[4500];
            snprintf(kept, sizeof kept, "%s.damaged", name);
            int moved = renameat(root_fd, name, root_fd, kept) == 0;
            snprintf(msg, sizeof msg, "stored the run of %s without what could not be read (%s); %s %s.damaged",
                     dir, note_buf, moved ? "the spool is kept as" : "cannot rename it to", dir);
            add_message(err, errn, msg);
            imported += r;
            failed = 1;
        } else if (r >= 0) {
            imported += r;
            remove_files_at(dfd);
            unlinkat(root_fd, name, AT_REMOVEDIR);
        } else {
            snprintf(msg, sizeof msg, "cannot recover %s: %s", dir, why);
            add_message(err, errn, msg);
            failed = 1;
        }
        if (lock >= 0)
            close(lock);
        close(dfd);
    }
    closedir(d);
    close(root_fd);
    return failed ? -1 : imported;
}
