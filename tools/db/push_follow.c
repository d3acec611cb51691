/*
 * push_follow.c - piano-db push --follow (a live run's snapshot windows as
 * they appear) and --follow-all (each run stored from now on), until the run
 * ends, --count, or SIGINT/SIGTERM.
 */
#include "push_int.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

volatile sig_atomic_t stop_requested;

/* ---- --follow-all, --follow ---- */

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void catch_stop(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;   /* no SA_RESTART: the poll's sleep ends at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The profiles of run r's window w (nothing when it recorded nothing). */
static void make_window(pdb *p, pusher *ps, const pdb_opts *o, const run_info *r, pdb_window *w, window_push *out)
{
    memset(out, 0, sizeof *out);
    ctree t;
    pdb_window_tree(p, r, w, &t);
    run_info in = *r;   /* the window as a run of its own: its start and length */
    in.started_ns = r->started_ns + w->a_ns;
    in.duration_ns = w->b_ns - w->a_ns;
    char *name = series_name(p, o, r);
    out->query = ingest_query(ps->curl, name, &in);
    free(name);
    char what[64];
    snprintf(what, sizeof what, "%.3f-%.3f s%s", (double)w->a_ns / 1e9, (double)w->b_ns / 1e9,
             w->b_end ? " (its end)" : "");
    out->label = xstrdup(what);
    build_groups(&t, &in, 0, out->gz, out->len);   /* snapshots hold no heap in use */
    /* the spans of which one closed in the window (span_snapshots), as push sends a run's */
    if (ctree_add_window_spans(p, &t, r, w) > 0)
        build_group(&t, &in, 0, GROUP_SPANS, out->gz, out->len);
    ctree_free(&t);
}

/* The windows of run `key` after its first *done snapshots, up to its latest
 * (to its end when it has ended): into *out (grown, *n). Snapshots are
 * counted, not matched by time: a run's clock calibration, so its times,
 * move a little when it is stored. Returns 1 when the run has ended, 0 while
 * it runs, -1 when it is not there. */
int collect_windows(pdb *p, pusher *ps, const pdb_opts *o, const char *key, int64_t *done, int64_t *run_id,
                           window_push **out, size_t *n)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id, status FROM runs WHERE key = ?");
    pdb_bind_text(st, 1, key);
    int found = pdb_step(p, st) == SQLITE_ROW;
    int64_t id = found ? sqlite3_column_int64(st, 0) : -1;
    int ended = found && strcmp(pdb_col_text(st, 1), "running") != 0;
    sqlite3_finalize(st);
    if (!found)
        return -1;
    *run_id = id;
    run_info r;
    pdb_run_load(p, id, &r);
    /* From the last snapshot sent (the start before the first). */
    st = pdb_prepare(p, "SELECT t_ns FROM snapshot_times WHERE run = ? ORDER BY t_ns LIMIT -1 OFFSET ?");
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, *done > 0 ? *done - 1 : 0);
    int64_t from = 0;
    if (*done > 0 && pdb_step(p, st) == SQLITE_ROW)
        from = sqlite3_column_int64(st, 0);
    for (int more = 1; more;) {
        pdb_window w = { .set = 1, .a_ns = from };
        if (pdb_step(p, st) == SQLITE_ROW) {
            w.b_ns = sqlite3_column_int64(st, 0);
            ++*done;
        } else if (ended) {
            w.b_ns = r.duration_ns > from ? r.duration_ns : from;
            w.b_end = 1;
            more = 0;
        } else {
            break;
        }
        *out = xrealloc(*out, (*n + 1) * sizeof **out);
        make_window(p, ps, o, &r, &w, &(*out)[(*n)++]);
        from = w.b_ns;
    }
    sqlite3_finalize(st);
    pdb_run_free(&r);
    return ended;
}

/* Sends (or keeps) the windows made, and frees them. */
void send_windows(pdb *p, pusher *ps, int64_t run, const char *key, window_push *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        text sent = {0}, kept = {0};
        run_info r = {.id = run};
        for (int g = 0; g < NGROUPS; g++)
            if (v[i].gz[g])
                push_profile(p, ps, &r, g, v[i].query, v[i].gz[g], v[i].len[g], &sent, &kept);
        if (sent.n)
            printf("pushed run %s window %s: %s\n", key, v[i].label, sent.s);
        if (kept.n)
            printf("kept run %s window %s: %s, for the next push\n", key, v[i].label, kept.s);
        fflush(stdout);
        free(sent.s);
        free(kept.s);
        free(v[i].query);
        free(v[i].label);
        for (int g = 0; g < NGROUPS; g++)
            free(v[i].gz[g]);
    }
}

/* --follow: the live run `key`'s snapshots, each window pushed as it
 * appears, until the run ends (then the rest to its end) or SIGINT/SIGTERM.
 * The live runs are read in a transaction never committed (pdb_live_reload),
 * the profiles made there; it is rolled back before anything is sent or
 * kept, so the queue is written for good. */
void follow_run(pdb *p, pusher *ps, const pdb_opts *o, const char *key)
{
    catch_stop();
    printf("following run %s: pushing each new snapshot's window to %s (Ctrl-C stops)\n", key, ps->url);
    fflush(stdout);
    int64_t done = 0, run = -1;
    size_t windows = 0;
    double retry_at = pdb_now_s() + FOLLOW_RETRY_S;
    int ended = 0, before = ps->again ? NOT_PUSHED : pushed_get(p, ps, key, &done);
    if (before == WHOLE_PUSHED) {
        printf("run %s went to %s before (sent, or kept for the next push): not sent again (--again sends it anew)\n",
               key, ps->url);
        return;
    }
    if (done)
        printf("its first %lld snapshot windows went before: following from there\n", (long long)done);
    while (!stop_requested && !ended) {
        pdb_recover_pending(p);   /* a process that died: its run stored from its spool */
        pdb_live_reload(p);
        window_push *v = NULL;
        size_t n = 0;
        int r = collect_windows(p, ps, o, key, &done, &run, &v, &n);
        if (!sqlite3_get_autocommit(p->db))
            sqlite3_exec(p->db, "ROLLBACK", NULL, NULL, NULL);
        if (r < 0)
            pdb_die("push --follow: run %s is gone (neither running nor stored in %s)", key, p->path);
        ended = r == 1;
        if (n || pdb_now_s() >= retry_at) {
            ps->down = 0;   /* new windows or the time to retry: try the server again */
            queue_flush(p, ps);
            retry_at = pdb_now_s() + FOLLOW_RETRY_S;
        }
        send_windows(p, ps, run, key, v, n);
        if (n)
            pushed_set(p, ps, key, done, ended);
        windows += n;
        free(v);
        if (!ended)
            sleep_ms(FOLLOW_LIVE_POLL_MS);
    }
    printf("pushed %zu window%s of run %s%s\n", windows, windows == 1 ? "" : "s", key,
           stop_requested ? " (stopped)" : ended ? " (it ended)" : "");
}

/* Pushes each run stored from now on (complete, or recovered from a crashed
 * process's spool) until SIGINT or SIGTERM, or --count runs. What the server
 * could not take is tried again with the next run, or every FOLLOW_RETRY_S. */
void follow_all(pdb *p, pusher *ps, const pdb_opts *o)
{
    catch_stop();
    sqlite3_stmt *st = pdb_prepare(p, "SELECT coalesce(max(id), 0) FROM runs");
    pdb_step(p, st);
    int64_t last = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = pdb_prepare(p, "SELECT id FROM runs WHERE id > ? ORDER BY id LIMIT 1");
    printf("following %s: pushing each new run to %s (Ctrl-C stops)\n", p->path, ps->url);
    fflush(stdout);
    long done = 0;
    double retry_at = pdb_now_s() + FOLLOW_RETRY_S, recover_at = 0;
    while (!stop_requested && (!o->count_set || done < o->count)) {
        if (pdb_now_s() >= recover_at) {   /* crashed processes' runs, once a second */
            pdb_recover_pending(p);
            recover_at = pdb_now_s() + 1;
        }
        sqlite3_bind_int64(st, 1, last);
        int64_t id = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
        sqlite3_reset(st);   /* no read transaction held between polls */
        if (id < 0 && (pdb_now_s() < retry_at || !queue_count(p, ps->url))) {
            sleep_ms(FOLLOW_POLL_MS);
            continue;
        }
        ps->down = 0;   /* a new run or the time to retry: try the server again */
        queue_flush(p, ps);
        if (id >= 0) {
            push_run(p, ps, o, id);
            last = id;
            done++;
        }
        retry_at = pdb_now_s() + FOLLOW_RETRY_S;
    }
    sqlite3_finalize(st);
    printf("pushed %ld new run%s%s\n", done, done == 1 ? "" : "s", stop_requested ? " (stopped)" : "");
}
