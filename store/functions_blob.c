/*
 * functions_blob.c - a run's functions as one blob: the writer (the import),
 * the reader (piano-db, through the table-valued function piano_functions and
 * the TEMP view functions over it). The format is functions_blob.h's.
 */
#include "functions_blob.h"
#include "blob_table.h"
#include "byte_buf.h"
#include "fns_blob.h"   /* piano_varint_put / piano_varint_get */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ writing */

/* Room for more bytes after w->len: 0, or -1 when w->failed (byte_buf.h). */
static int grow(piano_fnlist_writer *w, size_t more)
{
    return piano_byte_buf_grow(&w->buf, &w->cap, w->len + more, 4096, &w->failed);
}

void piano_fnlist_begin(piano_fnlist_writer *w)
{
    w->len = 0;
    w->last_id = -1;
    w->last_name = 0;
    w->failed = 0;
    if (grow(w, 1) == 0)
        w->buf[w->len++] = 0;
}

void piano_fnlist_put(piano_fnlist_writer *w, int64_t id, int64_t name)
{
    if (w->failed || id <= w->last_id || name < 0 || id - w->last_id > (int64_t)1 << 60 || grow(w, 20)) {
        w->failed = 1;
        return;
    }
    uint64_t s = (uint64_t)(id - w->last_id - 1);
    uint64_t z = name >= w->last_name ? (uint64_t)(name - w->last_name) << 1
                                      : ((uint64_t)(w->last_name - name) << 1) - 1;
    w->len += piano_varint_put(w->buf + w->len, s << 3 | (z < 7 ? z : 7));
    if (z >= 7)
        w->len += piano_varint_put(w->buf + w->len, z);
    w->last_id = id;
    w->last_name = name;
}

/* ------------------------------------------------------------------ reading */

int piano_fnlist_open(piano_fnlist_reader *r, const void *b, size_t len)
{
    memset(r, 0, sizeof *r);
    if (!b || len < 1 || ((const unsigned char *)b)[0] != 0)
        return -1;
    r->b = b;
    r->len = len;
    r->at = 1;
    r->id = -1;
    return 0;
}

int piano_fnlist_next(piano_fnlist_reader *r)
{
    if (r->at >= r->len)
        return 0;
    uint64_t head, z;
    if (piano_varint_get(r->b, r->len, &r->at, 10, &head) != 0)
        return -1;
    z = head & 7;
    if (z == 7 && piano_varint_get(r->b, r->len, &r->at, 10, &z) != 0)
        return -1;
    uint64_t s = head >> 3;   /* the id: r->id + s + 1, at most INT64_MAX (r->id >= -1) */
    if (s > (uint64_t)INT64_MAX - (uint64_t)(r->id + 1))
        return -1;
    /* name: the previous one plus or minus z's difference, within 0..INT64_MAX */
    uint64_t d = z >> 1;
    if (z & 1 ? d + 1 > (uint64_t)r->name : d > (uint64_t)(INT64_MAX - r->name))
        return -1;
    r->id += (int64_t)s + 1;
    r->name = z & 1 ? r->name - (int64_t)d - 1 : r->name + (int64_t)d;
    return 1;
}

/* ------------------------------------------ rows of older schemas, packed */

static int pack_flush(sqlite3_stmt *ins, const piano_fnlist_writer *w, int64_t run, int ok)
{
    if (!ok || !piano_fnlist_any(w))
        return SQLITE_OK;
    sqlite3_bind_int64(ins, 1, run);
    sqlite3_bind_blob(ins, 2, w->buf, (int)w->len, SQLITE_STATIC);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int piano_functions_pack(sqlite3 *db)
{
    sqlite3_stmt *st = NULL, *ins = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT run, id, name FROM run_functions ORDER BY run, id", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO fn_lists(run, fns) VALUES(?1, ?2)", -1, &ins, NULL);
    piano_fnlist_writer w = {0};
    int64_t run = 0;
    int any = 0, ok = 0;
    while (rc == SQLITE_OK) {
        int step = sqlite3_step(st);
        if (step != SQLITE_ROW && step != SQLITE_DONE) {
            rc = step;
            break;
        }
        int64_t r = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        if (step == SQLITE_DONE || !any || r != run) {
            rc = any ? pack_flush(ins, &w, run, ok && !w.failed) : SQLITE_OK;
            if (rc != SQLITE_OK || step == SQLITE_DONE)
                break;
            run = r;
            any = 1;
            ok = 1;
            piano_fnlist_begin(&w);
        }
        ok &= sqlite3_column_type(st, 1) == SQLITE_INTEGER && sqlite3_column_type(st, 2) == SQLITE_INTEGER &&
              sqlite3_column_int64(st, 1) >= 0;
        if (ok)
            piano_fnlist_put(&w, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    free(w.buf);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "DELETE FROM run_functions WHERE run IN (SELECT run FROM fn_lists)", NULL, NULL, NULL);
    return rc;
}

/* ------------------------------------------- the table-valued function */

static int fl_declare(char *sql, size_t n)
{
    snprintf(sql, n, "CREATE TABLE x(id, name, fns HIDDEN)");
    return 2;
}

static int fl_open(void *reader, const unsigned char *b, size_t len)
{
    return piano_fnlist_open(reader, b, len);
}

static int fl_next(void *reader)
{
    return piano_fnlist_next(reader);
}

static void fl_column(const void *reader, sqlite3_context *ctx, int col)
{
    const piano_fnlist_reader *r = reader;
    if (col == 0)
        sqlite3_result_int64(ctx, r->id);
    else if (col == 1)
        sqlite3_result_int64(ctx, r->name);
    else
        sqlite3_result_null(ctx);
}

static const piano_blob_table fl_table = {
    .declare = fl_declare,
    .open = fl_open,
    .next = fl_next,
    .column = fl_column,
    .state_size = sizeof(piano_fnlist_reader),   /* the state: the reader (its id and name the current row) */
    .rows = 200,
    .malformed = "a run's function list (fn_lists.fns) is malformed",
};

int piano_functions_register(sqlite3 *db)
{
    /* An insert of a function the run has (in its blob or its rows) is
     * ignored, as the stored view's INSERT OR IGNORE into run_functions did. */
    return piano_blob_table_register(
        db, "piano_functions", &fl_table,
        "CREATE TEMP VIEW IF NOT EXISTS functions(run, id, name, file, line) AS\n"
        "  SELECT f.run, f.id, n.name, n.file, n.line FROM main.run_functions f JOIN main.names n ON n.id = f.name\n"
        "  UNION ALL SELECT l.run, f.id, n.name, n.file, n.line\n"
        "    FROM main.fn_lists l, piano_functions(l.fns) f JOIN main.names n ON n.id = f.name;\n"
        "CREATE TEMP TRIGGER IF NOT EXISTS functions_insert INSTEAD OF INSERT ON functions BEGIN\n"
        "  INSERT OR IGNORE INTO names(name, file, line) VALUES(NEW.name, NEW.file, NEW.line);\n"
        "  INSERT OR IGNORE INTO run_functions(run, id, name)\n"
        "    SELECT NEW.run, NEW.id, id FROM names WHERE name = NEW.name AND file = NEW.file AND line = NEW.line\n"
        "    AND NOT EXISTS (SELECT 1 FROM fn_lists l, piano_functions(l.fns) f WHERE l.run = NEW.run AND f.id = NEW.id);\n"
        "END;\n");
}
