/*
 * span.c - spans (include/piano/span.h, doc/spans.md): units of work that
 * cross callbacks and threads.
 *
 * A span is an object of piano's own slab (mmap, not the program's malloc);
 * its handle holds its index and its generation, which its close advances,
 * so a handle used after its close is told once on stderr and ignored, even
 * when the object was given to a new span since.
 *
 * A span's name (with its fields: request{method=GET}) is a key: a function
 * site of its own, registered like a function's (its file PIANO_SPAN_FILE),
 * and a record of the spans file (span_spool.h). piano_span_enter pushes a
 * frame of the key's site on the calling thread's shadow stack (hooks.c
 * span_push): the calls made while it is there are its children in the
 * calling contexts, which give the span's calls, CPU time and allocations by
 * the machinery of functions. piano_span_exit pops it. The object counts its
 * busy time (entered on some thread) and its close adds wall, busy and their
 * histograms to the key's record with atomic adds: no lock on any span call
 * but the first of a name.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "span_spool.h"
#undef PIANO_SPANS
#define PIANO_SPANS 1
#include "../include/piano/span.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define SPAN_CHUNK_BITS 12
#define SPAN_CHUNK (1u << SPAN_CHUNK_BITS)   /* objects per slab chunk */
#define SPAN_CHUNKS 4096u                     /* chunks at most: 16M spans open at once */
#define SPAN_VARIANTS 64u                     /* names with fields per name: later ones are name{...} */
#define SPAN_OVERFLOW_NAME "<other spans>"    /* the last key: names past PIANO_SPAN_CAP */

struct span_obj {
    uint32_t gen;            /* odd while open; a handle holds the generation it was opened with */
    uint32_t next_free;      /* free: index + 1 of the next free object, 0 at the end */
    uint32_t key;            /* its name (with its fields) */
    uint32_t frame_key;      /* the key whose frame its latest enter pushed */
    uint32_t entered;        /* enters not yet exited, on any thread */
    uint32_t forked;         /* open when the process forked (this is the child): its enters are the parent's */
    uint64_t open_tick;
    uint64_t enter_tick;     /* when entered last went from 0 to 1 */
    uint64_t busy;           /* ticks entered, up to the latest exit to 0 */
};

struct span_key {
    struct piano_site site;  /* the span's function */
    uint64_t hash;
    uint32_t base;           /* the key of its name without fields */
    uint32_t variants;       /* a name's: keys with fields made from it */
    uint32_t rec_ok;         /* its record's blocks are reserved */
    char name[PIANO_SPAN_NAME_MAX];
};

static struct span_key keys[PIANO_SPAN_CAP];
static uint32_t n_keys;
static uint32_t key_table[2 * PIANO_SPAN_CAP];   /* hash -> key + 1, open addressing; published with release */
static pthread_mutex_t keys_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *spans_map;   /* the spans file, mapped; NULL: not made (or could not be) */
static int spans_fd_failed;
static int spans_ended;            /* the run ended: closes record nothing (counted as unfinished) */

static struct span_obj *chunks[SPAN_CHUNKS];
static uint32_t slab_next;         /* objects handed out so far */
static uint64_t free_head;         /* tag << 32 | (index + 1) of the first free object */
static int warned;

/* ---------------------------------------------------------------- keys */

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

static struct piano_spool_span *rec_of(uint32_t k)
{
    unsigned char *m = __atomic_load_n(&spans_map, __ATOMIC_ACQUIRE);
    return m && keys[k].rec_ok ? (struct piano_spool_span *)(m + (size_t)k * PIANO_SPAN_REC_SIZE) : NULL;
}

/* The spans file, made at the run's first span name (under keys_lock). */
static void spans_file_make(void)
{
    if (spans_map || spans_fd_failed || g.off)
        return;
    int fd = run_open(PIANO_SPOOL_SPANS, O_RDWR | O_CREAT);
    void *m = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)PIANO_SPANS_FILE_SIZE) == 0)
        m = mmap(NULL, PIANO_SPANS_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (m == MAP_FAILED) {
        spans_fd_failed = 1;
        say("piano: cannot make %s/" PIANO_SPOOL_SPANS ": %s; span figures are not recorded (their calls are)",
            g.dir, strerror(e));
        return;
    }
    __atomic_store_n(&spans_map, (unsigned char *)m, __ATOMIC_RELEASE);
}

/* Reserves key k's record (zeros written: a full disk then loses the
 * record, never raises SIGBUS) and writes its name. Under keys_lock. */
static void rec_make(uint32_t k)
{
    spans_file_make();
    if (!spans_map)
        return;
    static const unsigned char zeros[PIANO_SPAN_REC_SIZE];
    int fd = run_open(PIANO_SPOOL_SPANS, O_RDWR);
    int ok = fd >= 0 && write_all(fd, zeros, sizeof zeros, (off_t)((uint64_t)k * PIANO_SPAN_REC_SIZE)) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok)
        return;
    struct piano_spool_span *r = (struct piano_spool_span *)(spans_map + (size_t)k * PIANO_SPAN_REC_SIZE);
    size_t n = strlen(keys[k].name);
    memcpy(r->name, keys[k].name, n + 1);
    r->name_len = (uint32_t)n;
    r->fn = keys[k].site.id;
    __atomic_store_n(&r->magic, PIANO_SPAN_MAGIC, __ATOMIC_RELEASE);
    keys[k].rec_ok = 1;
}

static uint32_t key_find(const char *name, size_t n, uint64_t h)
{
    const uint32_t mask = 2 * PIANO_SPAN_CAP - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        uint32_t k = __atomic_load_n(&key_table[i], __ATOMIC_ACQUIRE);
        if (!k)
            return 0;
        struct span_key *e = &keys[k - 1];
        if (e->hash == h && strncmp(e->name, name, n) == 0 && e->name[n] == 0)
            return k;
    }
}

/* Makes key `name` (n bytes, hash h): the caller holds keys_lock and found
 * none. base: the key of its name without fields, or UINT32_MAX for itself. */
static uint32_t key_make(const char *name, size_t n, uint64_t h, uint32_t base)
{
    uint32_t k = n_keys;
    struct span_key *e = &keys[k];
    memcpy(e->name, name, n);
    e->name[n] = 0;
    e->hash = h;
    e->base = base == UINT32_MAX ? k : base;
    e->site.name = e->name;
    e->site.file = PIANO_SPAN_FILE;
    e->site.line = 0;
    register_site(&e->site, NULL, 0);
    rec_make(k);
    __atomic_store_n(&n_keys, k + 1, __ATOMIC_RELEASE);   /* read by the snapshot thread (spans_snap_read) */
    const uint32_t mask = 2 * PIANO_SPAN_CAP - 1;
    uint32_t i = (uint32_t)h & mask;
    while (key_table[i])
        i = (i + 1) & mask;
    __atomic_store_n(&key_table[i], k + 1, __ATOMIC_RELEASE);
    return k;
}

/* The key of name (cut to PIANO_SPAN_NAME_MAX - 1 bytes), made when new. */
static uint32_t key_get(const char *name, uint32_t base)
{
    size_t n = strnlen(name, PIANO_SPAN_NAME_MAX - 1);
    uint64_t h = name_hash(name, n);
    uint32_t k = key_find(name, n, h);
    if (k)
        return k - 1;
    pthread_mutex_lock(&keys_lock);
    if ((k = key_find(name, n, h)) != 0) {
        k--;
    } else if (base != UINT32_MAX && keys[base].variants >= SPAN_VARIANTS) {
        /* Too many field values for this name: they share name{...}. */
        char other[PIANO_SPAN_NAME_MAX];
        int w = snprintf(other, sizeof other, "%.*s{...}", (int)(sizeof other - 6), keys[base].name);
        size_t on = (size_t)w < sizeof other ? (size_t)w : sizeof other - 1;
        uint64_t oh = name_hash(other, on);
        k = key_find(other, on, oh);
        k = k ? k - 1 : n_keys < PIANO_SPAN_CAP - 1 ? key_make(other, on, oh, base) : UINT32_MAX;
    } else if (n_keys < PIANO_SPAN_CAP - 1) {
        k = key_make(name, n, h, base);
        if (base != UINT32_MAX)
            keys[base].variants++;
    } else {
        k = UINT32_MAX;
    }
    if (k == UINT32_MAX) {   /* past PIANO_SPAN_CAP names: the last key */
        size_t on = sizeof SPAN_OVERFLOW_NAME - 1;
        uint64_t oh = name_hash(SPAN_OVERFLOW_NAME, on);
        k = key_find(SPAN_OVERFLOW_NAME, on, oh);
        k = k ? k - 1 : key_make(SPAN_OVERFLOW_NAME, on, oh, UINT32_MAX);
    }
    pthread_mutex_unlock(&keys_lock);
    return k;
}

/* ---------------------------------------------------------------- the slab */

static struct span_obj *obj_at(uint32_t i)
{
    return &__atomic_load_n(&chunks[i >> SPAN_CHUNK_BITS], __ATOMIC_ACQUIRE)[i & (SPAN_CHUNK - 1)];
}

static struct span_obj *obj_new(uint32_t *idx)
{
    uint64_t h = __atomic_load_n(&free_head, __ATOMIC_ACQUIRE);
    while ((uint32_t)h) {
        uint32_t i = (uint32_t)h - 1;
        uint64_t next = ((h >> 32) + 1) << 32 | __atomic_load_n(&obj_at(i)->next_free, __ATOMIC_RELAXED);
        if (__atomic_compare_exchange_n(&free_head, &h, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            *idx = i;
            return obj_at(i);
        }
    }
    uint32_t i = __atomic_fetch_add(&slab_next, 1, __ATOMIC_RELAXED);
    if (i >= SPAN_CHUNKS * SPAN_CHUNK)
        return NULL;
    struct span_obj **c = &chunks[i >> SPAN_CHUNK_BITS];
    struct span_obj *ch = __atomic_load_n(c, __ATOMIC_ACQUIRE);
    if (!ch) {
        void *m = mmap(NULL, SPAN_CHUNK * sizeof *ch, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        struct span_obj *none = NULL;
        if (__atomic_compare_exchange_n(c, &none, (struct span_obj *)m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            ch = m;
        else {
            munmap(m, SPAN_CHUNK * sizeof *ch);
            ch = none;
        }
    }
    *idx = i;
    return &ch[i & (SPAN_CHUNK - 1)];
}

static void obj_free(uint32_t i)
{
    struct span_obj *o = obj_at(i);
    uint64_t h = __atomic_load_n(&free_head, __ATOMIC_ACQUIRE), next;
    do {
        __atomic_store_n(&o->next_free, (uint32_t)h, __ATOMIC_RELAXED);
        next = ((h >> 32) + 1) << 32 | (i + 1);
    } while (!__atomic_compare_exchange_n(&free_head, &h, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

/* The open span of handle h, or NULL (told once when h is not one: closed,
 * or never a handle). what: the call, for the message. */
static struct span_obj *span_of(piano_span *h, const char *what, uint32_t *idx)
{
    uint64_t v = (uint64_t)(uintptr_t)h;
    if (!v)
        return NULL;   /* piano was not recording when it was opened */
    uint32_t i = (uint32_t)v - 1, gen = (uint32_t)(v >> 32);
    struct span_obj *o = NULL;
    if (i < __atomic_load_n(&slab_next, __ATOMIC_ACQUIRE) && __atomic_load_n(&chunks[i >> SPAN_CHUNK_BITS], __ATOMIC_ACQUIRE))
        o = obj_at(i);
    if (o && (gen & 1) && __atomic_load_n(&o->gen, __ATOMIC_ACQUIRE) == gen) {
        if (idx)
            *idx = i;
        return o;
    }
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) {
        if (o && (gen & 1)) {
            /* Its name is known while its object was not given to another span. */
            int same = __atomic_load_n(&o->gen, __ATOMIC_RELAXED) == gen + 1;
            say("piano: %s on a span already closed%s%s%s: ignored, and later misuses of span handles too", what,
                same ? " (\"" : "", same ? keys[__atomic_load_n(&o->key, __ATOMIC_RELAXED)].name : "", same ? "\")" : "");
        } else
            say("piano: %s on %p, which is not a span handle: ignored, and later misuses of span handles too", what,
                (void *)h);
    }
    return NULL;
}

/* ---------------------------------------------------------------- figures */

static void hist_add1(uint64_t *hist, uint64_t v)
{
    __atomic_fetch_add(&hist[piano_hist_bucket(v)], 1, __ATOMIC_RELAXED);
}

static void span_record(uint32_t k, uint64_t wall, uint64_t busy, int unfinished)
{
    struct piano_spool_span *r = rec_of(k);
    if (!r)
        return;
    if (busy > wall)
        busy = wall;
    __atomic_fetch_add(&r->count, 1, __ATOMIC_RELAXED);
    if (unfinished)
        __atomic_fetch_add(&r->unfinished, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&r->wall, wall, __ATOMIC_RELAXED);
    __atomic_fetch_add(&r->busy, busy, __ATOMIC_RELAXED);
    hist_add1(r->hist_wall, wall);
    hist_add1(r->hist_busy, busy);
}

/* Busy ticks of o at tick t: those up to its latest exit, and the current enter's. */
static uint64_t busy_at(struct span_obj *o, uint64_t t)
{
    uint64_t b = __atomic_load_n(&o->busy, __ATOMIC_RELAXED);
    if (__atomic_load_n(&o->entered, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = __atomic_load_n(&o->enter_tick, __ATOMIC_RELAXED);
        b += t > t0 ? t - t0 : 0;
    }
    return b;
}

/* ---------------------------------------------------------------- the API */

/* Appends len bytes of s to buf (PIANO_SPAN_NAME_MAX bytes) at n, as many
 * as fit with a NUL after them; returns the new length. */
static size_t append(char *buf, size_t n, const char *s, size_t len)
{
    size_t room = PIANO_SPAN_NAME_MAX - 1 - n;
    if (len > room)
        len = room;
    memcpy(buf + n, s, len);
    return n + len;
}

PIANO_API piano_span *piano_span_open(const char *name)
{
    if (!piano_on() || tls_ended)
        return NULL;
    int saved = errno;
    uint32_t k = key_get(name ? name : "(null)", UINT32_MAX);
    uint32_t i;
    struct span_obj *o = piano_on() && !g.finished ? obj_new(&i) : NULL;
    errno = saved;
    if (!o)
        return NULL;
    __atomic_store_n(&o->key, k, __ATOMIC_RELAXED);
    o->frame_key = k;
    o->entered = 0;
    o->forked = 0;
    o->busy = 0;
    o->enter_tick = 0;
    o->open_tick = piano_now();
    uint32_t gen = __atomic_load_n(&o->gen, __ATOMIC_RELAXED) + 1;   /* odd: open */
    __atomic_store_n(&o->gen, gen, __ATOMIC_RELEASE);
    return (piano_span *)(uintptr_t)((uint64_t)gen << 32 | (i + 1));
}

PIANO_API void piano_span_field(piano_span *h, const char *key, const char *value)
{
    struct span_obj *o = span_of(h, "piano_span_field", NULL);
    if (!o || !key)
        return;
    int saved = errno;
    uint32_t cur = __atomic_load_n(&o->key, __ATOMIC_RELAXED);
    const struct span_key *c = &keys[cur];
    char buf[PIANO_SPAN_NAME_MAX];
    size_t cn = strlen(c->name), n = 0;
    if (c->base == cur || (cn && c->name[cn - 1] == '}')) {   /* name, or name{k=v} */
        n = append(buf, n, c->name, c->base == cur ? cn : cn - 1);
        n = append(buf, n, c->base == cur ? "{" : ",", 1);
        n = append(buf, n, key, strlen(key));
        n = append(buf, n, "=", 1);
        n = append(buf, n, value ? value : "", value ? strlen(value) : 0);
        n = append(buf, n, "}", 1);
    } else {
        n = append(buf, n, c->name, cn);   /* name{...}, or cut: stays */
    }
    buf[n] = 0;
    __atomic_store_n(&o->key, key_get(buf, c->base), __ATOMIC_RELAXED);
    errno = saved;
}

PIANO_API void piano_span_enter(piano_span *h)
{
    struct span_obj *o = span_of(h, "piano_span_enter", NULL);
    if (!o)
        return;
    uint32_t k = __atomic_load_n(&o->key, __ATOMIC_RELAXED);
    __atomic_store_n(&o->frame_key, k, __ATOMIC_RELAXED);
    uint64_t t = span_push(&keys[k].site);
    if (!t)
        t = piano_now();
    if (__atomic_fetch_add(&o->entered, 1, __ATOMIC_ACQ_REL) == 0)
        __atomic_store_n(&o->enter_tick, t, __ATOMIC_RELEASE);
}

PIANO_API void piano_span_exit(piano_span *h)
{
    struct span_obj *o = span_of(h, "piano_span_exit", NULL);
    if (!o)
        return;
    uint64_t t = piano_now();
    span_pop(&keys[__atomic_load_n(&o->frame_key, __ATOMIC_RELAXED)].site, t);
    uint32_t e = __atomic_load_n(&o->entered, __ATOMIC_ACQUIRE);
    while (e) {
        uint64_t t0 = __atomic_load_n(&o->enter_tick, __ATOMIC_ACQUIRE);
        if (__atomic_compare_exchange_n(&o->entered, &e, e - 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            if (e == 1)
                __atomic_fetch_add(&o->busy, t > t0 ? t - t0 : 0, __ATOMIC_RELAXED);
            return;
        }
    }
    if (!o->forked && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        say("piano: piano_span_exit on span \"%s\", which is not entered: ignored, and later misuses of span handles "
            "too", keys[__atomic_load_n(&o->key, __ATOMIC_RELAXED)].name);
}

PIANO_API void piano_span_close(piano_span *h)
{
    uint32_t i;
    struct span_obj *o = span_of(h, "piano_span_close", &i);
    if (!o)
        return;
    uint32_t gen = (uint32_t)((uint64_t)(uintptr_t)h >> 32);
    if (!__atomic_compare_exchange_n(&o->gen, &gen, gen + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        span_of(h, "piano_span_close", NULL);   /* closed meanwhile by another thread: told */
        return;
    }
    uint64_t t = piano_now();
    /* Closed while entered: its frame on this thread ends now (on others, at their next exit or end). */
    if (__atomic_load_n(&o->entered, __ATOMIC_ACQUIRE))
        span_pop(&keys[__atomic_load_n(&o->frame_key, __ATOMIC_RELAXED)].site, t);
    if (!__atomic_load_n(&spans_ended, __ATOMIC_ACQUIRE))
        span_record(__atomic_load_n(&o->key, __ATOMIC_RELAXED), t - o->open_tick, busy_at(o, t), 0);
    obj_free(i);
}

/* ---------------------------------------------------------------- snapshots */

/* The snapshot thread (snap.c): each span name's figures of the list
 * PIANO_SPAN_FIGURES so far into out (PIANO_SPAN_F_N per name, by record
 * index; zeros for a name without a record). Spans are counted as they close:
 * one open at a snapshot is in the snapshot after its close, whole. Returns
 * the names read. */
uint32_t spans_snap_read(uint64_t *out)
{
    uint32_t n = __atomic_load_n(&n_keys, __ATOMIC_ACQUIRE);
    unsigned char *m = __atomic_load_n(&spans_map, __ATOMIC_ACQUIRE);
    for (uint32_t k = 0; k < n; k++) {
        uint64_t *o = out + (size_t)k * PIANO_SPAN_F_N;
        const struct piano_spool_span *r = m ? (const struct piano_spool_span *)(m + (size_t)k * PIANO_SPAN_REC_SIZE) : NULL;
        if (r && __atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) == PIANO_SPAN_MAGIC)
            piano_span_figures_read(r, o);
        else
            memset(o, 0, PIANO_SPAN_F_N * sizeof *o);
    }
    return n;
}

/* ---------------------------------------------------------------- the run's end, fork */

/* The run ends at tick end: every span still open is counted, unfinished,
 * timed to the end. Later closes record nothing. */
void spans_finish(uint64_t end)
{
    if (__atomic_exchange_n(&spans_ended, 1, __ATOMIC_ACQ_REL))
        return;
    uint32_t n = __atomic_load_n(&slab_next, __ATOMIC_ACQUIRE);
    if (n > SPAN_CHUNKS * SPAN_CHUNK)
        n = SPAN_CHUNKS * SPAN_CHUNK;
    for (uint32_t i = 0; i < n; i++) {
        if (!__atomic_load_n(&chunks[i >> SPAN_CHUNK_BITS], __ATOMIC_ACQUIRE)) {
            i |= SPAN_CHUNK - 1;
            continue;
        }
        struct span_obj *o = obj_at(i);
        if (!(__atomic_load_n(&o->gen, __ATOMIC_ACQUIRE) & 1))
            continue;
        uint64_t wall = end > o->open_tick ? end - o->open_tick : 0;
        span_record(__atomic_load_n(&o->key, __ATOMIC_RELAXED), wall, busy_at(o, end), 1);
    }
}

/* In a forked child. fork_tick 0: at the start of the child's handler, the
 * parent's spans file is let go (whatever follows: the child never writes
 * it). Otherwise the child's run is made: its own spans file, with the names
 * known; spans open at the fork are the child's from fork_tick (wall and
 * busy from there), not entered (their enters were the parent's threads'). */
void spans_fork_child(uint64_t fork_tick)
{
    if (!fork_tick) {
        pthread_mutex_init(&keys_lock, NULL);
        if (spans_map)
            munmap(spans_map, PIANO_SPANS_FILE_SIZE);
        spans_map = NULL;
        spans_fd_failed = 0;
        return;
    }
    if (n_keys) {
        for (uint32_t k = 0; k < n_keys; k++)
            keys[k].rec_ok = 0;
        for (uint32_t k = 0; k < n_keys; k++)
            rec_make(k);
    }
    uint32_t n = slab_next < SPAN_CHUNKS * SPAN_CHUNK ? slab_next : SPAN_CHUNKS * SPAN_CHUNK;
    for (uint32_t i = 0; i < n; i++) {
        if (!chunks[i >> SPAN_CHUNK_BITS]) {
            i |= SPAN_CHUNK - 1;
            continue;
        }
        struct span_obj *o = obj_at(i);
        if (!(o->gen & 1))
            continue;
        o->open_tick = fork_tick;
        o->busy = 0;
        o->entered = 0;
        o->forked = 1;
    }
}
