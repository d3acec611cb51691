/* tag.c - `piano-db tag [NAME [RUN]]` and `piano-db untag NAME`.
 * Tag names are any text: they only ever reach SQL as bound parameters. */
#include "piano_db.h"
#include <string.h>

static int list_tags(pdb *p, const pdb_opts *o)
{
    FILE *f = stdout;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT t.name, t.run, r.command, r.started_ns FROM tags t "
                                      "JOIN runs r ON r.id = t.run ORDER BY t.name");
    static const char *hdr[] = {"Tag", "Run", "Started", "Command"};
    table t;
    table_init(&t, 4, hdr, NULL);
    t.leftmask = 1u << 3;
    int n = 0;
    if (o->json)
        fputc('[', f);
    while (pdb_step(p, st) == SQLITE_ROW) {
        const char *name = pdb_col_text(st, 0);
        int64_t run = sqlite3_column_int64(st, 1);
        if (o->json) {
            fprintf(f, "%s\n  {\"tag\": ", n ? "," : "");
            json_str(f, name);
            fprintf(f, ", \"run\": %lld}", (long long)run);
        } else {
            char runs[32], when[64], cmd[128];
            snprintf(runs, sizeof runs, "%lld", (long long)run);
            fmt_time_local(when, sizeof when, sqlite3_column_int64(st, 3));
            fmt_cut(cmd, sizeof cmd, pdb_col_text(st, 2), 40);
            const char *cells[] = {name, runs, when, cmd};
            table_add(&t, cells, NULL);
        }
        n++;
    }
    sqlite3_finalize(st);
    if (o->json)
        fputs(n ? "\n]\n" : "]\n", f);
    else if (n == 0)
        fputs("no tags\n", f);
    else
        table_print(&t, f, p->color);
    table_free(&t);
    return 0;
}

int cmd_tag(pdb *p, const pdb_opts *o)
{
    if (o->npos == 0)
        return list_tags(p, o);
    if (o->npos > 2)
        pdb_usage_die("tag: too many arguments (tag NAME [RUN])");
    const char *name = o->pos[0];
    if (!*name)
        pdb_usage_die("tag: the tag name is empty");
    int64_t run = o->npos == 2 ? pdb_resolve_run(p, o->pos[1]) : pdb_latest_run(p, 0);
    if (run < 0)
        pdb_die("no runs stored in %s yet", p->path);
    /* Re-tagging moves the name. */
    sqlite3_stmt *st = pdb_prepare(p, "INSERT INTO tags(name, run) VALUES(?1, ?2) "
                                      "ON CONFLICT(name) DO UPDATE SET run = excluded.run");
    pdb_bind_text(st, 1, name);
    sqlite3_bind_int64(st, 2, run);
    pdb_step(p, st);
    sqlite3_finalize(st);
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
    if (sqlite3_changes(p->db) == 0)
        pdb_die("no tag '%s' in %s", o->pos[0], p->path);
    printf("untagged '%s'\n", o->pos[0]);
    return 0;
}
