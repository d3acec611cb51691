/* runs.c - `piano-db runs`: the stored runs, newest first. */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

static const emit_col run_cols[] = {
    {.head = "Run", .key = "run", .type = COL_INT},
    {.head = "Tags", .key = "tags", .type = COL_LIST, .flags = COL_LEFT, .cut = 30},
    {.head = "PID", .key = "pid", .type = COL_INT},
    {.head = "Parent", .key = "parent", .type = COL_INT},
    /* the program's name and its arguments, the arguments cut to fit */
    {.head = "Command", .key = "command", .type = COL_TEXT, .flags = COL_LEFT | COL_FIT_COMMAND},
    {.head = "Started", .key = "started", .type = COL_TIME},
    {.head = "Duration", .key = "duration_ns", .type = COL_NS},
    {.head = "Status", .key = "status", .type = COL_TEXT, .flags = COL_LEFT},
    {.head = "Frames", .key = "frames", .type = COL_INT},
    /* JSON and CSV only: null when heap in use was not tracked (PIANO_HEAP) */
    {.key = "heap_peak_bytes", .type = COL_INT},
    /* JSON and CSV only: the run-time PIANO_FNS, null when unset */
    {.key = "selection", .type = COL_TEXT},
};
enum { NRUN = sizeof run_cols / sizeof *run_cols };

/* The tags of the run tq is bound to, as new strings; *n: how many. */
static char **run_tags(pdb *p, sqlite3_stmt *tq, size_t *n)
{
    char **tags = NULL;
    size_t cap = 0;
    *n = 0;
    while (pdb_step(p, tq) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 4;
            tags = xrealloc(tags, cap * sizeof *tags);
        }
        tags[(*n)++] = xstrdup(pdb_col_text(tq, 0));
    }
    return tags;
}

int cmd_runs(pdb *p, const pdb_opts *o)
{
    if (o->npos)
        pdb_usage_die("runs: takes no arguments");
    if (o->group)
        return runs_grouped(p, o);
    /* parent: the run whose key is this run's parent_key, if stored. */
    char sql[512];
    snprintf(sql, sizeof sql,
        "SELECT r.id, r.pid, (SELECT q.id FROM runs q WHERE q.key = r.parent_key), r.command, "
        "r.started_ns, r.duration_ns, r.status, r.frames_dropped, %s, %s "
        "FROM runs r ORDER BY r.started_ns DESC, r.id DESC",
        p->has_inuse ? "r.heap_peak_bytes" : "NULL", p->has_selection ? "r.selection" : "NULL");
    sqlite3_stmt *st = pdb_prepare(p, sql);
    sqlite3_stmt *tq = pdb_prepare(p, p->has_tag_runs
        ? "SELECT name FROM tags WHERE run = ?1 UNION SELECT name FROM tag_runs WHERE run = ?1 ORDER BY name"
        : "SELECT name FROM tags WHERE run = ? ORDER BY name");
    emitter e;
    emit_begin(&e, stdout, emit_mode_of(o), run_cols, NRUN, p->color ? EMIT_COLOR : 0);
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        emit_val v[NRUN] = {{.i = id}, {0}, {.i = sqlite3_column_int64(st, 1)},
                            {.i = sqlite3_column_int64(st, 2), .null = sqlite3_column_type(st, 2) == SQLITE_NULL}};
        char *command = xstrdup(pdb_col_text(st, 3)), *status = xstrdup(pdb_col_text(st, 6));
        int64_t duration = sqlite3_column_int64(st, 5);
        v[4].s = command;
        v[5].i = sqlite3_column_int64(st, 4);
        v[6].i = duration;
        /* A process that died before piano saw it do anything (a call, a
         * frame) left no moment it was seen alive: its duration is not 0. */
        if (duration == 0 && !strcmp(status, "recovered"))
            v[6].shown = "unknown";
        v[7].s = status;
        v[8].i = pdb_frame_count(p, id, -1);
        v[9].i = sqlite3_column_int64(st, 8);
        v[9].null = sqlite3_column_type(st, 8) == SQLITE_NULL;
        char *selection = xstrdup(pdb_col_text(st, 9));
        v[10].s = selection;
        v[10].null = sqlite3_column_type(st, 9) == SQLITE_NULL;
        sqlite3_reset(tq);
        sqlite3_bind_int64(tq, 1, id);
        char **tags = run_tags(p, tq, &v[1].n);
        v[1].names = (const char *const *)tags;
        emit_row(&e, v, NULL);
        names_free(tags, v[1].n);
        free(command);
        free(status);
        free(selection);
    }
    sqlite3_finalize(tq);
    sqlite3_finalize(st);
    char none[sizeof p->path + 32];
    snprintf(none, sizeof none, "no runs stored in %s yet\n", p->path);
    size_t shown = emit_end(&e, none);
    if (emit_mode_of(o) == EMIT_TABLE)
        runs_hint(p, shown);
    return 0;
}
