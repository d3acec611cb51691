/*
 * spool_read.c - phase 1 of the import, before the database is locked: the
 * threads of a spool folder (the slots of states, or states in memory), a
 * copy of each live frame buffer taken under its seqlock, then the chunk
 * files f<N>.<K> the copies call for. Every record is checked here, when found.
 */
#define _GNU_SOURCE
#include "import_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void import_note(struct job *j, const char *fmt, ...)
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

/* Keeps mapping m until the job ends (job_free); unmaps it if it cannot. */
static int keep_map(struct job *j, struct mapping m)
{
    if (push(&j->maps, &j->n_maps, &j->cap_maps, &m, sizeof m) == 0)
        return 0;
    spool_unmap(&m);
    return -1;
}

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
    struct spool_listing d;
    if (spool_listing_open(dfd, &d) != 0)
        return -1;
    const char *name;
    int rc = 0;
    while (rc == 0 && (name = spool_listing_next(&d)) != NULL)
        rc = fn(j, name);
    spool_listing_close(&d);
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

/* Whether thread number n is held in this process's memory (j->mem). */
static const struct piano_thread *in_memory(const struct job *j, uint32_t n)
{
    for (size_t i = 0; j->mem && i < j->mem->n; i++)
        if (j->mem->states[i]->thread == n)
            return j->mem->states[i];
    return NULL;
}

/* The threads of states: each slot that was written (a slot never written is
 * a hole and reads as zeros; SEEK_DATA steps over holes, so a huge sparse file
 * costs a step per written slot). A slot is mapped whole, or as far as the
 * file goes (the last one may end inside it). Returns 0, or -1 (out of memory). */
static int see_slots(struct job *j)
{
    off_t size;
    int fd = spool_open_file_at(j->dfd, PIANO_SPOOL_STATES, &size);
    if (fd < 0) {
        if (errno == ELOOP || errno == EINVAL)
            import_note(j, "%s is not a regular file (skipped)", PIANO_SPOOL_STATES);
        else if (errno == ENOENT && !j->mem)
            import_note(j, "%s is missing (the threads' figures are lost)", PIANO_SPOOL_STATES);
        return 0;
    }
    int rc = 0;
    for (uint64_t n = 0; rc == 0 && n <= UINT32_MAX && piano_slot_offset((uint32_t)n) < (uint64_t)size; n++) {
        uint64_t off = piano_slot_offset((uint32_t)n);
        off_t data = lseek(fd, (off_t)off, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break;   /* holes to the end */
        if (data > (off_t)off) {   /* skip the slots that are holes */
            n = (uint64_t)data / PIANO_SLOT_SIZE;
            if (n > UINT32_MAX)
                break;
            off = piano_slot_offset((uint32_t)n);
        }
        struct piano_thread hdr;
        if (pread(fd, &hdr, sizeof hdr, (off_t)off) < (ssize_t)sizeof hdr || hdr.magic == 0)
            continue;   /* never written, its thread was killed while making it, or reused */
        if (in_memory(j, hdr.thread))
            continue;   /* this process's own, held in memory: read from there */
        uint64_t left = (uint64_t)size - off;
        struct thread_in t = { .number = hdr.thread, .slot_index = (uint32_t)n };
        struct mapping m = { 0 };
        if (spool_map_range(fd, off, left < PIANO_SLOT_SIZE ? (size_t)left : (size_t)PIANO_SLOT_SIZE, &m) != 0) {
            import_note(j, "%s cannot be read (%s)", piano_spool_slot_name(t.number).s, strerror(errno));
            continue;
        }
        /* No read-ahead: a slot is mostly holes, and each page read ahead of
         * one is a page of zeros in the page cache (thousands a run: the
         * import's time, and the truncation of the folder's next taker). */
        madvise(m.p, m.len, MADV_RANDOM);
        t.slot = m.p;
        t.slot_len = m.len;
        rc = keep_map(j, m) || push(&j->threads, &j->n_threads, &j->cap_threads, &t, sizeof t) ? -1 : 0;
    }
    close(fd);
    return rc;
}

/* Checks the ended file's record at p (at most `left` bytes): returns its
 * size, or 0 when it is not a whole record. */
static size_t ended_record(const unsigned char *p, size_t left)
{
    struct piano_ended_hdr h;
    if (left < sizeof h)
        return 0;
    memcpy(&h, p, sizeof h);
    size_t table = (size_t)h.nparts * sizeof(struct piano_ended_part);
    if (h.magic != PIANO_ENDED_MAGIC || h.size % 8 || h.size > left || h.nparts < 1 ||
        h.nparts > PIANO_ENDED_PARTS_MAX || h.size < sizeof h + table)
        return 0;
    uint64_t data = 0;
    for (uint32_t i = 0; i < h.nparts; i++) {
        struct piano_ended_part part;
        memcpy(&part, p + sizeof h + i * sizeof part, sizeof part);
        if (part.len > PIANO_SLOT_BUF + PIANO_CHUNK_SIZE || part.off > PIANO_SLOT_BUF + PIANO_CHUNK_SIZE - part.len ||
            (i == 0 && (part.off != 0 || part.len != sizeof(struct piano_thread))))
            return 0;
        data += (part.len + 7) & ~7ull;
    }
    if (data != h.size - sizeof h - table)
        return 0;
    uint64_t check = h.check;
    h.check = 0;
    uint64_t mix = piano_ended_mix(piano_ended_start(h.size), &h, sizeof h);
    if (piano_ended_mix(mix, p + sizeof h, h.size - sizeof h) != check)
        return 0;
    return h.size;
}

/* Checks the packed record at p (at most `left` bytes; spool.h
 * PIANO_PACKED_MAGIC): returns its size, or 0 when it is not a whole record. */
static size_t packed_record(const unsigned char *p, size_t left)
{
    struct piano_ended_hdr h;
    if (left < sizeof h)
        return 0;
    memcpy(&h, p, sizeof h);
    if (h.magic != PIANO_PACKED_MAGIC || h.size % 8 || h.size > left || h.nparts < 1 ||
        h.nparts > PIANO_ENDED_PARTS_MAX || h.size < sizeof h + (size_t)h.nparts * sizeof(struct piano_ended_part))
        return 0;
    uint64_t check = h.check;
    h.check = 0;
    uint64_t mix = piano_ended_mix(piano_ended_start(h.size), &h, sizeof h);
    return piano_ended_mix(mix, p + sizeof h, h.size - sizeof h) == check ? h.size : 0;
}

/* Reads a varint at *p (before end) into *v. Returns 0, or -1. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

/* Slot-shaped mappings that packed records are decoded into, kept from one
 * import to the next (piano-db stores many runs left at exit): a page's first
 * touch costs more than writing it (~15 us on a PVM guest). After an import
 * the parts written are zeroed again (spool_packed_release). */
#define PACK_POOL 8
#define PACK_MAP_LEN ((size_t)PIANO_SLOT_BUF + PIANO_CHUNK_SIZE)
static struct pack_slot {
    unsigned char *p;
    int busy;
    uint32_t nparts;
    struct piano_ended_part parts[PIANO_ENDED_PARTS_MAX];
} pack_pool[PACK_POOL];

/* A zeroed slot-shaped mapping of the pool, or NULL (all taken). */
static struct pack_slot *pack_take(void)
{
    for (int i = 0; i < PACK_POOL; i++)
        if (!pack_pool[i].busy) {
            if (!pack_pool[i].p) {
                void *p = mmap(NULL, PACK_MAP_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                               -1, 0);
                if (p == MAP_FAILED)
                    return NULL;
                pack_pool[i].p = p;
            }
            pack_pool[i].busy = 1;
            pack_pool[i].nparts = 0;
            return &pack_pool[i];
        }
    return NULL;
}

static void pack_give_back(struct pack_slot *ps)
{
    for (uint32_t i = 0; i < ps->nparts; i++)
        memset(ps->p + ps->parts[i].off, 0, ps->parts[i].len);
    ps->nparts = 0;
    ps->busy = 0;
}

static void pack_release_slot(const unsigned char *slot)
{
    for (int k = 0; k < PACK_POOL; k++)
        if (pack_pool[k].busy && pack_pool[k].p == slot)
            pack_give_back(&pack_pool[k]);
}

void spool_packed_release(struct job *j)
{
    for (size_t i = 0; i < j->n_threads; i++)
        if (j->threads[i].packed)
            pack_release_slot(j->threads[i].slot);
}

/* Decodes packed record p (whole: packed_record) into thread t: its state
 * as its slot would hold it (t->slot, in a mapping of the pool or of the
 * job's own). Returns 0; 1 when damaged (noted, t not made); -1 out of memory. */
static int unpack_record(struct job *j, const unsigned char *p, struct thread_in *t)
{
    struct piano_ended_hdr h;
    memcpy(&h, p, sizeof h);
    size_t table = (size_t)h.nparts * sizeof(struct piano_ended_part);
    struct pack_slot own = { 0 }, *ps = pack_take();
    if (!ps) {   /* more packed threads at once than the pool holds: a mapping of the job's */
        void *m = mmap(NULL, PACK_MAP_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED || keep_map(j, (struct mapping){ m, PACK_MAP_LEN }))
            return -1;
        own.p = m;
        ps = &own;
    }
    const unsigned char *in = p + sizeof h + table, *end = p + h.size;
    const char *bad = NULL;
    size_t top = PIANO_THREAD_FILE_SIZE;
    for (uint32_t i = 0; i < h.nparts && !bad; i++) {
        struct piano_ended_part part;
        memcpy(&part, p + sizeof h + i * sizeof part, sizeof part);
        if (part.len > PACK_MAP_LEN || part.off > PACK_MAP_LEN - part.len ||
            (i == 0 && (part.off != 0 || part.len != sizeof(struct piano_thread)))) {
            bad = "its parts are out of bounds";
            break;
        }
        ps->parts[ps->nparts++] = part;
        if (part.off + part.len > top)
            top = part.off + part.len;
        uint64_t left = part.len, zeros, lits;
        unsigned char *o = ps->p + part.off;
        while (left && !bad) {
            if (get_varint(&in, end, &zeros) || zeros > left || (left -= zeros, o += zeros,   /* the mapping is zeros */
                                                                 get_varint(&in, end, &lits)) ||
                lits > left || lits > (uint64_t)(end - in)) {
                bad = "its codes do not tell its parts";
                break;
            }
            memcpy(o, in, lits);
            o += lits;
            in += lits;
            left -= lits;
        }
    }
    for (; in < end && !bad; in++)
        if (*in)
            bad = "its codes do not tell its parts";   /* the padding is zeros */
    if (bad) {
        import_note(j, "%s: the packed record of thread %u is damaged (%s)", PIANO_SPOOL_ENDED, h.thread, bad);
        if (ps != &own)
            pack_give_back(ps);
        return 1;
    }
    const struct piano_thread *hdr = (const void *)ps->p;
    *t = (struct thread_in){ .number = h.thread, .slot = ps->p, .slot_len = top, .slot_index = hdr->slot,
                             .packed = ps != &own };
    return 0;
}

/* The threads of the ended file (short threads whose slots were reused):
 * each whole record; past a damaged one (a write a full disk cut short), the
 * next magic. Returns 0, or -1 (out of memory). */
static int see_ended(struct job *j)
{
    struct mapping m = { 0 };
    if (spool_map_at(j->dfd, PIANO_SPOOL_ENDED, SIZE_MAX, &m) != 0) {
        if (errno != ENOENT && errno != ENODATA)
            import_note(j, "%s cannot be read (%s)", PIANO_SPOOL_ENDED, strerror(errno));
        return 0;
    }
    if (keep_map(j, m))
        return -1;
    size_t at = 0, skipped = 0;
    while (at + sizeof(struct piano_ended_hdr) <= m.len) {
        size_t size = ended_record(m.p + at, m.len - at);
        size_t packed = size ? 0 : packed_record(m.p + at, m.len - at);
        if (packed) {   /* a state left at exit (PIANO_STORE=later) */
            struct thread_in t;
            int r = unpack_record(j, m.p + at, &t);
            if (r < 0 || (r == 0 && push(&j->threads, &j->n_threads, &j->cap_threads, &t, sizeof t))) {
                if (r == 0 && t.packed)
                    pack_release_slot(t.slot);
                return -1;
            }
            at += packed;
            continue;
        }
        if (!size) {
            skipped += 8;
            at += 8;
            continue;
        }
        struct piano_ended_hdr h;
        memcpy(&h, m.p + at, sizeof h);
        struct thread_in t = { .number = h.thread, .ended = m.p + at };
        if (push(&j->threads, &j->n_threads, &j->cap_threads, &t, sizeof t))
            return -1;
        at += size;
    }
    if (skipped)
        import_note(j, "%s: %zu bytes that are not a whole record are not read", PIANO_SPOOL_ENDED, skipped);
    return 0;
}

/* The parts of record r of the ended file: calls fn(part, its bytes, arg) for each. */
static void ended_parts(const unsigned char *r, void (*fn)(const struct piano_ended_part *, const unsigned char *, void *),
                        void *arg)
{
    struct piano_ended_hdr h;
    memcpy(&h, r, sizeof h);
    const unsigned char *data = r + sizeof h + (size_t)h.nparts * sizeof(struct piano_ended_part);
    for (uint32_t i = 0; i < h.nparts; i++) {
        struct piano_ended_part part;
        memcpy(&part, r + sizeof h + i * sizeof part, sizeof part);
        fn(&part, data, arg);
        data += (part.len + 7) & ~7ull;
    }
}

static void part_copy(const struct piano_ended_part *part, const unsigned char *bytes, void *scratch)
{
    if (part->off + part->len <= PIANO_THREAD_FILE_SIZE)   /* the frame buffer is read from the record */
        memcpy((unsigned char *)scratch + part->off, bytes, part->len);
}

static void part_clear(const struct piano_ended_part *part, const unsigned char *bytes, void *scratch)
{
    (void)bytes;
    if (part->off + part->len <= PIANO_THREAD_FILE_SIZE)
        memset((unsigned char *)scratch + part->off, 0, part->len);
}

struct found_part {
    uint64_t off;
    const unsigned char *bytes;
    uint64_t len;
};

static void part_find(const struct piano_ended_part *part, const unsigned char *bytes, void *arg)
{
    struct found_part *f = arg;
    if (part->off == f->off) {
        f->bytes = bytes;
        f->len = part->len;
    }
}

/* Thread t of the ended file: its state made in the job's scratch (zeroed
 * but for its parts). Returns 0, or -1 (out of memory). */
int ended_state(struct job *j, struct thread_in *t)
{
    if (!t->ended)
        return 0;
    if (!j->scratch) {
        void *p = mmap(NULL, PIANO_THREAD_FILE_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return -1;
        j->scratch = p;
    }
    ended_parts(t->ended, part_copy, j->scratch);
    t->state = j->scratch;
    return 0;
}

/* ... and zeroed again after use. */
void ended_release(struct job *j, struct thread_in *t)
{
    if (!t->ended || t->state != j->scratch || !j->scratch)
        return;
    ended_parts(t->ended, part_clear, j->scratch);
    t->state = NULL;
}

static int by_thread_number(const void *a, const void *b)
{
    const struct thread_in *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    if ((y->ended != NULL) != (x->ended != NULL))
        return (y->ended != NULL) - (x->ended != NULL);   /* a thread also in the ended file: that record first */
    return (int)y->packed - (int)x->packed;   /* ... or packed there (its slot not given back) */
}

/* Copies the records of a frame buffer, which its thread may be writing, by the seqlock protocol of spool.h: seq, used, the bytes, a fence,
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

/* Copies the thread's frame buffer: in memory, or the tail of its slot. */
static void copy_buffer(struct job *j, struct thread_in *t)
{
    if (t->mem) {   /* an anonymous state's buffer is in memory too */
        if (t->mem->chunk)
            copy_records(t, (const struct piano_chunk_hdr *)t->mem->chunk,
                         PIANO_CHUNK_SIZE - sizeof(struct piano_chunk_hdr));
        return;
    }
    if (t->slot_len <= PIANO_SLOT_BUF)
        return;   /* no frame buffer: the thread kept no frame */
    const char *name = piano_spool_slot_name(t->number).s;
    size_t len = t->slot_len - PIANO_SLOT_BUF;
    if (len > PIANO_CHUNK_SIZE)
        len = PIANO_CHUNK_SIZE;
    if (len < sizeof(struct piano_chunk_hdr)) {
        import_note(j, "the frame buffer of %s is damaged (too short)", name);
        return;
    }
    const struct piano_chunk_hdr *h = (const void *)(t->slot + PIANO_SLOT_BUF);
    if (h->magic != PIANO_SPOOL_MAGIC) {
        if (h->magic)   /* 0: never used */
            import_note(j, "the frame buffer of %s is damaged (not a frame buffer)", name);
        return;
    }
    copy_records(t, h, len - sizeof *h);
}

/* Copies the thread's header (checked), notes its state when whole, and
 * copies its frame buffer. */
static void collect_thread(struct job *j, struct thread_in *t)
{
    if ((t->mem = in_memory(j, t->number))) {
        memcpy(&t->hdr, t->mem, sizeof t->hdr);
        t->has_hdr = t->has_state = 1;
        t->state = (const unsigned char *)t->mem;
        t->live = !t->hdr.dead && t->hdr.tid != (uint32_t)syscall(SYS_gettid);
        if (j->parts & PIANO_LIVE_FRAMES)
            copy_buffer(j, t);
        return;
    }
    const char *name = piano_spool_slot_name(t->number).s;
    if (t->ended) {   /* dead, its records whole: the header is the record's first part */
        memcpy(&t->hdr, t->ended + sizeof(struct piano_ended_hdr) +
                            ((const struct piano_ended_hdr *)(const void *)t->ended)->nparts *
                                sizeof(struct piano_ended_part), sizeof t->hdr);
        t->has_hdr = t->hdr.magic == PIANO_SPOOL_MAGIC && t->hdr.version == PIANO_SPOOL_VERSION &&
                     t->hdr.thread == t->number;
        if (!t->has_hdr)
            import_note(j, "%s: thread %u is not a piano thread record (its figures are lost)", PIANO_SPOOL_ENDED,
                        t->number);
        t->has_state = t->has_hdr;
        struct found_part buf = { PIANO_SLOT_BUF, NULL, 0 };
        ended_parts(t->ended, part_find, &buf);
        const struct piano_chunk_hdr *h = (const void *)buf.bytes;
        if (t->has_hdr && h && buf.len >= sizeof *h && h->magic == PIANO_SPOOL_MAGIC && (j->parts & PIANO_LIVE_FRAMES))
            copy_records(t, h, buf.len - sizeof *h);
        return;
    }
    if (t->slot_len >= sizeof t->hdr) {
        memcpy(&t->hdr, t->slot, sizeof t->hdr);
        t->has_hdr = t->hdr.magic == PIANO_SPOOL_MAGIC && t->hdr.version == PIANO_SPOOL_VERSION &&
                     t->hdr.thread == t->number && t->hdr.slot == t->slot_index;
    }
    if (!t->has_hdr)
        import_note(j, "%s is not a piano thread record (its figures are lost)", name);
    else if (t->slot_len < PIANO_THREAD_FILE_SIZE)
        import_note(j, "%s is truncated (its calls are lost)", name);
    /* This process storing its own run: its other threads go on. */
    t->live = t->has_hdr && j->run->pid == (uint32_t)getpid() && !t->hdr.dead &&
              t->hdr.tid != (uint32_t)syscall(SYS_gettid);
    if (t->has_hdr && t->slot_len >= PIANO_THREAD_FILE_SIZE) {
        t->has_state = 1;
        t->state = t->slot;
    }
    if (j->parts & PIANO_LIVE_FRAMES)   /* a live read that shows no frames copies none */
        copy_buffer(j, t);
}

/* Listing 2, after the buffers were copied: the chunk files f<N>.<K>. */
static int see_chunk(struct job *j, const char *name)
{
    uint64_t n, k;
    const char *dot = name[0] == 'f' ? strchr(name, '.') : NULL;
    if (!dot || parse_number(name + 1, dot, UINT32_MAX, &n) != 0 ||
        parse_number(dot + 1, name + strlen(name), UINT64_MAX, &k) != 0 || !find_thread(j, (uint32_t)n))
        return 0;
    struct chunk_name c = { (uint32_t)n, k, NULL, 0 };
    return push(&j->chunks, &j->n_chunks, &j->cap_chunks, &c, sizeof c);
}

/* The size of the whole record of the chunks file at p (left bytes), or 0. */
static size_t chunks_record(const unsigned char *p, size_t left)
{
    struct piano_chunks_rec r;
    if (left < sizeof r)
        return 0;
    memcpy(&r, p, sizeof r);
    if (r.magic != PIANO_CHUNKS_MAGIC || r.size % 8 || r.size > left ||
        r.size < sizeof r + sizeof(struct piano_chunk_hdr) || r.size > sizeof r + PIANO_CHUNK_SIZE + 8)
        return 0;
    uint64_t check = r.check;
    r.check = 0;
    uint64_t mix = piano_ended_mix(piano_ended_start(r.size), &r, sizeof r);
    return piano_ended_mix(mix, p + sizeof r, r.size - sizeof r) == check ? r.size : 0;
}

/* Listing 2 too: the chunks of the chunks file (rt/user.c), each as if it
 * were its chunk file. A record cut short is skipped (the next one is looked
 * for byte by byte: the cut one may have ended anywhere). */
static int see_chunks_file(struct job *j)
{
    struct mapping m = { 0 };
    if (spool_map_at(j->dfd, PIANO_SPOOL_CHUNKS, SIZE_MAX, &m) != 0) {
        if (errno != ENOENT && errno != ENODATA)
            import_note(j, "%s cannot be read (%s)", PIANO_SPOOL_CHUNKS, strerror(errno));
        return 0;
    }
    if (keep_map(j, m))
        return -1;
    size_t at = 0, skipped = 0;
    while (at + sizeof(struct piano_chunks_rec) <= m.len) {
        size_t size = chunks_record(m.p + at, m.len - at);
        if (!size) {
            skipped++;
            at++;
            continue;
        }
        struct piano_chunks_rec r;
        memcpy(&r, m.p + at, sizeof r);
        struct chunk_name c = { r.thread, r.k, m.p + at + sizeof r, size - sizeof r };
        if (find_thread(j, r.thread) && push(&j->chunks, &j->n_chunks, &j->cap_chunks, &c, sizeof c))
            return -1;
        at += size;
    }
    if (skipped)
        import_note(j, "%s: %zu bytes that are not a whole record are not read", PIANO_SPOOL_CHUNKS, skipped);
    return 0;
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
            import_note(j, "%s: %zu bytes after a malformed frame record are not read", what, (size_t)(end - at));
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
static int add_chunk(struct job *j, const struct chunk_name *at)
{
    uint32_t number = at->number;
    const piano_spool_name file = piano_spool_frames_file(number, at->k);
    const char *name = file.s;
    struct mapping c = { 0 };
    if (at->rec) {   /* in the chunks file, mapped already */
        const struct piano_chunk_hdr *h = (const void *)at->rec;
        uint64_t used = h->used;
        if (h->magic != PIANO_SPOOL_MAGIC || used > at->len - sizeof *h) {
            import_note(j, "%s in %s is damaged (not read)", name, PIANO_SPOOL_CHUNKS);
            return 0;
        }
        return add_records(j, at->rec + sizeof *h, (size_t)used, number, PIANO_SPOOL_CHUNKS) ? -1 : 1;
    }
    if (spool_map_at(j->dfd, name, PIANO_CHUNK_SIZE, &c) != 0) {
        import_note(j, "%s is not a regular file (skipped)", name);
        return 0;
    }
    const struct piano_chunk_hdr *h = (const void *)c.p;
    uint64_t used;
    if (c.len < sizeof *h || h->magic != PIANO_SPOOL_MAGIC || (used = h->used) > c.len - sizeof *h) {
        import_note(j, "%s is damaged (not read)", name);
        spool_unmap(&c);
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
    if (list_dir(j->dfd, see_chunk, j) || see_chunks_file(j))
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
            if ((t->has_buf && k > t->buf_seq) || (c > 0 && v[c - 1].number == t->number && v[c - 1].k == k))
                continue;   /* stored after the copy; or a chunk found twice: once */
            int r = add_chunk(j, &v[c]);
            stored_s |= t->has_buf && k == t->buf_seq && r == 1;
            rc = r < 0 ? -1 : 0;
        }
        if (rc == 0 && t->has_buf && !stored_s && t->buf_len) {
            char what[sizeof(piano_spool_name) + 32];
            snprintf(what, sizeof what, "the frame buffer of %s", piano_spool_slot_name(t->number).s);
            rc = add_records(j, t->buf, t->buf_len, t->number, what);
        }
    }
    return rc;
}

/* The latest tick the thread is known to have been alive at: its last frame
 * end or exit, the entry of a call in flight, or the end of its last call
 * (kept in the slot above the top, rt/hooks.c). */
static void thread_last_tick(struct job *j, struct thread_in *t)
{
    if (!t->has_state || ended_state(j, t))
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
    ended_release(j, t);
}

/* Phase 1, before the database is locked: find the threads, copy their live
 * buffers, then take the chunk files the copies call for; then the end of the
 * run. Returns 0, or -1 with a reason in err. */
int import_collect(struct job *j, int complete, char *err, size_t errn)
{
    for (size_t i = 0; j->mem && i < j->mem->n; i++) {   /* states held in memory */
        struct thread_in t = { .number = j->mem->states[i]->thread };
        if (push(&j->threads, &j->n_threads, &j->cap_threads, &t, sizeof t))
            goto out_of_memory;
    }
    /* The slots first, then the ended file: a thread that ends meanwhile is
     * found in one or the other (or both: its record is taken). */
    if (see_slots(j) || see_ended(j))
        goto out_of_memory;
    if (j->n_threads)
        qsort(j->threads, j->n_threads, sizeof *j->threads, by_thread_number);
    size_t kept = 0;
    for (size_t i = 0; i < j->n_threads; i++)   /* a state in memory twice: once */
        if (!kept || j->threads[kept - 1].number != j->threads[i].number)
            j->threads[kept++] = j->threads[i];
    j->n_threads = kept;
    for (size_t i = 0; i < j->n_threads; i++)
        collect_thread(j, &j->threads[i]);
    j->end_tick = j->run->tick0;
    if ((j->parts & PIANO_LIVE_FRAMES) && collect_frames(j))
        goto out_of_memory;
    for (size_t i = 0; i < j->n_threads; i++)
        thread_last_tick(j, &j->threads[i]);
    /* The end of the run: its exit (or later, when other threads went on
     * while it was being stored), else the last moment it was seen alive. */
    j->end = complete && j->run->end_tick > j->end_tick ? j->run->end_tick : j->end_tick;
    if (j->live) {   /* a live run is read as it is now: its calls in flight are timed to now */
        uint64_t now = spool_clock_now(j->run->clock);
        if (now > j->end)
            j->end = now;
    }
    return 0;
out_of_memory:
    snprintf(err, errn, "out of memory");
    return -1;
}
