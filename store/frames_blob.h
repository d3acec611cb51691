/*
 * frames_blob.h - a block of a run's frames as one blob (frame_blocks.frames,
 * schema 24), the one writer and reader of the format, and the TEMP view
 * frames that reads them, with the rows of frame_rows, as the table of
 * schema 22 and before did (same columns, same order).
 *
 * Storing a row per frame cost SQLite about 6,150 of the 7,640 instructions
 * a frame took to store (bench/README.md, "Where the storing of frames spends
 * its time"); a block holds up to PIANO_FRAME_BLOCK_MAX frames consecutive in
 * the run's order (seq).
 *
 * A blob: one byte 1 (the format), the varints first (the first frame's seq)
 * and n (its frames), then per frame, unsigned LEB128 varints, z(x) the
 * zigzag of a difference x (2x, or -2x - 1 when negative), differences taken
 * in 64-bit two's complement so that every int64 value reads back as it was:
 *   flags        bit 0 spike, bit 1 cpu_ns known, bit 2 allocation figures
 *                (absent: all four 0), bit 3 thread_seq known; other bits: malformed
 *   gap          seq - the previous seq - 1 (the first's previous: first - 1)
 *   thread
 *   z(start_ns - the previous frame's start_ns; the first's previous: 0)
 *   total_ns
 *   z(thread_seq - the previous known thread_seq; 0 before)   when bit 3
 *   allocs, alloc_bytes, frees, free_bytes                      when bit 2
 *   z(total_ns - cpu_ns)                                        when bit 1
 *   the fns blob's length, then its bytes (spool/fns_blob.h, as they are)
 * A frame of one thread of a few functions takes about 8 bytes besides its
 * fns, where its row took about 25 and SQLite's work on a row.
 */
#ifndef PIANO_FRAMES_BLOB_H
#define PIANO_FRAMES_BLOB_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A block is written once it holds this many frames, or this many bytes. */
#define PIANO_FRAME_BLOCK_MAX 256
#define PIANO_FRAME_BLOCK_BYTES 16384

/* One frame: a row of the view frames (without its run). */
typedef struct {
    int64_t seq, thread, start_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, thread_seq, cpu_ns;
    int spike, has_thread_seq, has_cpu;
    const unsigned char *fns;
    size_t fns_len;
} piano_frame_row;

/* A block being written: a growing buffer (malloc'd; free buf when done). */
typedef struct {
    unsigned char *buf;
    size_t len, cap;
    int64_t first, last, prev_start, prev_tseq;
    uint32_t n, spikes;
    int failed;   /* out of memory, or a seq not above the last */
} piano_frames_writer;

/* Starts a block (w's buffer kept from a previous one). */
void piano_frames_begin(piano_frames_writer *w);
/* Appends frame f (its seq above the previous one's); else the block fails
 * (w->failed). */
void piano_frames_put(piano_frames_writer *w, const piano_frame_row *f);
/* The block's blob (valid until the next begin or put) and its length. */
const unsigned char *piano_frames_end(piano_frames_writer *w, size_t *len);
/* Whether block w is to be written now (PIANO_FRAME_BLOCK_MAX, _BYTES). */
static inline int piano_frames_full(const piano_frames_writer *w)
{
    return w->n >= PIANO_FRAME_BLOCK_MAX || w->len >= PIANO_FRAME_BLOCK_BYTES;
}

/* The statement that stores a block: piano_frames_store's ins. */
#define PIANO_FRAMES_INSERT "INSERT INTO frame_blocks(run, seq, last, n, spikes, frames) VALUES(?,?,?,?,?,?)"
/* Stores block w of run `run` with ins (prepared from PIANO_FRAMES_INSERT),
 * nothing when it is empty, and starts another. Returns SQLITE_OK,
 * SQLITE_NOMEM when the block failed (w->failed), or the statement's error. */
int piano_frames_store(sqlite3_stmt *ins, int64_t run, piano_frames_writer *w);

typedef struct {
    const unsigned char *b;
    size_t len, at;
    uint64_t left;   /* frames still to read */
    int64_t first;
    int started;     /* a frame has been read */
    piano_frame_row row;
} piano_frames_reader;

/* Starts reading blob b; r->first is its first frame's seq. Returns 0, or -1
 * when it has no header or another format. */
int piano_frames_open(piano_frames_reader *r, const void *b, size_t len);
/* The next frame into r->row (its fns point into the blob): 1, 0 at the end,
 * -1 when the blob is malformed there (or has bytes past its last frame). */
int piano_frames_next(piano_frames_reader *r);

/* Moves the rows of frame_rows into blocks, those a block holds as they are
 * (integers, NULL only in thread_seq and cpu_ns, spike 0 or 1, fns a blob, a
 * stored run); the others stay rows. Returns SQLITE_OK or an error. */
int piano_frames_pack(sqlite3 *db);

/* Registers the table-valued function piano_frames(frames) on db (its
 * columns: those of the view but run) and makes the TEMP view frames over it
 * and frame_rows. Returns SQLITE_OK or an error. */
int piano_frames_register(sqlite3 *db);
/* The TEMP triggers that make the view take inserts (into frame_rows; a seq
 * a block of the run holds is refused, as the table's key did), updates and
 * deletes (the frame's block moves to frame_rows first), as `piano-db sql`
 * has them. Returns SQLITE_OK or an error. */
int piano_frames_make_triggers(sqlite3 *db);

#endif
