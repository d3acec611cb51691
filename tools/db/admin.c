/* admin.c - `piano-db rm RUN...` and `piano-db gc --keep N`. Deleting a run
 * deletes its rows in every table (foreign keys cascade), its tags, and the
 * names no other run uses. */
#include "piano_db.h"
#include <stdio.h>
#include <stdlib.h>

static void begin(pdb *p)
{
    if (sqlite3_exec(p->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        pdb_die("%s: %s", p->path, sqlite3_errmsg(p->db));
}

static void commit(pdb *p)
{
    if (sqlite3_exec(p->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        pdb_die("%s: %s", p->path, sqlite3_errmsg(p->db));
}

static int64_t pragma(pdb *p, const char *sql)
{
    sqlite3_stmt *st = pdb_prepare(p, sql);
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return v;
}

/* Names (stored once per database, schema 8) that no run uses any more go
 * with the last run that used them. */
static void forget_unused_names(pdb *p)
{
    if (sqlite3_exec(p->db, "DELETE FROM names WHERE id NOT IN (SELECT name FROM run_functions"
                                " UNION ALL SELECT f.name FROM fn_lists l, piano_functions(l.fns) f)", NULL, NULL,
                     NULL) != SQLITE_OK)
        pdb_die("%s: %s", p->path, sqlite3_errmsg(p->db));
}

/* Gives the space of deleted runs back to the file system: SQLite only marks
 * their pages free. VACUUM rewrites the whole database, so only when at least
 * a quarter of it is free; then the write-ahead log is emptied too. */
static void reclaim(pdb *p)
{
    int64_t pages = pragma(p, "PRAGMA page_count"), free_pages = pragma(p, "PRAGMA freelist_count");
    if (free_pages == 0 || free_pages * 4 < pages)
        return;
    int64_t page = pragma(p, "PRAGMA page_size");
    if (sqlite3_exec(p->db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "piano-db: warning: %s: cannot give back the space of the removed runs: %s\n", p->path,
                sqlite3_errmsg(p->db));
        return;
    }
    sqlite3_exec(p->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    printf("gave back %.1f MiB\n", (double)(free_pages * page) / (1024.0 * 1024.0));
}

int cmd_rm(pdb *p, const pdb_opts *o)
{
    if (o->npos == 0)
        pdb_usage_die("rm: which runs? (rm RUN...)");
    /* Resolve them all first: an unknown one removes nothing. */
    int64_t *ids = xmalloc((size_t)o->npos * sizeof *ids);
    for (int i = 0; i < o->npos; i++)
        ids[i] = pdb_resolve_run(p, o->pos[i]);
    begin(p);
    sqlite3_stmt *st = pdb_prepare(p, "DELETE FROM runs WHERE id = ?");
    for (int i = 0; i < o->npos; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[i]);
        pdb_step(p, st);
        if (sqlite3_changes(p->db))
            printf("removed run %lld\n", (long long)ids[i]);
    }
    sqlite3_finalize(st);
    forget_unused_names(p);
    commit(p);
    free(ids);
    reclaim(p);
    return 0;
}

int cmd_gc(pdb *p, const pdb_opts *o)
{
    if (o->npos)
        pdb_usage_die("gc: takes no arguments (gc --keep N)");
    if (!o->keep_set)
        pdb_usage_die("gc: --keep N is required");
    begin(p);
    sqlite3_stmt *st = pdb_prepare(p, p->has_tag_runs
        ? "DELETE FROM runs WHERE id NOT IN "
          "(SELECT id FROM runs ORDER BY started_ns DESC, id DESC LIMIT ?1) "
          "AND id NOT IN (SELECT run FROM tags) AND id NOT IN (SELECT run FROM tag_runs)"
        : "DELETE FROM runs WHERE id NOT IN "
          "(SELECT id FROM runs ORDER BY started_ns DESC, id DESC LIMIT ?1) "
          "AND id NOT IN (SELECT run FROM tags)");
    sqlite3_bind_int64(st, 1, o->keep);
    pdb_step(p, st);
    int removed = sqlite3_changes(p->db);
    sqlite3_finalize(st);
    forget_unused_names(p);
    commit(p);
    printf("removed %d run%s\n", removed, removed == 1 ? "" : "s");
    reclaim(p);
    return 0;
}
