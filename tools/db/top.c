/* top.c - `piano-db top [RUN|PID]`: a live run's functions, refreshed every
 * interval (like perf top): by self time over the last interval, with calls/s,
 * frames/s and the totals so far. Each refresh reads the live spool again
 * into the transaction piano-db never commits (common.c, import_live). On a
 * terminal the screen is redrawn and `q` quits; otherwise one table per
 * interval is printed, until the process ends or --count tables. */
#include "piano_db.h"
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define TOP_DEFAULT_ROWS 20

static const emit_col top_cols[] = {
    {.head = "Function", .type = COL_TEXT, .flags = COL_FIT_NAMES, .minw = 20},
    {.head = "Self/s", .type = COL_NS, .minw = 11},   /* self time in the last interval, per second */
    {.head = "Calls/s", .type = COL_INT, .minw = 9},
    {.head = "Self", .type = COL_NS, .minw = 11},     /* so far */
    {.head = "Calls", .type = COL_INT, .minw = 9},
};
enum { NTOP = sizeof top_cols / sizeof *top_cols };

typedef struct {       /* a function's totals at the previous refresh */
    char *key;         /* name, file and line */
    int64_t calls, self_ns;
} seen_fn;

typedef struct {
    seen_fn *v;
    size_t n;
    int64_t frames;
    double at;         /* CLOCK_MONOTONIC seconds */
} seen_set;

static char *fn_key(const fnrow *r)
{
    size_t n = strlen(r->name) + strlen(r->file) + 32;
    char *k = xmalloc(n);
    snprintf(k, n, "%s\t%s\t%lld", r->name, r->file, (long long)r->line);
    return k;
}

static const seen_fn *seen_find(const seen_set *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].key, key))
            return &s->v[i];
    return NULL;
}

static void seen_free(seen_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].key);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Reads the live runs again; the id of the one whose key is `key` while it
 * is running (0 when it is not: it ended). */
static int64_t reload(pdb *p, const char *key)
{
    if (pdb_live_reload(p) != 0)
        pdb_die("%s: %s", p->path, sqlite3_errmsg(p->db));
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id FROM runs WHERE key = ? AND status = 'running'");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    int64_t id = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return id;
}

/* The live run the arguments name: a run id or a pid; else the newest. */
static int64_t pick_live(pdb *p, const pdb_opts *o)
{
    sqlite3_stmt *st = pdb_prepare(p, o->npos ? "SELECT id FROM runs WHERE status = 'running' AND (id = ?1 OR pid = ?1) "
                                                "ORDER BY started_ns DESC LIMIT 1"
                                              : "SELECT id FROM runs WHERE status = 'running' "
                                                "ORDER BY started_ns DESC, id DESC LIMIT 1");
    if (o->npos)
        sqlite3_bind_int64(st, 1, (int64_t)strtoll(o->pos[0], NULL, 10));
    int64_t id = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (!id && o->npos)
        pdb_die("top: no live run %s (piano-db runs lists them)", o->pos[0]);
    if (!id)
        pdb_die("top: no live run (piano-db runs lists them)");
    return id;
}

typedef struct {       /* a row of the table */
    const char *label;
    int64_t self_ns, calls;       /* in the last interval */
    int64_t total_self, total_calls;
} top_row;

static int by_interval_self(const void *a, const void *b)
{
    const top_row *x = a, *y = b;
    return x->self_ns != y->self_ns ? (x->self_ns < y->self_ns ? 1 : -1) : strcmp(x->label, y->label);
}

/* One refresh: the table of run r against `before`, which becomes now's. */
static void show(FILE *f, pdb *p, const pdb_opts *o, const run_info *r, seen_set *before, int screen)
{
    fnset s;
    pdb_load_functions(p, r, -1, AGG_BY_LINE | AGG_CORRECTED, &s);
    double at = pdb_now_s(), dt = before->at > 0 ? at - before->at : 0, per = dt > 0 ? 1.0 / dt : 0;
    seen_set now = { xcalloc(s.n + 1, sizeof(seen_fn)), s.n, r->frames, at };
    top_row *rows = xcalloc(s.n + 1, sizeof *rows);
    for (size_t i = 0; i < s.n; i++) {
        const fnrow *fr = &s.v[i];
        now.v[i] = (seen_fn){ fn_key(fr), fr->calls, fr->self_ns };
        const seen_fn *b = seen_find(before, now.v[i].key);
        rows[i] = (top_row){ fr->label, fr->self_ns - (b ? b->self_ns : 0), fr->calls - (b ? b->calls : 0),
                             fr->self_ns, fr->calls };
    }
    qsort(rows, s.n, sizeof *rows, by_interval_self);
    if (screen)
        fputs("\033[H\033[2J", f);
    else if (before->at > 0)
        fputc('\n', f);
    char *command = esc_ctrl(r->command);
    fprintf(f, "piano-db top: run %lld, %s (pid %lld), %.1f s; %.0f frames/s%s\n\n", (long long)r->id, command,
            (long long)r->pid, (double)r->duration_ns / 1e9, (double)(r->frames - before->frames) * per,
            screen ? "; q quits" : "");
    free(command);
    emitter e;
    emit_begin(&e, f, EMIT_TABLE, top_cols, NTOP, p->color ? EMIT_COLOR : 0);
    size_t shown = o->top_set ? (size_t)o->top : TOP_DEFAULT_ROWS;
    for (size_t i = 0; i < s.n && i < shown; i++) {
        emit_val v[NTOP] = { { .s = rows[i].label },
                             { .i = (int64_t)((double)rows[i].self_ns * per), .null = dt <= 0 },
                             { .i = (int64_t)((double)rows[i].calls * per), .null = dt <= 0 },
                             { .i = rows[i].total_self },
                             { .i = rows[i].total_calls } };
        emit_row(&e, v, NULL);
    }
    emit_end(&e, "(no call recorded yet)");
    fflush(f);
    free(rows);
    fnset_free(&s);
    seen_free(before);
    *before = now;
}

static struct termios saved_tty;
static int tty_raw;

static void tty_restore(void)
{
    if (tty_raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
    tty_raw = 0;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Waits an interval; 1 when q was pressed (a terminal) or a signal came. */
static int wait_interval(int screen, double interval)
{
    struct pollfd in = { STDIN_FILENO, POLLIN, 0 };
    double end = pdb_now_s() + interval;
    while (!stop && pdb_now_s() < end) {
        int ms = (int)((end - pdb_now_s()) * 1000) + 1;
        if (!screen) {
            poll(NULL, 0, ms);
            continue;
        }
        if (poll(&in, 1, ms) > 0) {
            char c = 0;
            if (read(STDIN_FILENO, &c, 1) <= 0 || c == 'q' || c == 'Q' || c == 3)
                return 1;
        }
    }
    return stop;
}

int cmd_top(pdb *p, const pdb_opts *o)
{
    if (o->npos > 1)
        pdb_usage_die("top: one run or pid at most");
    run_info r;
    pdb_run_load(p, pick_live(p, o), &r);
    char *key = xstrdup(r.key);
    int screen = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
    if (screen && tcgetattr(STDIN_FILENO, &saved_tty) == 0) {
        struct termios raw = saved_tty;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        tty_raw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
        atexit(tty_restore);
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    double interval = o->interval_set ? (double)o->interval : 1.0;
    seen_set before = { 0 };
    long shown = 0;
    for (;;) {
        show(stdout, p, o, &r, &before, screen);
        pdb_live_release(p);   /* no lock held while waiting: a program may end and store its run */
        if ((o->count_set && ++shown >= o->count) || wait_interval(screen, interval))
            break;
        int64_t id = reload(p, key);
        pdb_run_free(&r);
        if (!id) {
            printf("\nthe process ended: its run is stored when it exits (piano-db report shows it)\n");
            free(key);
            seen_free(&before);
            tty_restore();
            return 0;
        }
        pdb_run_load(p, id, &r);
    }
    pdb_run_free(&r);
    free(key);
    seen_free(&before);
    tty_restore();
    return 0;
}
