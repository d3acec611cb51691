/*
 * frame_buffer.c - a thread's frame buffer, the tail of its slot: its bytes
 * reserved as frames fill it, a full one stored as a chunk file, and room
 * made for the next frame record (frame_room).
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

/* ---------------------------------------------------------------- frame buffers */

/* Frames are written into one buffer of CHUNK_ROOM_MAX bytes at most per
 * thread, the tail of its slot's mapping (PIANO_CHUNK_SIZE): in states (MAP_SHARED, so a crash keeps
 * it), or anonymous memory for an anonymous thread. A full buffer is copied
 * into the next chunk file f<N>.<K> by one write and reused. Mapping a fresh
 * file per chunk instead took a page fault per 4 KiB written: 4x the CPU time
 * (bench/README.md). */


/* Reserves the frame buffer's bytes up to `room` (from ts->chunk_room) by
 * writing zeros into states, so that a full disk fails here and not as SIGBUS
 * at a record. Written, not fallocated: a block fallocate reserves is
 * allocated at once, and freeing it when states is unlinked issues a discard
 * on a disk mounted with it (one per thread, 0.1-1.5 ms each here), while
 * pages written are reserved only (delayed allocation) until written back.
 * An anonymous buffer needs no reservation. Returns 0, or -1 with errno set. */
static int buffer_reserve(struct piano_thread *ts, uint32_t room)
{
    if (ts->anon) {
        ts->chunk_room = PIANO_CHUNK_SIZE;
        return 0;
    }
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_STATES, O_RDWR);
    uint64_t at = piano_slot_offset(ts->slot) + PIANO_SLOT_BUF;
    int ok = fd >= 0;
    for (uint32_t from = ts->chunk_room; ok && from < room; from += sizeof spool_zeros)
        ok = write_all(fd, spool_zeros, room - from < sizeof spool_zeros ? room - from : sizeof spool_zeros,
                       (off_t)(at + from)) == 0;
    int e = errno;
    if (fd >= 0)
        close(fd);
    quiet_end(&q);
    if (!ok) {
        errno = e;
        return -1;
    }
    ts->chunk_room = room;
    return 0;
}

/* Readies the thread's frame buffer. Returns 0, or -1 with errno set (frames
 * are dropped). */
static int buffer_open(struct piano_thread *ts)
{
    if (ts->chunk_room < CHUNK_ROOM_FIRST && buffer_reserve(ts, CHUNK_ROOM_FIRST) != 0)
        return -1;
    unsigned char *p = (unsigned char *)ts + PIANO_SLOT_BUF;
    struct piano_chunk_hdr *h = (struct piano_chunk_hdr *)p;
    h->magic = PIANO_SPOOL_MAGIC;
    h->used = 0;
    h->seq = ts->chunks;
    ts->chunk = p;
    ts->chunk_used = 0;
    ts->chunk_frames = 0;
    return 0;
}

/* The buffer may have no room for `need` more bytes: more of it is reserved
 * (doubling, up to CHUNK_ROOM_MAX; up to PIANO_CHUNK_SIZE for one record
 * longer than that in an empty buffer: a frame of ~58,000 functions). Returns
 * 0 (room made, or there was); 1 when it is whole already (it must be
 * stored); -1 when it cannot grow (errno set). */
static int buffer_grow(struct piano_thread *ts, size_t need)
{
    uint64_t want = sizeof(struct piano_chunk_hdr) + ts->chunk_used + need, room = ts->chunk_room;
    if (want <= room)
        return 0;
    uint32_t max = want > CHUNK_ROOM_MAX && !ts->chunk_used ? PIANO_CHUNK_SIZE : CHUNK_ROOM_MAX;
    if (room >= max || want > max)   /* an empty buffer has room for any record (frame_write's bound) */
        return 1;
    while (room < want)
        room *= 2;
    return buffer_reserve(ts, room < max ? (uint32_t)room : max);
}

/* Appends the buffer's records to the chunks file as chunk ts->chunks (a
 * program that changed its user cannot make a chunk file: user.c). Returns 0,
 * or -1 with errno set (nothing whole was appended). */
static int buffer_append(struct piano_thread *ts)
{
    const struct piano_chunk_hdr *h = (const struct piano_chunk_hdr *)ts->chunk;
    size_t len = sizeof *h + ts->chunk_used;
    size_t size = sizeof(struct piano_chunks_rec) + ((len + 7) & ~(size_t)7);
    struct piano_chunks_rec r = { PIANO_CHUNKS_MAGIC, (uint32_t)size, ts->thread, ts->chunks, 0 };
    uint64_t check = piano_ended_mix(piano_ended_start(size), &r, sizeof r);
    r.check = piano_ended_mix(check, h, len);   /* padded with zeros, as written */
    struct iovec iov[3] = { { &r, sizeof r }, { (void *)h, len }, { (void *)spool_pad_zeros, size - sizeof r - len } };
    struct quiet q;
    quiet_begin(&q);
    int fd = run_open(PIANO_SPOOL_CHUNKS, O_WRONLY | O_CREAT | O_APPEND);
    ssize_t w = fd >= 0 ? writev(fd, iov, 3) : -1;
    int e = w < 0 ? errno : ENOSPC;
    if (fd >= 0)
        close(fd);
    quiet_end(&q);
    if (w != (ssize_t)size) {
        errno = e;
        return -1;
    }
    return 0;
}

/* Writes the buffer's records as chunk file f<N>.<K>, K = ts->chunks: whole
 * or not at all (written under a .tmp name, then renamed). Returns 0, or -1
 * with errno set. */
static int buffer_store_file(struct piano_thread *ts)
{
    const struct piano_chunk_hdr *h = (const struct piano_chunk_hdr *)ts->chunk;
    piano_spool_name name = piano_spool_frames_file(ts->thread, ts->chunks);
    char tmp[sizeof name.s + sizeof ".tmp"];
    snprintf(tmp, sizeof tmp, "%s.tmp", name.s);
    struct quiet q;
    quiet_begin(&q);
    int dfd = run_dir_open();
    int fd = dfd >= 0 ? openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    int ok = fd >= 0 && write_all(fd, ts->chunk, sizeof *h + ts->chunk_used, 0) == 0;
    if (fd >= 0)
        close(fd);
    ok = ok && renameat(dfd, tmp, dfd, name.s) == 0;
    int e = errno;
    if (!ok && dfd >= 0)
        unlinkat(dfd, tmp, 0);
    if (dfd >= 0)
        close(dfd);
    quiet_end(&q);
    if (!ok) {
        errno = e;
        return -1;
    }
    return 0;
}

/* Stores the buffer's records as chunk number ts->chunks and empties it.
 * The chunk appears whole or not at all (a chunk file renamed into place,
 * or a checked record of the chunks file); the import reads the buffer only
 * while no chunk has its number, so a crash at any point neither loses nor
 * repeats a frame. Returns 0, or -1 with errno set (the buffer is left as it
 * was). */
static int buffer_flush(struct piano_thread *ts)
{
    struct piano_chunk_hdr *h = (struct piano_chunk_hdr *)ts->chunk;
    if (!h || !ts->chunk_used)
        return 0;
    if ((held_active() ? buffer_append(ts) : buffer_store_file(ts)) != 0)
        return -1;
    /* A live buffer is read as a seqlock (spool.h): the new seq is seen
     * before any record written after it. */
    __atomic_store_n(&h->used, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&h->seq, ts->chunks + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    ts->chunks++;
    ts->chunk_used = 0;
    ts->chunk_frames = 0;
    return 0;
}

/* The thread is done with its buffer: an anonymous one is stored now (one in
 * states stays for the import to read; it is unmapped with its slot). */
void chunk_finish(struct piano_thread *ts)
{
    if (!ts->chunk)
        return;
    if (ts->anon && buffer_flush(ts) != 0) {
        ts->frames_dropped += ts->chunk_frames;
        say("piano: cannot store frames in %s: %s; they are counted as dropped", g.dir, strerror(errno));
    }
    ts->chunk = NULL;
}

#define FRAME_ROOM_RETRY 4096   /* frames dropped after a failure before frame_room tries again */

/* Makes room for a frame record of `need` bytes: readies the buffer,
 * reserves more of it, or stores a full one.
 * After a failure (a full disk) it tries again only every 4,096 frames, each
 * dropped meanwhile. Returns 0, or -1 (the frame is dropped). */
__attribute__((noinline)) int frame_room(struct piano_thread *ts, int full, size_t need)
{
    if (g.finished)
        return -1;   /* the run is stored: frames that end after it are not part of it */
    if (atomic_load(&g.sandboxed))
        return -1;   /* more room takes system calls (sandbox.c): dropped, counted */
    if (ts->room_backoff) {
        ts->room_backoff--;
        return -1;
    }
    if (full) {
        int grown = buffer_grow(ts, need);
        if (grown == 1 && buffer_flush(ts) == 0)
            grown = buffer_grow(ts, need);   /* empty now: 0 or -1 */
        if (grown == 0)
            return 0;
    } else if (buffer_open(ts) == 0) {
        return 0;
    }
    ts->room_backoff = FRAME_ROOM_RETRY;
    say("piano: cannot store frames in %s: %s; they are counted as dropped", g.dir, strerror(errno));
    return -1;
}
