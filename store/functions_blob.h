/*
 * functions_blob.h - a run's function ids and the names they stand for as one
 * blob (fn_lists.fns, schema 21), the one writer and reader of the format, and
 * the TEMP view functions that reads them, with the rows of run_functions, as
 * the stored view of schemas 8-20 did.
 *
 * A blob: one byte 0 (the format), then per function in ascending id order,
 * with s = id - the previous id - 1 (the first's previous id is -1) and z the
 * zigzag of its name's difference from the previous function's name (names.id;
 * the first's previous is 0; 2d, or -2d - 1 when negative), unsigned LEB128
 * varints:
 *   s << 3 | z when z < 7, else s << 3 | 7 then z
 * A short run's function takes 1 byte (names stored in the order of a
 * program's ids, ids a few apart), where a row of run_functions took about 13.
 */
#ifndef PIANO_FUNCTIONS_BLOB_H
#define PIANO_FUNCTIONS_BLOB_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A blob being written: a growing buffer (malloc'd; free buf when done). */
typedef struct {
    unsigned char *buf;
    size_t len, cap;
    int64_t last_id, last_name;
    int failed;   /* out of memory, or an id not above the last */
} piano_fnlist_writer;

/* Starts a blob (w's buffer kept from a previous one). */
void piano_fnlist_begin(piano_fnlist_writer *w);
/* Appends function id (>= 0, above the previous one's, by at most 2^60)
 * named name (>= 0); else the blob fails (w->failed). */
void piano_fnlist_put(piano_fnlist_writer *w, int64_t id, int64_t name);
/* Whether it holds a function. */
static inline int piano_fnlist_any(const piano_fnlist_writer *w) { return w->len > 1; }

typedef struct {
    const unsigned char *b;
    size_t len, at;
    int64_t id, name;
} piano_fnlist_reader;

/* Starts reading blob b. Returns 0, or -1 when it has no header or another format. */
int piano_fnlist_open(piano_fnlist_reader *r, const void *b, size_t len);
/* The next function into r->id and r->name: 1, 0 at the end, -1 when the blob
 * is malformed there. */
int piano_fnlist_next(piano_fnlist_reader *r);

/* Moves the rows of run_functions (schemas 8-20) into blobs, each run's whose
 * ids and names are all >= 0 and whose ids are less than 2^60 apart (those
 * the import writes); the others stay rows. Returns SQLITE_OK or an error. */
int piano_functions_pack(sqlite3 *db);

/* Registers the table-valued function piano_functions(fns) on db (its columns:
 * id, name, the names.id) and makes the TEMP view functions(run, id, name,
 * file, line) over it, run_functions and names, taking inserts (INSTEAD OF:
 * the name into names once, the function into run_functions unless the run
 * has that id). Returns SQLITE_OK or an error. */
int piano_functions_register(sqlite3 *db);

#endif
