/* tag.c - `piano-db tag [NAME [RUN]]` and `piano-db untag NAME`.
 * Tag names only ever reach SQL as bound parameters. A new name must print on
 * one line (no control characters) and be reachable (not read as a run). */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

static int all_digits(const char *s, const char *end)
{
    if (s == end)
        return 0;
    for (; s < end; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* Refuses, with one line, a name a table could not show or a run argument could
 * not reach (run ids and keys are looked up before tags). */
static void check_new_name(const char *name)
{
    if (!*name)
        pdb_usage_die("tag: the tag name is empty");
    if (has_ctrl(name))
        pdb_usage_die("tag: a tag name cannot hold control characters (newline, tab, escape...): '%s'",
                      esc_ctrl(name));
    const char *end = name + strlen(name), *dash = strchr(name, '-');
    if (all_digits(name, end))
        pdb_usage_die("tag: '%s' is a number, which names run %s: a tag of that name could never be reached", name,
                      name);
    if (pdb_is_set_spec(name))
        pdb_usage_die("tag: '%s' is shaped like a list of runs (3..40,45): a tag of that name could never be reached",
                      name);
    if (dash && all_digits(name, dash) && all_digits(dash + 1, end))
        pdb_usage_die("tag: '%s' is shaped like a run key (PID-NS): a tag of that name could never be reached",
                      name);
}

static const emit_col tag_cols[] = {
    {.head = "Tag", .key = "tag", .type = COL_TEXT},
    {.head = "Run", .key = "run", .type = COL_INT},   /* null for a tag of several runs (Command: "N runs") */
    {.head = "Started", .type = COL_TIME},
    {.head = "Command", .type = COL_TEXT, .flags = COL_LEFT, .cut = 40},
};
enum { NTAG = sizeof tag_cols / sizeof *tag_cols };

static int list_tags(pdb *p, const pdb_opts *o)
{
    /* A tag of several runs (tag_runs) is a row with its run count, and run null. */
    sqlite3_stmt *st = pdb_prepare(p, p->has_tag_runs
        ? "SELECT t.name, t.run, r.command, r.started_ns, 1 FROM tags t JOIN runs r ON r.id = t.run "
          "UNION ALL SELECT t.name, NULL, count(*) || ' runs', min(r.started_ns), count(*) FROM tag_runs t "
          "JOIN runs r ON r.id = t.run GROUP BY t.name ORDER BY 1"
        : "SELECT t.name, t.run, r.command, r.started_ns, 1 FROM tags t "
          "JOIN runs r ON r.id = t.run ORDER BY t.name");
    emitter e;
    emit_begin(&e, stdout, emit_mode_of(o), tag_cols, NTAG, p->color ? EMIT_COLOR : 0);
    while (pdb_step(p, st) == SQLITE_ROW) {
        emit_val v[NTAG] = {{.s = pdb_col_text(st, 0)},
                            {.i = sqlite3_column_int64(st, 1), .null = sqlite3_column_type(st, 1) == SQLITE_NULL},
                            {.i = sqlite3_column_int64(st, 3)}, {.s = pdb_col_text(st, 2)}};
        emit_row(&e, v, NULL);
    }
    sqlite3_finalize(st);
    emit_end(&e, "no tags\n");
    return 0;
}

int cmd_tag(pdb *p, const pdb_opts *o)
{
    if (o->npos == 0)
        return list_tags(p, o);
    const char *name = o->pos[0];
    check_new_name(name);
    /* Several runs (RUN..., an id list, a tag of several, --all-runs, --command): runset.c. */
    if (o->npos > 2 || o->all_runs || o->command_sel || (o->npos == 2 && pdb_is_set_spec(o->pos[1])) ||
        (o->npos == 2 && pdb_tag_runs_count(p, o->pos[1]) > 0))
        return runset_tag(p, o, name);
    int64_t run;
    pdb_pick_runs(p, o, 1, 1, "tag NAME [RUN]", &run);
    /* Re-tagging moves the name. */
    sqlite3_stmt *st = pdb_prepare(p, "INSERT INTO tags(name, run) VALUES(?1, ?2) "
                                      "ON CONFLICT(name) DO UPDATE SET run = excluded.run");
    pdb_bind_text(st, 1, name);
    sqlite3_bind_int64(st, 2, run);
    pdb_step(p, st);
    sqlite3_finalize(st);
    if (p->has_tag_runs) {   /* it named several runs: now one */
        st = pdb_prepare(p, "DELETE FROM tag_runs WHERE name = ?");
        pdb_bind_text(st, 1, name);
        pdb_step(p, st);
        sqlite3_finalize(st);
    }
    printf("tagged '%s' -> %lld\n", name, (long long)run);
    return 0;
}

int cmd_untag(pdb *p, const pdb_opts *o)
{
    if (o->npos != 1)
        pdb_usage_die("untag: takes one tag NAME");
    sqlite3_stmt *st = pdb_prepare(p, "DELETE FROM tags WHERE name = ?");
    pdb_bind_text(st, 1, o->pos[0]);
    pdb_step(p, st);
    sqlite3_finalize(st);
    int changed = sqlite3_changes(p->db);
    if (p->has_tag_runs) {
        st = pdb_prepare(p, "DELETE FROM tag_runs WHERE name = ?");
        pdb_bind_text(st, 1, o->pos[0]);
        pdb_step(p, st);
        sqlite3_finalize(st);
        changed += sqlite3_changes(p->db);
    }
    char *shown = esc_ctrl(o->pos[0]);
    if (changed == 0)
        pdb_die("no tag '%s' in %s", shown, p->path);
    printf("untagged '%s'\n", shown);
    free(shown);
    return 0;
}
