/*
 * frames_blob.c - blocks of a run's frames as blobs: the writer (the import,
 * piano_frames_pack), the reader (piano-db, directly and through the
 * table-valued function piano_frames under the TEMP view frames). The format
 * is frames_blob.h's.
 */
#include "frames_blob.h"
#include "blob_table.h"
#include "byte_buf.h"
#include "fns_blob.h"   /* piano_varint_put / piano_varint_get */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT 1
#define HEAD_MAX 21   /* the format byte and two varints */
#define FRAME_FIXED_MAX (1 + 10 * 11)   /* flags and up to 10 other varints and the fns length */
enum { F_SPIKE = 1, F_CPU = 2, F_ALLOCS = 4, F_TSEQ = 8, F_ALL = 15 };

static uint64_t zigzag(int64_t now, int64_t before)
{
    int64_t d = (int64_t)((uint64_t)now - (uint64_t)before);
    return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static int64_t unzigzag(int64_t before, uint64_t z)
{
    uint64_t d = (z >> 1) ^ (0 - (z & 1));
    return (int64_t)((uint64_t)before + d);
}

/* ------------------------------------------------------------------ writing */

/* Room for more bytes after w->len: 0, or -1 when w->failed (byte_buf.h). */
static int grow(piano_frames_writer *w, size_t more)
{
    return piano_byte_buf_grow(&w->buf, &w->cap, w->len + more, 8192, &w->failed);
}

void piano_frames_begin(piano_frames_writer *w)
{
    w->len = 0;
    w->n = w->spikes = 0;
    w->first = w->last = w->prev_start = w->prev_tseq = 0;
    w->failed = 0;
    if (grow(w, HEAD_MAX) == 0)
        w->len = HEAD_MAX;   /* the header goes last, right before the frames */
}

void piano_frames_put(piano_frames_writer *w, const piano_frame_row *f)
{
    if ((w->n && f->seq <= w->last) || grow(w, FRAME_FIXED_MAX + f->fns_len) != 0) {
        w->failed = 1;
        return;
    }
    int allocs = f->allocs || f->alloc_bytes || f->frees || f->free_bytes;
    unsigned flags = (f->spike ? F_SPIKE : 0) | (f->has_cpu ? F_CPU : 0) | (allocs ? F_ALLOCS : 0) |
                     (f->has_thread_seq ? F_TSEQ : 0);
    unsigned char *o = w->buf + w->len;
    size_t n = piano_varint_put(o, flags);
    if (!w->n)
        w->first = f->seq;
    n += piano_varint_put(o + n, w->n ? (uint64_t)f->seq - (uint64_t)w->last - 1 : 0);
    n += piano_varint_put(o + n, (uint64_t)f->thread);
    n += piano_varint_put(o + n, zigzag(f->start_ns, w->prev_start));
    n += piano_varint_put(o + n, (uint64_t)f->total_ns);
    if (f->has_thread_seq) {
        n += piano_varint_put(o + n, zigzag(f->thread_seq, w->prev_tseq));
        w->prev_tseq = f->thread_seq;
    }
    if (allocs) {
        n += piano_varint_put(o + n, (uint64_t)f->allocs);
        n += piano_varint_put(o + n, (uint64_t)f->alloc_bytes);
        n += piano_varint_put(o + n, (uint64_t)f->frees);
        n += piano_varint_put(o + n, (uint64_t)f->free_bytes);
    }
    if (f->has_cpu)
        n += piano_varint_put(o + n, zigzag(f->total_ns, f->cpu_ns));
    n += piano_varint_put(o + n, f->fns_len);
    if (f->fns_len)
        memcpy(o + n, f->fns, f->fns_len);
    w->len += n + f->fns_len;
    w->last = f->seq;
    w->prev_start = f->start_ns;
    w->n++;
    w->spikes += f->spike != 0;
}

const unsigned char *piano_frames_end(piano_frames_writer *w, size_t *len)
{
    unsigned char head[HEAD_MAX];
    size_t h = 0;
    head[h++] = FORMAT;
    h += piano_varint_put(head + h, (uint64_t)w->first);
    h += piano_varint_put(head + h, w->n);
    memcpy(w->buf + HEAD_MAX - h, head, h);
    *len = w->len - HEAD_MAX + h;
    return w->buf + HEAD_MAX - h;
}

int piano_frames_store(sqlite3_stmt *ins, int64_t run, piano_frames_writer *w)
{
    if (!w->n)
        return SQLITE_OK;
    if (w->failed)
        return SQLITE_NOMEM;
    size_t len;
    const unsigned char *b = piano_frames_end(w, &len);
    sqlite3_bind_int64(ins, 1, run);
    sqlite3_bind_int64(ins, 2, w->first);
    sqlite3_bind_int64(ins, 3, w->last);
    sqlite3_bind_int64(ins, 4, w->n);
    sqlite3_bind_int64(ins, 5, w->spikes);
    sqlite3_bind_blob(ins, 6, b, (int)len, SQLITE_STATIC);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    piano_frames_begin(w);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ------------------------------------------------------------------ reading */

int piano_frames_open(piano_frames_reader *r, const void *b, size_t len)
{
    memset(r, 0, sizeof *r);
    r->b = b;
    r->len = len;
    uint64_t first;
    if (!b || len < 1 || r->b[0] != FORMAT)
        return -1;
    r->at = 1;
    if (piano_varint_get(r->b, len, &r->at, 10, &first) != 0 || piano_varint_get(r->b, len, &r->at, 10, &r->left) != 0)
        return -1;
    r->first = (int64_t)first;
    return 0;
}

static int get(piano_frames_reader *r, uint64_t *v)
{
    return piano_varint_get(r->b, r->len, &r->at, 10, v);
}

int piano_frames_next(piano_frames_reader *r)
{
    if (!r->left)
        return r->at == r->len ? 0 : -1;
    piano_frame_row *f = &r->row;
    int started = r->started;   /* a frame read before: seq and start_ns go on from it */
    uint64_t flags, gap, thread, start, total, v;
    if (get(r, &flags) || flags > F_ALL || get(r, &gap) || get(r, &thread) || get(r, &start) || get(r, &total))
        return -1;
    /* seq: the first's is first + gap, the others' the previous + 1 + gap, within int64 */
    int64_t base = started ? f->seq : r->first;
    uint64_t room = (uint64_t)INT64_MAX - (uint64_t)base, step = started ? 1 : 0;
    if (room < step || gap > room - step)
        return -1;
    f->seq = (int64_t)((uint64_t)base + step + gap);
    f->thread = (int64_t)thread;
    f->start_ns = unzigzag(started ? f->start_ns : 0, start);
    f->total_ns = (int64_t)total;
    f->spike = (flags & F_SPIKE) != 0;
    f->has_thread_seq = (flags & F_TSEQ) != 0;
    if (f->has_thread_seq) {
        if (get(r, &v))
            return -1;
        f->thread_seq = unzigzag(r->row.thread_seq, v);
    }
    f->allocs = f->alloc_bytes = f->frees = f->free_bytes = 0;
    if (flags & F_ALLOCS) {
        uint64_t a[4];
        for (int i = 0; i < 4; i++)
            if (get(r, &a[i]))
                return -1;
        f->allocs = (int64_t)a[0];
        f->alloc_bytes = (int64_t)a[1];
        f->frees = (int64_t)a[2];
        f->free_bytes = (int64_t)a[3];
    }
    f->has_cpu = (flags & F_CPU) != 0;
    if (f->has_cpu) {
        if (get(r, &v))
            return -1;
        /* total - cpu was stored */
        f->cpu_ns = (int64_t)((uint64_t)f->total_ns - (uint64_t)unzigzag(0, v));
    }
    if (get(r, &v) || v > r->len - r->at)
        return -1;
    f->fns = r->b + r->at;
    f->fns_len = (size_t)v;
    r->at += (size_t)v;
    r->left--;
    r->started = 1;
    return 1;
}

/* ---------------------------------------------------------------- packing */

#define COLS "run, seq, thread, start_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, fns, thread_seq, spike, cpu_ns"
/* The rows a block holds as they are. */
#define PACKABLE                                                                                              \
    "typeof(run) = 'integer' AND typeof(seq) = 'integer' AND typeof(thread) = 'integer'"                      \
    " AND typeof(start_ns) = 'integer' AND typeof(total_ns) = 'integer' AND typeof(allocs) = 'integer'"       \
    " AND typeof(alloc_bytes) = 'integer' AND typeof(frees) = 'integer' AND typeof(free_bytes) = 'integer'"   \
    " AND typeof(fns) = 'blob' AND typeof(thread_seq) IN ('integer', 'null') AND typeof(spike) = 'integer'"  \
    " AND spike IN (0, 1) AND typeof(cpu_ns) IN ('integer', 'null') AND run IN (SELECT id FROM runs)"

int piano_frames_pack(sqlite3 *db)
{
    sqlite3_stmt *st = NULL, *ins = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT " COLS " FROM frame_rows WHERE " PACKABLE " ORDER BY run, seq", -1, &st,
                                NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, PIANO_FRAMES_INSERT, -1, &ins, NULL);
    piano_frames_writer w = {0};
    piano_frames_begin(&w);
    int64_t run = 0;
    while (rc == SQLITE_OK) {
        int step = sqlite3_step(st);
        if (step != SQLITE_ROW) {
            rc = step == SQLITE_DONE ? piano_frames_store(ins, run, &w) : step;
            break;
        }
        int64_t r = sqlite3_column_int64(st, 0);
        if (w.n && (r != run || piano_frames_full(&w)))
            rc = piano_frames_store(ins, run, &w);
        run = r;
        piano_frame_row f = {
            .seq = sqlite3_column_int64(st, 1), .thread = sqlite3_column_int64(st, 2),
            .start_ns = sqlite3_column_int64(st, 3), .total_ns = sqlite3_column_int64(st, 4),
            .allocs = sqlite3_column_int64(st, 5), .alloc_bytes = sqlite3_column_int64(st, 6),
            .frees = sqlite3_column_int64(st, 7), .free_bytes = sqlite3_column_int64(st, 8),
            .fns = sqlite3_column_blob(st, 9), .fns_len = (size_t)sqlite3_column_bytes(st, 9),
            .has_thread_seq = sqlite3_column_type(st, 10) != SQLITE_NULL, .thread_seq = sqlite3_column_int64(st, 10),
            .spike = sqlite3_column_int(st, 11),
            .has_cpu = sqlite3_column_type(st, 12) != SQLITE_NULL, .cpu_ns = sqlite3_column_int64(st, 12),
        };
        piano_frames_put(&w, &f);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    free(w.buf);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "DELETE FROM frame_rows WHERE " PACKABLE, NULL, NULL, NULL);
    return rc;
}

/* ------------------------------------------- the table-valued function */

static int fr_declare(char *sql, size_t n)
{
    snprintf(sql, n, "CREATE TABLE x(seq, thread, start_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, fns, "
                     "thread_seq, spike, cpu_ns, frames HIDDEN)");
    return 12;
}

static int fr_open(void *reader, const unsigned char *b, size_t len)
{
    return piano_frames_open(reader, b, len);
}

static int fr_next(void *reader)
{
    return piano_frames_next(reader);
}

static void fr_column(const void *reader, sqlite3_context *ctx, int col)
{
    const piano_frame_row *f = &((const piano_frames_reader *)reader)->row;
    const int64_t v[] = {f->seq, f->thread, f->start_ns, f->total_ns, f->allocs, f->alloc_bytes, f->frees,
                         f->free_bytes};
    if (col >= 0 && col < 8)
        sqlite3_result_int64(ctx, v[col]);
    else if (col == 8)
        sqlite3_result_blob(ctx, f->fns_len ? (const void *)f->fns : "", (int)f->fns_len, SQLITE_TRANSIENT);
    else if (col == 9 && f->has_thread_seq)
        sqlite3_result_int64(ctx, f->thread_seq);
    else if (col == 10)
        sqlite3_result_int(ctx, f->spike);
    else if (col == 11 && f->has_cpu)
        sqlite3_result_int64(ctx, f->cpu_ns);
    else
        sqlite3_result_null(ctx);
}

static const piano_blob_table fr_table = {
    .declare = fr_declare,
    .open = fr_open,
    .next = fr_next,
    .column = fr_column,
    .state_size = sizeof(piano_frames_reader),   /* the state: the reader (its row the current one) */
    .rows = PIANO_FRAME_BLOCK_MAX,
    .malformed = "a block of frames (frame_blocks.frames) is malformed",
};

#define BLOCK_COLS \
    "b.run, f.seq, f.thread, f.start_ns, f.total_ns, f.allocs, f.alloc_bytes, f.frees, f.free_bytes, f.fns, " \
    "f.thread_seq, f.spike, f.cpu_ns"

int piano_frames_register(sqlite3 *db)
{
    return piano_blob_table_register(db, "piano_frames", &fr_table,
                                     "CREATE TEMP VIEW IF NOT EXISTS frames AS SELECT " COLS " FROM main.frame_rows"
                                     " UNION ALL SELECT " BLOCK_COLS " FROM main.frame_blocks b, piano_frames(b.frames) f");
}

/* ------------------------------------------- writing through the view */

/* The block of run OLD.run that holds OLD.seq, if any. */
#define OLD_BLOCK(t)                                                                                     \
    t "run = OLD.run AND " t "seq = (SELECT max(seq) FROM frame_blocks WHERE run = OLD.run AND seq <= OLD.seq)" \
      " AND " t "last >= OLD.seq"

int piano_frames_make_triggers(sqlite3 *db)
{
    /* An UPDATE or DELETE of a frame in a block moves the block's frames to
     * frame_rows first. TEMP triggers on the TEMP view: nothing is stored. */
    return sqlite3_exec(
        db,
        "CREATE TEMP TRIGGER IF NOT EXISTS frames_insert INSTEAD OF INSERT ON frames BEGIN\n"
        "  SELECT RAISE(ABORT, 'UNIQUE constraint failed: frames.run, frames.seq') WHERE EXISTS (SELECT 1\n"
        "    FROM frame_blocks b, piano_frames(b.frames) f WHERE b.run = NEW.run AND b.seq <= NEW.seq\n"
        "    AND b.last >= NEW.seq AND f.seq = NEW.seq);\n"
        "  INSERT INTO frame_rows(" COLS ") VALUES(NEW.run, NEW.seq, NEW.thread, NEW.start_ns, NEW.total_ns,\n"
        "    NEW.allocs, NEW.alloc_bytes, NEW.frees, NEW.free_bytes, NEW.fns, NEW.thread_seq, coalesce(NEW.spike, 0),\n"
        "    NEW.cpu_ns);\n"
        "END;\n"
        "CREATE TEMP TRIGGER IF NOT EXISTS frames_update INSTEAD OF UPDATE ON frames BEGIN\n"
        "  INSERT INTO frame_rows(" COLS ") SELECT " BLOCK_COLS "\n"
        "    FROM frame_blocks b, piano_frames(b.frames) f WHERE " OLD_BLOCK("b.") ";\n"
        "  DELETE FROM frame_blocks WHERE " OLD_BLOCK("") ";\n"
        "  UPDATE frame_rows SET run = NEW.run, seq = NEW.seq, thread = NEW.thread, start_ns = NEW.start_ns,\n"
        "    total_ns = NEW.total_ns, allocs = NEW.allocs, alloc_bytes = NEW.alloc_bytes, frees = NEW.frees,\n"
        "    free_bytes = NEW.free_bytes, fns = NEW.fns, thread_seq = NEW.thread_seq, spike = NEW.spike,\n"
        "    cpu_ns = NEW.cpu_ns WHERE run = OLD.run AND seq = OLD.seq;\n"
        "END;\n"
        "CREATE TEMP TRIGGER IF NOT EXISTS frames_delete INSTEAD OF DELETE ON frames BEGIN\n"
        "  INSERT INTO frame_rows(" COLS ") SELECT " BLOCK_COLS "\n"
        "    FROM frame_blocks b, piano_frames(b.frames) f WHERE " OLD_BLOCK("b.") ";\n"
        "  DELETE FROM frame_blocks WHERE " OLD_BLOCK("") ";\n"
        "  DELETE FROM frame_rows WHERE run = OLD.run AND seq = OLD.seq;\n"
        "END;\n",
        NULL, NULL, NULL);
}
