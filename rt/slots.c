/*
 * slots.c - the states file (spool.h): a slot per thread (its state, then its
 * frame buffer), mapped 16 at a time, prefilled, released, and a short
 * thread's slot reused by the next thread (its records appended to the ended
 * file); a state written out of anonymous memory.
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

/* ---------------------------------------------------------------- thread slots */

unsigned char spool_zeros[64 << 10];   /* never written: .bss, no file bytes */
const unsigned char spool_pad_zeros[8];

/* Makes states (fd) at least `end` bytes long, never shorter: other threads
 * make their slots at the same time, without a lock (a signal handler's state
 * is made inside the handler), and ftruncate could shrink the file under
 * another's mapping (SIGBUS). Allocates the slot's last page, padding.
 * Returns 0, or -1 with errno set. */
int states_extend(int fd, uint64_t end)
{
    if (fallocate(fd, 0, (off_t)(end - 4096), 4096) == 0)
        return 0;
    if (errno != EOPNOTSUPP)
        return -1;
    return write_all(fd, "", 1, (off_t)(end - 1));   /* a file system without fallocate */
}

/* Maps `len` bytes of states from `off` (one slot, or a group of them).
 * Falls back to anonymous memory (written out at thread or process end) when
 * the disk is nearly full, since a write to a sparse mapping that the disk
 * cannot back would raise SIGBUS, and when the program's file-size limit is
 * below the range's end. NULL if neither can be mapped. */
static void *map_states(uint64_t off, uint64_t len, int *anon)
{
    uint64_t end = off + len;
    struct statvfs vfs;
    struct rlimit fsize;
    *anon = 1;
    /* The disk's room is asked of the file (fstatvfs), not of the folder's
     * path: a program that changed its user can no longer look it up. */
    int fd = end <= (uint64_t)INT64_MAX ? run_open(PIANO_SPOOL_STATES, O_RDWR) : -1;
    if (fd >= 0 && fstatvfs(fd, &vfs) == 0 &&
        (uint64_t)vfs.f_bavail * vfs.f_frsize > PIANO_SLOT_SIZE + (1ull << 30) &&
        getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur >= end) {
        void *p = states_extend(fd, end) == 0
                      ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, (off_t)off)
                      : MAP_FAILED;
        close(fd);
        fd = -1;
        if (p != MAP_FAILED) {
            /* Faults on this sparse slot must not read ahead: it is all holes,
             * and read-ahead would zero-fill up to megabytes of the frame
             * buffer at its first record (most of a short thread's start). */
            madvise(p, len, MADV_RANDOM);
            *anon = 0;
            return p;
        }
    }
    if (fd >= 0)
        close(fd);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14 */
#endif

/* ---------------------------------------------------------------- warm slot 0 */

/* A spare run folder (spool.h) taken by a new run holds the last run's
 * states. Emptied by ftruncate, its pages are freed, and the new run's first
 * touch of each page then goes through the file system again: ~9 us a page
 * on the bench VM, where a page still in the page cache costs ~3.5 us to
 * map and zero, and the truncation itself 0.2-4 ms (bench/README.md, "Warm
 * spare states"). Most runs that take a spare are the same program again,
 * whose first thread touches the same pages of slot 0. So slot 0's pages in
 * use are kept when they are all in memory and few: its header page is
 * zeroed at once (a reader skips a slot whose magic is 0, so the folder can
 * be published before the rest is zeroed), the rest of what it held is
 * listed here, and whichever thread maps slot 0 first zeroes it through its
 * mapping before writing its header (map_thread). Anything past slot 0 is
 * cut off. A forked child's folder is always emptied whole: it copies the
 * forking thread's state into its slot, not writing every byte. */
#define WARM_RANGES_MAX 32u
static struct {
    uint64_t off, len;
} warm[WARM_RANGES_MAX];
static uint32_t warm_n;   /* read and cleared by map_thread(0), once: slot 0 is taken once */

void states_warm_forget(void)
{
    warm_n = 0;
}

/* Whether every page of fd's [off, off + len) (a mapping p of fd from 0) is in
 * the page cache: a page that is not would be read from the disk to be zeroed. */
static int warm_resident(const char *p, uint64_t off, uint64_t len)
{
    unsigned char vec[256];
    for (uint64_t at = off; at < off + len;) {
        uint64_t n = (off + len - at + 4095) / 4096;
        if (n > sizeof vec)
            n = sizeof vec;
        if (mincore((void *)(p + at), n * 4096, vec) != 0)
            return 0;
        for (uint64_t i = 0; i < n; i++)
            if (!(vec[i] & 1))
                return 0;
        at += n * 4096;
    }
    return 1;
}

/* Keeps the states file fd (O_RDWR) of a spare folder warm, as above: its
 * slot 0 header page zeroed, the data past slot 0 cut off, the other data
 * ranges of slot 0 listed for map_thread. Returns 0, or -1 when it cannot be
 * (too much, not all in memory, a file system without SEEK_DATA): the caller
 * then truncates the file. */
int states_keep_warm(int fd)
{
    warm_n = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 4096)
        return -1;
    uint64_t total = 0, at = 4096, end = (uint64_t)st.st_size < PIANO_SLOT_SIZE ? (uint64_t)st.st_size : PIANO_SLOT_SIZE;
    while (at < end) {
        off_t data = lseek(fd, (off_t)at, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break;   /* holes to the end */
        off_t hole = data >= 0 ? lseek(fd, data, SEEK_HOLE) : -1;
        if (hole < 0 || (uint64_t)data >= end)
            break;
        uint64_t to = (uint64_t)hole < end ? (uint64_t)hole : end;
        total += to - (uint64_t)data;
        if (warm_n == WARM_RANGES_MAX || total > PIANO_SPARE_WARM_MAX)
            return warm_n = 0, -1;
        warm[warm_n].off = (uint64_t)data;
        warm[warm_n++].len = to - (uint64_t)data;
        at = to;
    }
    if (at < end && lseek(fd, (off_t)at, SEEK_DATA) < 0 && errno != ENXIO)
        return warm_n = 0, -1;   /* no SEEK_DATA: what is in use is not known */
    char *p = mmap(NULL, end, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
    int resident = p != MAP_FAILED;
    for (uint32_t i = 0; resident && i < warm_n; i++)
        resident = warm_resident(p, warm[i].off, warm[i].len);
    if (p != MAP_FAILED)
        munmap(p, end);
    if (!resident || ((uint64_t)st.st_size > PIANO_SLOT_SIZE && ftruncate(fd, (off_t)PIANO_SLOT_SIZE) != 0) ||
        pwrite(fd, spool_zeros, 4096, 0) != 4096)
        return warm_n = 0, -1;
    return 0;
}

/* Slot 0's kept pages (above) zeroed before its thread writes its header:
 * through the mapping when the state is in states, else punched out of the
 * file (an anonymous state writes only the parts it uses). */
static void warm_clear(struct piano_thread *ts, int anon)
{
    uint32_t n = warm_n;
    warm_n = 0;
    if (!anon) {
        for (uint32_t i = 0; i < n; i++) {
            madvise((char *)ts + warm[i].off, warm[i].len, MADV_POPULATE_WRITE);   /* one call, not a fault a page */
            memset((char *)ts + warm[i].off, 0, warm[i].len);
        }
        return;
    }
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_STATES, O_RDWR);
    for (uint32_t i = 0; fd >= 0 && i < n; i++) {
        if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)warm[i].off, (off_t)warm[i].len) == 0)
            continue;
        for (uint64_t at = warm[i].off, e = warm[i].off + warm[i].len; at < e; at += sizeof spool_zeros)
            if (write_all(fd, spool_zeros, e - at < sizeof spool_zeros ? e - at : sizeof spool_zeros, (off_t)at) != 0)
                break;
    }
    if (fd >= 0)
        close(fd);
    quiet_end(&q);
}

/* Slots are mapped SLOT_GROUP at a time (consecutive slots, consecutive in
 * states too: one mmap) and unmapped when every slot of the group has ended.
 * Mapping and unmapping each thread's slot cost a short thread more than its
 * records did: an munmap interrupts the other CPUs running the program to
 * flush their TLBs (bench/README.md, "Slots mapped in groups"). A group's
 * first thread maps it; two that race both map it, and the loser unmaps its
 * own (no lock: a signal handler's state is made inside the handler). Slots
 * past SLOT_GROUPS_MAX groups, or when a group cannot be mapped (an
 * address-space limit), are mapped one by one as before. */
#define SLOT_GROUP 16u
#define SLOT_GROUPS_MAX 65536u   /* 1,048,576 threads; a table of 1 MiB, touched as used */
#define SLOT_GROUP_SIZE ((uint64_t)SLOT_GROUP * PIANO_SLOT_SIZE)
static struct slot_group {
    _Atomic uintptr_t base;   /* the group's mapping; 0: none */
    _Atomic uint32_t ended;   /* its slots released (or never made) */
} slot_groups[SLOT_GROUPS_MAX];
/* Slots waiting to be reused (slot_reuse, below). */
#define SLOT_FREE_MAX 64u
static struct {
    uint32_t slot, room;
} slot_free[SLOT_FREE_MAX];
static uint32_t slot_free_n;   /* under g.threads_lock */
/* Threads inside slot_reuse: the run's store waits for them (slot_reuse_wait). */
static _Atomic uint32_t slots_reusing;

/* Maps group k in states; 0 when it cannot be, or only in anonymous memory
 * (its threads' slots are then mapped one by one, each choosing for itself). */
static uintptr_t group_map(uint32_t k)
{
    int anon;
    char *p = map_states(piano_slot_offset(k * SLOT_GROUP), SLOT_GROUP_SIZE, &anon);
    if (p && anon)
        munmap(p, SLOT_GROUP_SIZE);
    if (!p || anon)
        return 0;
    uintptr_t seen = 0;
    if (atomic_compare_exchange_strong(&slot_groups[k].base, &seen, (uintptr_t)p))
        return (uintptr_t)p;
    munmap(p, SLOT_GROUP_SIZE);   /* another thread of the group mapped it first */
    return seen;
}

/* Writes zeros over the pages of slot n that a thread's first calls touch
 * first, in two runs: the header's page (with the first hash and the shadow
 * stack's first slots), and the
 * frame function list's first with the frame buffer's first (spool.h), whose
 * blocks this reserves (chunk_room). The pages are then in the page cache:
 * each first touch is a minor fault, where a first write into a hole of the
 * file costs several microseconds (bench/README.md, "Slots mapped in groups").
 * Nothing is lost if it fails: the pages fault in as before. The kernel's
 * own population (slot_populate) is used when it has it. */
static void slot_prefill_by_write(struct piano_thread *ts, uint32_t n)
{
    uint64_t at = piano_slot_offset(n);
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_STATES, O_RDWR);
    if (fd >= 0 && write_all(fd, spool_zeros, 4096, (off_t)at) == 0 &&
        write_all(fd, spool_zeros, 4096 + CHUNK_ROOM_FIRST, (off_t)(at + PIANO_SLOT_BUF - 4096)) == 0)
        ts->chunk_room = CHUNK_ROOM_FIRST;
    if (fd >= 0)
        close(fd);
    quiet_end(&q);
}

/* Makes the pages a thread's first calls write (the header's, with the shadow
 * stack's first slots; the first page of its contexts, function records and
 * histogram pages, the frame function list's last with the frame buffer's
 * first) present and writable in one system call each, with no descriptor
 * (MADV_POPULATE_WRITE): their blocks are reserved as by a write, so the
 * buffer's first bytes are reserved (chunk_room), and the thread's first
 * calls take no fault (a first touch of a hole of the file, through the
 * fault path, costs several microseconds on a virtual machine: bench/README.md,
 * "A new thread without faults"). Returns 0, or -1 when the kernel does not
 * have it (before Linux 5.14: the caller writes zeros instead). */
static int slot_populate(struct piano_thread *ts)
{
    static _Atomic int unsupported;
    if (atomic_load_explicit(&unsupported, memory_order_relaxed))
        return -1;
    char *b = (char *)ts;
    if (madvise(b + PIANO_SLOT_BUF - 4096, 4096 + CHUNK_ROOM_FIRST, MADV_POPULATE_WRITE) != 0) {
        if (errno != EINVAL)
            return 0;   /* the disk is full, or memory: the pages fault in when touched */
        atomic_store_explicit(&unsupported, 1, memory_order_relaxed);
        return -1;
    }
    static const uint64_t first[][2] = {
        { 0, 4096 },   /* the header, the first hash, the shadow stack's first slots */
        { PIANO_OFF_NODES, 4096 },
        { PIANO_OFF_FNS, 4096 },
        { PIANO_OFF_PAGES, 4096 },
    };
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        if (madvise(b + first[i][0], first[i][1], MADV_POPULATE_WRITE) != 0)
            break;
    ts->chunk_room = CHUNK_ROOM_FIRST;   /* after the header's page is in */
    return 0;
}

static void slot_prefill(struct piano_thread *ts, uint32_t n)
{
    if (slot_populate(ts) != 0)
        slot_prefill_by_write(ts, n);
}

/* Maps slot n of states: a state, then its frame buffer; no file made (anon:
 * set when it is in anonymous memory, see map_states). reused_room: the slot
 * was reused (slot_take), its pages are present and that many bytes of its
 * frame buffer reserved; 0 for a new slot. */
struct piano_thread *map_thread(uint32_t n, uint32_t reused_room, int *anon)
{
    struct piano_thread *ts = NULL;
    uint32_t k = n / SLOT_GROUP;
    /* In a seccomp sandbox (sandbox.c), a slot of a group already mapped, as
     * it is: mapping or filling one takes system calls. */
    int sandboxed = atomic_load(&g.sandboxed);
    if (sandboxed) {
        uintptr_t b = k < SLOT_GROUPS_MAX ? atomic_load(&slot_groups[k].base) : 0;
        if (!b)
            return NULL;
        *anon = 0;
        ts = (struct piano_thread *)(b + (n % SLOT_GROUP) * PIANO_SLOT_SIZE);
        if (reused_room)
            ts->chunk_room = reused_room;
        return ts;
    }
    if (k < SLOT_GROUPS_MAX) {
        uintptr_t b = atomic_load(&slot_groups[k].base);
        if (!b)
            b = group_map(k);
        if (b) {
            *anon = 0;
            ts = (struct piano_thread *)(b + (n % SLOT_GROUP) * PIANO_SLOT_SIZE);
        }
    }
    if (!ts)
        ts = map_states(piano_slot_offset(n), PIANO_SLOT_SIZE, anon);
    if (ts && n == 0 && warm_n)
        warm_clear(ts, *anon);
    if (ts && !*anon && reused_room)
        ts->chunk_room = reused_room;
    else if (ts && !*anon)
        slot_prefill(ts, n);
    return ts;
}

/* Slot n is done with (its thread ended, or its state could not be made):
 * the last of its group unmaps the group. */
void slot_ended(uint32_t n)
{
    uint32_t k = n / SLOT_GROUP;
    if (k >= SLOT_GROUPS_MAX || atomic_fetch_add(&slot_groups[k].ended, 1) + 1 != SLOT_GROUP)
        return;
    uintptr_t b = atomic_exchange(&slot_groups[k].base, 0);
    if (b)
        munmap((void *)b, SLOT_GROUP_SIZE);
}

/* Whether ts, of slot n, lies in its group's mapping (not mapped alone). */
static int in_group(const struct piano_thread *ts, uint32_t n)
{
    uint32_t k = n / SLOT_GROUP;
    uintptr_t b = k < SLOT_GROUPS_MAX ? atomic_load(&slot_groups[k].base) : 0;
    return b && (uintptr_t)ts == b + (n % SLOT_GROUP) * PIANO_SLOT_SIZE;
}

/* Bytes of a state beyond which its end gives its pages back at once
 * (MADV_DONTNEED) rather than when its group is unmapped: a short thread's
 * few pages wait, a thread that filled megabytes does not hold them. */
#define SLOT_KEEP_MAX (256u << 10)

/* The thread of ts (slot n) has ended and its records are in states (or kept
 * elsewhere): its slot is released. */
void slot_release(struct piano_thread *ts, uint32_t n, uint64_t bytes_used)
{
    if (!in_group(ts, n))
        munmap(ts, PIANO_SLOT_SIZE);
    else if (bytes_used > SLOT_KEEP_MAX)
        madvise(ts, PIANO_SLOT_SIZE, MADV_DONTNEED);
    slot_ended(n);
}

/* A forked child: the parent's slots are not its own. Unmaps every group but
 * the range of keep (the forking thread's state, moved into the child's own
 * states at the same address) and forgets them. */
void slots_forget(const struct piano_thread *keep)
{
    uint32_t groups = (atomic_load(&g.next_slot) + SLOT_GROUP - 1) / SLOT_GROUP;
    if (groups > SLOT_GROUPS_MAX)
        groups = SLOT_GROUPS_MAX;
    for (uint32_t k = 0; k < groups; k++) {
        char *b = (char *)atomic_load(&slot_groups[k].base);
        if (b && keep && (const char *)keep >= b && (const char *)keep < b + SLOT_GROUP_SIZE) {
            munmap(b, (size_t)((const char *)keep - b));
            munmap((char *)keep + PIANO_SLOT_SIZE, (size_t)(b + SLOT_GROUP_SIZE - (const char *)keep) - PIANO_SLOT_SIZE);
        } else if (b) {
            munmap(b, SLOT_GROUP_SIZE);
        }
        atomic_store(&slot_groups[k].base, 0);
        atomic_store(&slot_groups[k].ended, 0);
    }
    slot_free_n = 0;   /* the parent's */
}

/* ---------------------------------------------------------------- reused slots */

/* A new thread's first touch of each page of a new slot goes through the file
 * system (several microseconds a page on a virtual machine, and a page-table
 * page for each 2 MiB region it touches): most of what a short thread cost
 * (bench/README.md, "A short thread's slot reused"). So the slot of a short
 * thread that ends is given to the next new thread: its records in use are
 * appended to the ended file (one write of a few KiB), the slot's pages in
 * use are zeroed, and the slot waits here with its pages present. Only a
 * state whose pages in use are all known is reused: a few contexts, histogram
 * pages and frame bytes, its context hash still in the header's page, no
 * signal handlers' state. While snapshots are taken, the thread's figures
 * are handed to the snapshot thread as its slot is freed (snap_hand_over),
 * which reads slots by number; not reused before that thread's buffers
 * exist (snap_reuse_ok: its figures would be counted nowhere). The shadow stack's slots
 * past the header's page are not zeroed: a call writes every field of its
 * slot, and a reader reads none above the top but the one above it, whose
 * stale entry tick is older than the next thread's own. */
#define REUSE_NODES_MAX 64u
#define REUSE_PAGES_MAX 96u   /* of 256 bytes, page tables included */
#define REUSE_BUF_MAX (64u << 10)
/* header, shadow stack, contexts, a range per histogram page, frame buffer, a
 * function record per function of a context (the root's excepted) */
_Static_assert(4 + REUSE_PAGES_MAX + REUSE_NODES_MAX - 1 <= PIANO_ENDED_PARTS_MAX, "an ended record's parts fit");
static int reuse_off;          /* writing the ended file failed once: no more reuse */

/* A reused slot for a new thread's own state, if one waits: 1 with *slot and
 * *room (its frame buffer's bytes reserved); 0 when none. */
int slot_take(uint32_t *slot, uint32_t *room)
{
    pthread_mutex_lock(&g.threads_lock);
    uint32_t n = slot_free_n;
    int got = n > 0;
    if (got) {
        *slot = slot_free[n - 1].slot;
        *room = slot_free[n - 1].room;
        __atomic_store_n(&slot_free_n, n - 1, __ATOMIC_RELAXED);   /* read unlocked by slot_reuse */
    }
    pthread_mutex_unlock(&g.threads_lock);
    return got;
}


/* The ended thread ts (dead, its calls closed, its buffer done with) is
 * stored in the ended file and its slot zeroed and kept for the next thread.
 * Returns 1 when done so (the slot is then reused, or released when enough
 * wait already); 0 when the slot must be released as before. */
static int slot_reuse_state(struct piano_thread *ts)
{
    uint32_t slot = ts->slot, n_nodes = ts->n_nodes, n_pages = ts->n_pages;
    const struct piano_chunk_hdr *h = (const void *)((const char *)ts + PIANO_SLOT_BUF);
    uint64_t buf_used = __atomic_load_n(&h->used, __ATOMIC_RELAXED);
    if (reuse_off || ts->anon || ts->sig || ts->signal_of || !in_group(ts, slot) ||
        ts->contexts_truncated || ts->deep_calls || ts->hist_carried || hash_mask(ts) >= PIANO_HASH_MIN || n_nodes > REUSE_NODES_MAX ||
        n_nodes < 1 || n_pages > REUSE_PAGES_MAX || n_pages < 1 || piano_depth(ts->depth) != 0 ||
        buf_used > REUSE_BUF_MAX || __atomic_load_n(&slot_free_n, __ATOMIC_RELAXED) >= SLOT_FREE_MAX ||
        !snap_reuse_ok())
        return 0;
    struct piano_ended_part parts[PIANO_ENDED_PARTS_MAX];
    uint32_t np = 0;
    parts[np++] = (struct piano_ended_part){ 0, sizeof *ts };
    parts[np++] = (struct piano_ended_part){ PIANO_OFF_STACK, 2 * sizeof(struct piano_slot) };
    parts[np++] = (struct piano_ended_part){ PIANO_OFF_NODES, (uint64_t)n_nodes * sizeof(struct piano_node) };
    /* A histogram page's counters in use: its buckets between the first and
     * the last it counted (a function's calls take alike times), not 256 bytes. */
    const uint32_t *pages = PIANO_PAGES(ts);
    for (uint32_t p = 0; p < n_pages; p++) {
        const uint32_t *w = pages + (size_t)p * PIANO_PAGE_WORDS;
        uint32_t first = 0, last = PIANO_PAGE_WORDS;
        while (first < PIANO_PAGE_WORDS && !w[first])
            first++;
        while (last > first && !w[last - 1])
            last--;
        if (first < last)
            parts[np++] = (struct piano_ended_part){ PIANO_OFF_PAGES + ((uint64_t)p * PIANO_PAGE_WORDS + first) * 4,
                                                     (uint64_t)(last - first) * 4 };
    }
    if (h->magic == PIANO_SPOOL_MAGIC)
        parts[np++] = (struct piano_ended_part){ PIANO_SLOT_BUF, sizeof *h + buf_used };
    /* The function records it wrote: those of the functions of its contexts
     * (a call's record is written only where its context is found). */
    const struct piano_node *nodes = PIANO_NODES(ts);
    for (uint32_t i = 1; i < n_nodes; i++) {
        uint32_t fn = nodes[i].fn, seen = 0;
        if (fn >= PIANO_FN_CAP)
            return 0;
        for (uint32_t k = 1; k < i && !seen; k++)
            seen = nodes[k].fn == fn;
        if (!seen)
            parts[np++] = (struct piano_ended_part){ PIANO_OFF_FNS + (uint64_t)fn * sizeof(struct piano_fnrec),
                                                     sizeof(struct piano_fnrec) };
    }
    struct iovec iov[2 + 2 * PIANO_ENDED_PARTS_MAX];
    int niov = 2;
    uint64_t size = sizeof(struct piano_ended_hdr) + np * sizeof *parts;
    for (uint32_t i = 0; i < np; i++) {
        iov[niov++] = (struct iovec){ (char *)ts + parts[i].off, parts[i].len };
        if (parts[i].len % 8)
            iov[niov++] = (struct iovec){ (void *)spool_pad_zeros, 8 - parts[i].len % 8 };
        size += (parts[i].len + 7) & ~7ull;
    }
    struct piano_ended_hdr eh = { PIANO_ENDED_MAGIC, (uint32_t)size, ts->thread, np, 0, 0 };
    iov[0] = (struct iovec){ &eh, sizeof eh };
    iov[1] = (struct iovec){ parts, np * sizeof *parts };
    uint64_t check = piano_ended_start(size);
    for (int i = 0; i < niov; i++)
        if (iov[i].iov_base != spool_pad_zeros)   /* a part's padding is mixed with its last bytes */
            check = piano_ended_mix(check, iov[i].iov_base, iov[i].iov_len);
    eh.check = check;
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_ENDED, O_WRONLY | O_CREAT | O_APPEND);
    ssize_t w = fd >= 0 ? writev(fd, iov, niov) : -1;
    if (fd >= 0)
        close(fd);
    quiet_end(&q);
    if (w != (ssize_t)size) {
        reuse_off = 1;   /* a full disk: the slot keeps the records; a record cut short is skipped */
        return 0;
    }
    /* Its records are in the ended file: a reader that finds the slot from
     * now on skips it (no magic), then finds it zero, or the next thread's.
     * Its figures go to the snapshots' count of ended threads as its magic
     * is cleared (snap.c). */
    uint32_t room = ts->chunk_room;
    snap_hand_over(ts);
    for (uint32_t i = 2; i < np; i++)
        memset((char *)ts + parts[i].off, 0,
               parts[i].len + (parts[i].off == PIANO_SLOT_BUF ? PIANO_PV_SLACK : 0));
    memset((char *)ts + sizeof ts->magic, 0, 4096 - sizeof ts->magic);
    int kept = 0;
    pthread_mutex_lock(&g.threads_lock);
    uint32_t n = slot_free_n;
    if (n < SLOT_FREE_MAX) {
        slot_free[n].slot = slot;
        slot_free[n].room = room;
        __atomic_store_n(&slot_free_n, n + 1, __ATOMIC_RELAXED);
        kept = 1;
    }
    pthread_mutex_unlock(&g.threads_lock);
    if (!kept)
        slot_release(ts, slot, 0);
    return 1;
}

/* slot_reuse_state, unless the run is being stored: the store reads the
 * slots, so it waits for a reuse begun before it, and none begins after (a
 * slot zeroed under it would lose its records). */
int slot_reuse(struct piano_thread *ts)
{
    atomic_fetch_add(&slots_reusing, 1);
    int done = !__atomic_load_n(&g.finished, __ATOMIC_SEQ_CST) && slot_reuse_state(ts);
    atomic_fetch_sub(&slots_reusing, 1);
    return done;
}

/* The run is being stored (g.finished is set): returns once no thread is
 * reusing its slot. */
void slot_reuse_wait(void)
{
    while (atomic_load(&slots_reusing))
        sched_yield();
}


/* The parts of a thread's state in use, each {offset in the slot, bytes}
 * (0 bytes: none), the state's last byte last (the import sees it whole). */
void state_parts(const struct piano_thread *ts, struct piano_ended_part parts[PIANO_STATE_PARTS])
{
    uint32_t nfn = atomic_load(&g.next_fn);
    if (nfn > PIANO_FN_CAP)
        nfn = PIANO_FN_CAP;
    /* The slots in use, and one more: the last closed call's end tick. */
    uint32_t depth = piano_depth(ts->depth) < PIANO_STACK_CAP ? piano_depth(ts->depth) + 1 : PIANO_STACK_CAP;
    const struct piano_ended_part all[PIANO_STATE_PARTS] = {
        { 0, PIANO_OFF_STACK },   /* the header's page */
        { PIANO_OFF_STACK, (depth + 1ull) * sizeof(struct piano_slot) },
        { PIANO_OFF_NODES, (uint64_t)ts->n_nodes * sizeof(struct piano_node) },
        { PIANO_OFF_NODES + (uint64_t)PIANO_NODE_CAP * sizeof(struct piano_node),
          ts->contexts_truncated ? (uint64_t)nfn * sizeof(struct piano_node) : 0 },
        { PIANO_OFF_FNS, (uint64_t)nfn * sizeof(struct piano_fnrec) },
        { PIANO_OFF_PAGES, (uint64_t)ts->n_pages * PIANO_PAGE_BYTES },
        { PIANO_OFF_CARRY, ts->hist_carried ? (uint64_t)ts->n_pages * PIANO_PAGE_BYTES : 0 },
        { PIANO_OFF_HASH, hash_mask(ts) < PIANO_HASH_MIN ? 0 : ((uint64_t)hash_mask(ts) + 1) * sizeof(uint32_t) },
        { PIANO_THREAD_FILE_SIZE - 1, 1 },
    };
    memcpy(parts, all, sizeof all);
}

/* Writes the parts of a thread's state in use into fd at base (its slot's
 * offset in states), each at its offset. Returns 0, or -1. */
int write_state(int fd, const struct piano_thread *ts, uint64_t base)
{
    struct piano_ended_part parts[PIANO_STATE_PARTS];
    state_parts(ts, parts);
    for (size_t i = 0; i < PIANO_STATE_PARTS; i++)
        if (parts[i].len &&
            write_all(fd, (const char *)ts + parts[i].off, parts[i].len, (off_t)(base + parts[i].off)))
            return -1;
    return 0;
}

/* Appends varint v at o. Returns the new end. */
static unsigned char *put_varint(unsigned char *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    return o;
}

/* Where the first run of 3 zero bytes at or after `from` starts (n: none),
 * looked for 8 bytes at a time: a word holds whole the runs that start at
 * its first 6 bytes; the last few bytes a byte at a time. */
static size_t literal_end(const unsigned char *src, size_t from, size_t n)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    size_t k = from;
    for (; k + 8 <= n; k += 6) {
        uint64_t w;
        memcpy(&w, src + k, 8);
        uint64_t zero = ~(((w & low7) + low7) | w | low7);   /* bit 7 of each byte: it is 0 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint64_t three = zero & zero >> 8 & zero >> 16 & 0x0000808080808080ull;   /* starts 0..5 */
        if (three)
            return k + (size_t)__builtin_ctzll(three) / 8;
#else
        uint64_t three = zero & zero << 8 & zero << 16 & 0x8080808080800000ull;
        if (three)
            return k + (size_t)__builtin_clzll(three) / 8;
#endif
    }
    for (size_t run = 0; k < n; k++) {
        run = src[k] ? 0 : run + 1;
        if (run == 3)
            return k - 2;
    }
    return n;
}

/* Codes n bytes of src at o as tokens of a packed record (spool.h
 * PIANO_PACKED_MAGIC): zero runs of 3 bytes or more are counted, the rest is
 * copied. Zeros are skipped a word at a time: most of a state is zeros; a
 * literal's end (3 zeros) is looked for a word at a time too.
 * Writes at most 2 n + 20 bytes. Returns the new end. */
static unsigned char *pack_bytes(unsigned char *o, const unsigned char *src, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t z = i;
        while (z < n) {
            uint64_t w;
            if (z + 8 <= n) {
                memcpy(&w, src + z, 8);
                if (!w) {
                    z += 8;
                    continue;
                }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                z += (size_t)__builtin_ctzll(w) / 8;   /* the first byte not zero */
#else
                z += (size_t)__builtin_clzll(w) / 8;
#endif
                break;
            }
            if (src[z])
                break;
            z++;
        }
        size_t e = literal_end(src, z, n);
        o = put_varint(o, z - i);
        o = put_varint(o, e - z);
        if (e - z <= 16) {   /* most literals are a few bytes: no call */
            for (size_t k = z; k < e; k++)
                *o++ = src[k];
        } else {
            memcpy(o, src + z, e - z);
            o += e - z;
        }
        i = e;
    }
    return o;
}

/* Appends a thread state to the ended file as a packed record (spool.h
 * PIANO_PACKED_MAGIC): its parts in use (state_parts) and its frame buffer as
 * it is now, their zeros counted. The run is left for the next piano-db
 * command (PIANO_STORE=later): a short run's state is 412 KB of parts in
 * use, 54 KB packed. punch: the state is in its slot of states (not
 * anonymous), which nothing writes any more: the slot is made a hole.
 * Returns 0, or -1 (not written: the state is left where it is; an
 * anonymous one the caller writes as dump_anon does). */
int pack_state(struct piano_thread *ts, int punch)
{
    struct piano_ended_part used[PIANO_STATE_PARTS], parts[PIANO_STATE_PARTS + 2];
    state_parts(ts, used);
    uint32_t np = 0;
    parts[np++] = (struct piano_ended_part){ 0, sizeof *ts };   /* the header first, alone: the reader checks it */
    parts[np++] = (struct piano_ended_part){ sizeof *ts, used[0].len - sizeof *ts };
    for (uint32_t i = 1; i < PIANO_STATE_PARTS; i++)
        if (used[i].len)
            parts[np++] = used[i];
    /* The frame buffer, as snapshot_anon_buffer copies it (the thread may go on). */
    struct piano_chunk_hdr *h = (struct piano_chunk_hdr *)ts->chunk, copy = { 0, 0, 0 };
    if (h) {
        copy = (struct piano_chunk_hdr){ h->magic, __atomic_load_n(&h->used, __ATOMIC_ACQUIRE),
                                         __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE) };
        if (copy.used > PIANO_CHUNK_SIZE - sizeof copy)
            copy.used = 0;
        parts[np++] = (struct piano_ended_part){ PIANO_SLOT_BUF, sizeof copy + copy.used };
    }
    uint64_t in = 0;
    for (uint32_t i = 0; i < np; i++)
        in += parts[i].len;
    uint64_t cap = sizeof(struct piano_ended_hdr) + np * sizeof *parts + 2 * in + 20 * (np + 1) + 8;
    if (cap > UINT32_MAX)
        return -1;
    unsigned char *rec = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (rec == MAP_FAILED)
        return -1;
    unsigned char *o = rec + sizeof(struct piano_ended_hdr);
    memcpy(o, parts, np * sizeof *parts);
    o += np * sizeof *parts;
    for (uint32_t i = 0; i < np; i++) {
        if (parts[i].off == PIANO_SLOT_BUF) {
            o = pack_bytes(o, (const unsigned char *)&copy, sizeof copy);
            o = pack_bytes(o, ts->chunk + sizeof copy, copy.used);
        } else {
            o = pack_bytes(o, (const unsigned char *)ts + parts[i].off, parts[i].len);
        }
    }
    while ((o - rec) % 8)
        *o++ = 0;
    uint64_t size = (uint64_t)(o - rec);
    struct piano_ended_hdr eh = { PIANO_PACKED_MAGIC, (uint32_t)size, ts->thread, np, 0, 0 };
    memcpy(rec, &eh, sizeof eh);
    eh.check = piano_ended_mix(piano_ended_start(size), rec, size);
    memcpy(rec, &eh, sizeof eh);
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_ENDED, O_WRONLY | O_CREAT | O_APPEND);
    int ok = fd >= 0 && write(fd, rec, size) == (ssize_t)size;
    if (fd >= 0)
        close(fd);
    munmap(rec, cap);
    /* Its slot is read from the record (spool_read.c takes a thread's record
     * over its slot): its blocks are given back. A slot not given back (a
     * file system without holes) is read as well, and left aside. */
    if (ok && punch && (fd = run_open(PIANO_SPOOL_STATES, O_RDWR)) >= 0) {
        /* the parts' pages only: a hole punched over the whole slot (120 MB)
         * cost milliseconds, walking it */
        uint64_t base = piano_slot_offset(ts->slot), a = 0, b = 0;
        for (uint32_t i = 0; i <= np; i++) {
            /* parts in one page, or in adjacent ones (the header's three),
             * in one punch: each costs a system call and a walk */
            uint64_t pa = i < np ? parts[i].off & ~4095ull : UINT64_MAX;
            uint64_t pb = i < np ? (parts[i].off + parts[i].len + 4095) & ~4095ull : UINT64_MAX;
            if (b > a && (pa < a || pa > b)) {
                fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(base + a), (off_t)(b - a));
                a = b = 0;
            }
            if (b == a) {
                a = pa;
                b = pb;
            } else if (pb > b) {
                b = pb;
            }
        }
        close(fd);
    }
    quiet_end(&q);
    return ok ? 0 : -1;
}

/* Writes an anonymous thread state into its slot of states (used regions
 * only). Returns 0, or -1 (said in one line). */
int dump_anon(struct piano_thread *ts)
{
    piano_spool_name name = piano_spool_slot_name(ts->thread);
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_STATES, O_RDWR);
    int ok = fd >= 0 && write_state(fd, ts, piano_slot_offset(ts->slot)) == 0;
    if (!ok)
        say("piano: cannot write %s in %s: %s", name.s, g.dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    quiet_end(&q);
    return ok ? 0 : -1;
}
