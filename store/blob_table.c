/* blob_table.c - the table-valued function over a blob (see blob_table.h). */
#include "blob_table.h"

#include <stdio.h>
#include <string.h>

#include "blob_pack.h"

typedef struct {
    sqlite3_vtab base;
    const piano_blob_table *t;
    int n_cols;   /* the hidden blob column's index */
} bt_vtab;

typedef struct {
    sqlite3_vtab_cursor base;
    unsigned char *blob;
    sqlite3_int64 rowid;
    int eof;
    sqlite3_int64 state[];   /* the format's reader and row (sqlite3_malloc aligns to 8) */
} bt_cursor;

static const piano_blob_table *table_of(sqlite3_vtab_cursor *cur) { return ((bt_vtab *)cur->pVtab)->t; }

static int bt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
    (void)argc, (void)argv, (void)err;
    const piano_blob_table *t = aux;
    char sql[1536];
    int n_cols = t->declare(sql, sizeof sql);
    int rc = sqlite3_declare_vtab(db, sql);
    if (rc != SQLITE_OK)
        return rc;
#ifdef SQLITE_VTAB_INNOCUOUS
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
#endif
    bt_vtab *v = sqlite3_malloc(sizeof *v);
    if (!v)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->t = t;
    v->n_cols = n_cols;
    *out = &v->base;
    return SQLITE_OK;
}

static int bt_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

/* A plan with the blob given (an equality on the hidden column) reads it; one
 * without is made so dear that SQLite never picks it while another exists. */
static int bt_best_index(sqlite3_vtab *vt, sqlite3_index_info *ix)
{
    const bt_vtab *v = (const bt_vtab *)vt;
    int found = -1, unusable = 0;
    for (int i = 0; i < ix->nConstraint; i++) {
        if (ix->aConstraint[i].iColumn != v->n_cols || ix->aConstraint[i].op != SQLITE_INDEX_CONSTRAINT_EQ)
            continue;
        if (!ix->aConstraint[i].usable)
            unusable = 1;
        else
            found = i;
    }
    if (found < 0 && unusable)
        return SQLITE_CONSTRAINT;   /* another plan gives it a value */
    if (found >= 0) {
        ix->aConstraintUsage[found].argvIndex = 1;
        ix->aConstraintUsage[found].omit = 1;
        ix->idxNum = 1;
        ix->estimatedCost = 100;
        ix->estimatedRows = (sqlite3_int64)v->t->rows;
    } else {
        ix->idxNum = 0;
        ix->estimatedCost = 1e12;
    }
    if (ix->nOrderBy == 1 && ix->aOrderBy[0].iColumn == 0 && !ix->aOrderBy[0].desc)
        ix->orderByConsumed = 1;   /* rows come in ascending order of column 0 */
    return SQLITE_OK;
}

static int bt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    size_t size = sizeof(bt_cursor) + ((bt_vtab *)vt)->t->state_size;
    bt_cursor *c = sqlite3_malloc64(size);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, size);
    *out = &c->base;
    return SQLITE_OK;
}

static int bt_close(sqlite3_vtab_cursor *cur)
{
    bt_cursor *c = (bt_cursor *)cur;
    if (table_of(cur)->close)
        table_of(cur)->close(c->state);
    sqlite3_free(c->blob);
    sqlite3_free(c);
    return SQLITE_OK;
}

static int malformed(sqlite3_vtab_cursor *cur)
{
    ((bt_cursor *)cur)->eof = 1;
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = sqlite3_mprintf("%s", table_of(cur)->malformed);
    return SQLITE_CORRUPT;
}

static int bt_next(sqlite3_vtab_cursor *cur)
{
    bt_cursor *c = (bt_cursor *)cur;
    int rc = c->eof ? 0 : table_of(cur)->next(c->state);
    if (rc < 0)
        return malformed(cur);
    c->eof = rc == 0;
    c->rowid++;
    return SQLITE_OK;
}

static int bt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv)
{
    (void)idx_str;
    bt_cursor *c = (bt_cursor *)cur;
    sqlite3_free(c->blob);
    c->blob = NULL;
    c->eof = 1;
    c->rowid = 0;
    if (idx != 1 || argc < 1 || sqlite3_value_type(argv[0]) != SQLITE_BLOB)
        return SQLITE_OK;
    int len = sqlite3_value_bytes(argv[0]);
    const void *b = sqlite3_value_blob(argv[0]);
    if (len <= 0 || !b)
        return SQLITE_OK;
    /* A copy (the argument's value may not outlive this call), unpacked
     * when packed (blob_pack.h): the format reads the blob as written. */
    size_t n = (size_t)len;
    if (piano_blob_packed(b, n)) {
        n = piano_blob_unpacked_size(b, (size_t)len);
        if (n == 0)
            return malformed(cur);
    }
    c->blob = sqlite3_malloc64(n);
    if (!c->blob)
        return SQLITE_NOMEM;
    if (!piano_blob_packed(b, (size_t)len))
        memcpy(c->blob, b, n);
    else if (piano_blob_unpack(b, (size_t)len, c->blob, n) != 0)
        return malformed(cur);
    if (table_of(cur)->open(c->state, c->blob, n) != 0)
        return malformed(cur);
    c->eof = 0;
    return bt_next(cur);
}

static int bt_eof(sqlite3_vtab_cursor *cur)
{
    return ((bt_cursor *)cur)->eof;
}

static int bt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    table_of(cur)->column(((bt_cursor *)cur)->state, ctx, col);
    return SQLITE_OK;
}

static int bt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = ((bt_cursor *)cur)->rowid;
    return SQLITE_OK;
}

static const sqlite3_module bt_module = {
    .xConnect = bt_connect,
    .xBestIndex = bt_best_index,
    .xDisconnect = bt_disconnect,
    .xOpen = bt_open,
    .xClose = bt_close,
    .xFilter = bt_filter,
    .xNext = bt_next,
    .xEof = bt_eof,
    .xColumn = bt_column,
    .xRowid = bt_rowid,
};

int piano_blob_table_register(sqlite3 *db, const char *name, const piano_blob_table *t, const char *view_sql)
{
    int rc = sqlite3_create_module(db, name, &bt_module, (void *)t);
    return rc == SQLITE_OK ? sqlite3_exec(db, view_sql, NULL, NULL, NULL) : rc;
}

int piano_blob_view_triggers(sqlite3 *db, const char *view, const char *rows, const char *trees, const char *key,
                             const piano_view_col *cols, int n)
{
    char a[1024], nw[2048], set[2048], move[4096], s[16384];
    size_t k = 0, v = (size_t)snprintf(nw, sizeof nw, "NEW.run, NEW.thread");
    size_t u = (size_t)snprintf(set, sizeof set, "run = NEW.run, thread = NEW.thread");
    for (int c = 0; c < n; c++) {
        k += (size_t)snprintf(a + k, sizeof a - k, "%s%s", c ? ", " : "", cols[c].name);
        v += (size_t)snprintf(nw + v, sizeof nw - v, cols[c].zero_for_null ? ", coalesce(NEW.%s, 0)" : ", NEW.%s",
                              cols[c].name);
        u += (size_t)snprintf(set + u, sizeof set - u, ", %s = NEW.%s", cols[c].name, cols[c].name);
    }
    snprintf(move, sizeof move,
             "  INSERT INTO %s(run, thread, %s) SELECT run, thread, %s FROM %s\n"
             "    WHERE run = OLD.run AND thread = OLD.thread\n"
             "    AND EXISTS (SELECT 1 FROM %s WHERE run = OLD.run AND thread = OLD.thread);\n"
             "  DELETE FROM %s WHERE run = OLD.run AND thread = OLD.thread;\n",
             rows, a, a, view, trees, trees);
    k = (size_t)snprintf(s, sizeof s,
        "CREATE TEMP TRIGGER IF NOT EXISTS %s_insert INSTEAD OF INSERT ON %s BEGIN\n"
        "  INSERT INTO %s(run, thread, %s) VALUES(%s);\nEND;\n"
        "CREATE TEMP TRIGGER IF NOT EXISTS %s_update INSTEAD OF UPDATE ON %s BEGIN\n%s"
        "  UPDATE %s SET %s WHERE run = OLD.run AND thread = OLD.thread AND %s = OLD.%s;\nEND;\n"
        "CREATE TEMP TRIGGER IF NOT EXISTS %s_delete INSTEAD OF DELETE ON %s BEGIN\n%s"
        "  DELETE FROM %s WHERE run = OLD.run AND thread = OLD.thread AND %s = OLD.%s;\nEND;\n",
        view, view, rows, a, nw, view, view, move, rows, set, key, key, view, view, move, rows, key, key);
    return k < sizeof s ? sqlite3_exec(db, s, NULL, NULL, NULL) : SQLITE_TOOBIG;
}
