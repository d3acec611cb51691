/* runs.c - `piano-db runs`: the stored runs, newest first. */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

int cmd_runs(pdb *p, const pdb_opts *o)
{
    if (o->npos)
        pdb_usage_die("runs: takes no arguments");
    FILE *f = stdout;
    /* parent: the run whose key is this run's parent_key, if stored. */
    sqlite3_stmt *st = pdb_prepare(p,
        "SELECT r.id, r.pid, (SELECT q.id FROM runs q WHERE q.key = r.parent_key), r.command, "
        "r.started_ns, r.duration_ns, r.status, r.frames_dropped "
        "FROM runs r ORDER BY r.started_ns DESC, r.id DESC");
    sqlite3_stmt *tq = pdb_prepare(p, "SELECT name FROM tags WHERE run = ? ORDER BY name");
    static const char *hdr[] = {"Run", "Tags", "PID", "Parent", "Command", "Started", "Duration",
                                "Status", "Frames"};
    table t;
    table_init(&t, 9, hdr, NULL);
    t.leftmask = 1u << 1 | 1u << 4 | 1u << 7;
    t.fit_col = 4; /* the program's name and its arguments, the arguments cut to fit */
    t.fit_mode = FIT_COMMAND;
    int n = 0;
    if (o->json)
        fputc('[', f);
    while (pdb_step(p, st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int64_t pid = sqlite3_column_int64(st, 1);
        int has_parent = sqlite3_column_type(st, 2) != SQLITE_NULL;
        int64_t parent = sqlite3_column_int64(st, 2);
        char *command = xstrdup(pdb_col_text(st, 3));
        int64_t started = sqlite3_column_int64(st, 4), duration = sqlite3_column_int64(st, 5);
        char *status = xstrdup(pdb_col_text(st, 6));
        int64_t frames = pdb_frame_count(p, id, -1);
        sqlite3_reset(tq);
        sqlite3_bind_int64(tq, 1, id);
        if (o->json) {
            fprintf(f, "%s\n  {\"run\": %lld, \"tags\": [", n ? "," : "", (long long)id);
            int k = 0;
            while (pdb_step(p, tq) == SQLITE_ROW) {
                if (k++)
                    fputs(", ", f);
                json_str(f, pdb_col_text(tq, 0));
            }
            fprintf(f, "], \"pid\": %lld, \"parent\": ", (long long)pid);
            if (has_parent)
                fprintf(f, "%lld", (long long)parent);
            else
                fputs("null", f);
            fputs(", \"command\": ", f);
            json_str(f, command);
            fprintf(f, ", \"started\": %lld, \"duration_ns\": %lld, \"status\": ", (long long)started,
                    (long long)duration);
            json_str(f, status);
            fprintf(f, ", \"frames\": %lld}", (long long)frames);
        } else {
            char tags[256] = "", runs[32], pids[32], par[32], when[64], dur[32], fr[48];
            size_t used = 0;
            while (pdb_step(p, tq) == SQLITE_ROW) {
                const char *name = pdb_col_text(tq, 0);
                int w = snprintf(tags + used, sizeof tags - used, "%s%s", used ? "," : "", name);
                if (w < 0 || (size_t)w >= sizeof tags - used) {
                    tags[sizeof tags - 1] = 0;
                    break;
                }
                used += (size_t)w;
            }
            char tagcut[128];
            fmt_cut(tagcut, sizeof tagcut, used ? tags : "-", 30);
            snprintf(runs, sizeof runs, "%lld", (long long)id);
            snprintf(pids, sizeof pids, "%lld", (long long)pid);
            if (has_parent)
                snprintf(par, sizeof par, "%lld", (long long)parent);
            else
                snprintf(par, sizeof par, "-");
            fmt_time_local(when, sizeof when, started);
            /* A process that died before piano saw it do anything (a call, a
             * frame) left no moment it was seen alive: its duration is not 0. */
            if (duration == 0 && !strcmp(status, "recovered"))
                snprintf(dur, sizeof dur, "unknown");
            else
                fmt_ns(dur, sizeof dur, (double)duration);
            snprintf(fr, sizeof fr, "%lld", (long long)frames);
            const char *cells[] = {runs, tagcut, pids, par, command, when, dur, status, fr};
            table_add(&t, cells, NULL);
        }
        free(command);
        free(status);
        n++;
    }
    sqlite3_finalize(tq);
    sqlite3_finalize(st);
    if (o->json)
        fputs(n ? "\n]\n" : "]\n", f);
    else if (n == 0)
        fprintf(f, "no runs stored in %s yet\n", p->path);
    else
        table_print(&t, f, p->color);
    table_free(&t);
    return 0;
}
