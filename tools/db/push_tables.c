/*
 * push_tables.c - piano-db push's bookkeeping in the database: the pushes
 * table (profiles kept for the next push, sent first, oldest first) and the
 * pushed table (what of each run went to a server and tenant: never twice).
 */
#include "push_int.h"
#include <stdlib.h>
#include <string.h>

/* ---- the queue (the pushes table) ---- */

void queue_add(pdb *p, pusher *ps, int64_t run, const char *kind, const char *query,
                      const unsigned char *b, size_t n, int tries, const char *why)
{
    sqlite3_stmt *st = pdb_prepare(p, "INSERT INTO pushes(url, tenant, run, query, profile, kind, tries, error) "
                                      "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
    pdb_bind_text(st, 1, ps->url);
    if (ps->tenant)
        pdb_bind_text(st, 2, ps->tenant);
    sqlite3_bind_int64(st, 3, run);
    pdb_bind_text(st, 4, query);
    sqlite3_bind_blob(st, 5, b, (int)n, SQLITE_TRANSIENT);
    pdb_bind_text(st, 6, kind);
    sqlite3_bind_int(st, 7, tries);
    if (why)
        pdb_bind_text(st, 8, why);
    pdb_step(p, st);
    sqlite3_finalize(st);
}

int64_t queue_count(pdb *p, const char *url)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM pushes WHERE url = ?");
    pdb_bind_text(st, 1, url);
    pdb_step(p, st);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void queue_done(pdb *p, int64_t id, int sent_or_refused, const char *why)
{
    sqlite3_stmt *st = pdb_prepare(p, sent_or_refused ? "DELETE FROM pushes WHERE id = ?1"
                                                      : "UPDATE pushes SET tries = tries + ?2, error = ?3 WHERE id = ?1");
    sqlite3_bind_int64(st, 1, id);
    if (!sent_or_refused) {
        sqlite3_bind_int(st, 2, PUSH_TRIES);
        pdb_bind_text(st, 3, why);
    }
    pdb_step(p, st);
    sqlite3_finalize(st);
}

/* Sends the profiles kept for ps->url, oldest first, until one fails for
 * good. Returns how many went. */
int64_t queue_flush(pdb *p, pusher *ps)
{
    int64_t sent = 0, *ids = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id FROM pushes WHERE url = ? ORDER BY id");
    pdb_bind_text(st, 1, ps->url);
    while (pdb_step(p, st) == SQLITE_ROW) {
        if (n == cap)
            ids = xrealloc(ids, (cap = cap ? 2 * cap : 16) * sizeof *ids);
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = pdb_prepare(p, "SELECT run, kind, query, profile, tenant FROM pushes WHERE id = ?");
    for (size_t i = 0; i < n && !ps->down && !stop_requested; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[i]);
        if (pdb_step(p, st) != SQLITE_ROW)
            continue;   /* another push sent it meanwhile */
        const char *tenant = sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : pdb_col_text(st, 4);
        char why[512];
        int r = post(ps, tenant, pdb_col_text(st, 2), pdb_col_text(st, 1), sqlite3_column_blob(st, 3),
                     (size_t)sqlite3_column_bytes(st, 3), why, sizeof why);
        if (r == REFUSED) {
            fprintf(stderr, "piano-db: push: %s refused run %lld's kept %s profile: %s; not kept\n", ps->url,
                    (long long)sqlite3_column_int64(st, 0), pdb_col_text(st, 1), why);
            ps->refused++;
        } else if (r == TRANSIENT) {
            ps->down = 1;
            snprintf(ps->why, sizeof ps->why, "%s", why);
        }
        sent += r == SENT;
        sqlite3_reset(st);
        queue_done(p, ids[i], r != TRANSIENT, why);
    }
    sqlite3_finalize(st);
    free(ids);
    return sent;
}

/* ---- never twice: the pushed table ---- */

/* What of run `key` went to ps's server and tenant (sent or kept):
 * NOT_PUSHED, WINDOWS_PUSHED (*snapshots: the windows up to that snapshot,
 * by --follow) or WHOLE_PUSHED. */
int pushed_get(pdb *p, const pusher *ps, const char *key, int64_t *snapshots)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT snapshots, whole FROM pushed WHERE url = ? AND tenant = ? AND run_key = ?");
    pdb_bind_text(st, 1, ps->url);
    pdb_bind_text(st, 2, ps->tenant ? ps->tenant : "");
    pdb_bind_text(st, 3, key);
    int r = NOT_PUSHED;
    *snapshots = 0;
    if (pdb_step(p, st) == SQLITE_ROW) {
        *snapshots = sqlite3_column_int64(st, 0);
        r = sqlite3_column_int(st, 1) ? WHOLE_PUSHED : WINDOWS_PUSHED;
    }
    sqlite3_finalize(st);
    return r;
}

void pushed_set(pdb *p, const pusher *ps, const char *key, int64_t snapshots, int whole)
{
    sqlite3_stmt *st = pdb_prepare(p, "INSERT OR REPLACE INTO pushed(url, tenant, run_key, snapshots, whole) "
                                      "VALUES(?, ?, ?, ?, ?)");
    pdb_bind_text(st, 1, ps->url);
    pdb_bind_text(st, 2, ps->tenant ? ps->tenant : "");
    pdb_bind_text(st, 3, key);
    sqlite3_bind_int64(st, 4, snapshots);
    sqlite3_bind_int(st, 5, whole);
    pdb_step(p, st);
    sqlite3_finalize(st);
}
