/*
 * piano_db.h - what the piano-db sources share: the open database, command
 * options, what the commands read, per-function aggregation, rendering and
 * the significance test.
 *
 * Layout: main.c (dispatch, options, help), common.c (opening, statements,
 * errors), query.c (runs, function keys and labels, frames), emit.c (result
 * sets as tables, JSON or CSV), aggregate.c (per-function figures of a run),
 * runset.c (sets of runs: report SET, diff SET, tag NAME SET, runs --group),
 * report.c, frames.c (report --frames), runs.c, tag.c, diff.c, admin.c (rm,
 * gc), format.c (units, UTF-8, text tables, names fitted to the width),
 * stats.c (Mann-Whitney test on histograms), ctxtree.c (calling contexts
 * merged across threads), flame.c (flamegraph), plot.c (plot: the dispatch,
 * and plot frames), plot_heap.c (plot heap), timeline.c (plot timeline),
 * export.c (folded, chrome, callgrind), pprof.c (export --format pprof),
 * push.c (push: profiles to Pyroscope), svg.c (output files, XML, the SVG
 * head and the charts' axes, under flame.c and the three charts).
 */
#ifndef PIANO_DB_H
#define PIANO_DB_H
#include "hist.h"
#include "metrics.h"
#include "frames_blob.h"   /* piano_frame_row, the frames_scan reads (store/) */
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes: 0 ok, 1 error, 2 bad usage, 3 diff --fail-above tripped, 4 push
 * left profiles unsent (kept in the database for the next push). */
enum { EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_REGRESSION = 3, EXIT_UNSENT = 4 };

/* ---- options (main.c) ---- */
typedef struct {
    const char *cmd;
    const char *db;
    int json, csv, all, threads, frames, spikes, uncorrected, cpu, heap, spans;
    int header;         /* sql --header */
    const char *sort;
    const char *group;  /* report, diff, flamegraph, export --group template; runs --group command|parent */
    int all_runs;       /* report, tag --all-runs: every run that recorded something */
    const char *command_sel; /* report, tag --command NAME: the runs of that program */
    long top;
    int top_set;
    long thread;
    int thread_set;
    double fail_above;
    int fail_set;
    long keep;
    int keep_set;
    const char *output; /* -o/--output FILE (NULL or "-": stdout) */
    const char *format; /* export --format */
    const char *metric; /* flamegraph, export --metric: what widths and values are (NULL: wall) */
    int diff;           /* flamegraph --diff */
    const char *app, *tenant;   /* push --app, --tenant */
    const char *auth;           /* push --auth USER:TOKEN */
    int again;                  /* push --again */
    const char **labels;        /* push --label KEY=VALUE, in order */
    int nlabels;
    long timeout, count;        /* push --timeout SECS, --count N (also top's) */
    long interval;              /* top --interval SECS */
    int interval_set;
    int timeout_set, count_set, follow_all, follow, kept;
    const char *from, *to;      /* report --from T1, --to T2 (seconds from the run's start) */
    const char **pos;
    int npos;
} pdb_opts;

/* ---- the open database (common.c) ---- */
typedef struct {
    sqlite3 *db;
    char path[4096];
    int color; /* stdout is a TTY and NO_COLOR is unset */
    /* What the schema has, probed once at open (pdb_open): a database of an
     * older schema opened read-only is read as it is. */
    int has_child_calls; /* stats.child_calls exists (databases made before it lack it) */
    int has_inuse;       /* stats.inuse_bytes and runs.heap_peak_bytes exist (schema 11) */
    int has_cpu;         /* stats has the CPU columns (schema 9) */
    int has_allocator;   /* runs.allocator exists (schema 6) */
    unsigned char has_metric[PIANO_M_N]; /* stats has metric m's column (spool/metrics.h) */
    int has_selection;   /* runs.selection exists (schema 13) */
    int has_tag_runs;    /* the table tag_runs exists (schema 15; made by piano-db's first tag of a set before) */
    int has_views;       /* the TEMP views contexts and stats are made (common.c register_views) */
} pdb;

typedef struct {
    int64_t id;
    char *key, *parent_key, *command, *status;
    int64_t pid, started_ns, duration_ns, frames_dropped, samples_dropped, calls_untimed;
    double ns_per_tick, overhead_ns;
    /* The frame budget (schema 5): every frame counted, the rows kept (-1: not
     * stored: count the frames table), spikes past the spike limit. */
    int64_t frames, frames_kept, spikes_unkept;
    /* What the run measured, decided once (pdb_run_load): CPU time
     * (PIANO_CPU=1 and perf_event_open allowed: runs.cpu_mode 'perf') and
     * heap in use (PIANO_HEAP=1: runs.heap_peak_bytes not NULL). */
    int cpu_measured, heap_tracked;
    int64_t heap_peak_bytes;   /* the run's heap peak, when heap_tracked (else 0) */
    int picked;                /* taken by default (no RUN given): the latest run (cmd_report) */
} run_info;

void pdb_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* When set, pdb_die and pdb_usage_die call it with the message instead of
 * exiting; it must not return (test/fuzz longjmps out). NULL in piano-db. */
extern void (*pdb_die_hook)(const char *msg);
void pdb_usage_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Opens the database dbopt names (NULL: $PIANO_DB, else ~/.piano/piano.db), after
 * piano_db_resolve_path's checks; dies with one line. write: the command
 * changes it (else it is opened read-only). Runs of crashed processes waiting in
 * the spool are stored first when the database can be written (else a warning). */
void pdb_open(pdb *p, const char *dbopt, int write);
/* pdb_open's write for `sql`: the database as it is (runs of crashed or live
 * processes not imported), opened for writing when the file can be written. */
enum { PDB_OPEN_AS_IS = 2 };
void pdb_close(pdb *p);
/* Stores the runs of crashed processes waiting in the spool (a database opened
 * for writing); a failure is one warning line. Returns how many were stored. */
int pdb_recover_pending(pdb *p);
/* The runs of live processes, as they are now, for a command that only reads:
 * imported into a transaction that is never committed (common.c says why);
 * read again when called again. Returns 0, or -1 when the database is busy. */
int pdb_live_reload(pdb *p);
/* Ends that transaction (its write lock: a program ending meanwhile stores
 * its run), for a command that goes on without the live runs for a while. */
void pdb_live_release(pdb *p);
/* What of a live run pdb_live_reload reads (store/import.h PIANO_LIVE_*):
 * what the command shows. Set before pdb_open; PIANO_LIVE_ALL by default. */
extern unsigned pdb_live_parts;
/* CLOCK_MONOTONIC in seconds. */
double pdb_now_s(void);
sqlite3_stmt *pdb_prepare(pdb *p, const char *sql);
/* sqlite3_step that dies on errors; returns SQLITE_ROW or SQLITE_DONE. */
int pdb_step(pdb *p, sqlite3_stmt *st);
void pdb_bind_text(sqlite3_stmt *st, int i, const char *s);
const char *pdb_col_text(sqlite3_stmt *st, int i); /* never NULL */

/* ---- what the commands read (query.c) ---- */
/* Run id of a run id, run key or tag name; dies if none. */
int64_t pdb_resolve_run(pdb *p, const char *arg);
/* The one resolver of run arguments: the `want` runs (1 or 2) that the positional
 * arguments from o->pos[first] name, into ids (for 2: A then B). Missing ones are
 * the latest runs that recorded something (a call, an allocation or a frame;
 * empty runs only when there are not enough others); with none given for 2, the
 * older of the two is A. Dies (usage, naming `usage`) when more arguments than
 * `want` are given, or when the runs are not there. */
void pdb_pick_runs(pdb *p, const pdb_opts *o, int first, int want, const char *usage, int64_t *ids);
void pdb_run_load(pdb *p, int64_t id, run_info *r);
/* Whether the run recorded a call, an allocation or a frame: what the runs
 * taken by default have (an empty run is kept as a parent, or by choice). */
int pdb_run_recorded(pdb *p, int64_t id);
void pdb_run_free(run_info *r);
/* Every completed frame of the run (or thread), kept or not: the stored count
 * (runs.frames, threads.frames), or for runs stored without one, count(*). */
int64_t pdb_frame_count(pdb *p, int64_t run, long thread /* -1: all */);
/* The frame histogram of the run (or thread) into h (zeroed here): 1, or 0
 * when it has none (stored before schema 5: every frame is in the table). */
int pdb_frame_hist(pdb *p, int64_t run, long thread, piano_hist *h);
/* The exact median total_ns of the n stored frames of the run (thread), for
 * runs without a frame histogram: SQLite sorts them (on disk past its cache). */
double pdb_frames_median(pdb *p, int64_t run, long thread, int64_t n);
int64_t pdb_unfinished_count(pdb *p, int64_t run);

/* Labels of rows sorted by name: the name, or where it stands on more than one
 * row "name (file:line)" (lines NULL: "name (file)"), the file as given or
 * (short_files) as the shortest path suffix that tells that name's rows apart.
 * n new strings (names_free). */
char **fn_labels(const char *const *names, const char *const *files, const int64_t *lines, size_t n,
                 int short_files);

/* Function keys: ids of a run grouped by (name, file, line), labelled like
 * report rows; ids the functions table lacks share the key "(unknown)". */
typedef struct {
    int64_t *ids;
    int *key_of; /* parallel to ids, sorted by id */
    size_t nids;
    char **names, **files, **labels;
    int64_t *lines;
    int nkeys;
} fkeys;
void fkeys_load(pdb *p, int64_t run, fkeys *k);
int fkeys_find(const fkeys *k, int64_t id); /* key, or the "(unknown)" key */
size_t fkeys_index(const fkeys *k, int64_t id); /* the index of id in k->ids, or k->nids */
void fkeys_free(fkeys *k);

/* The self time of one function key in one frame. */
typedef struct {
    int key;
    int64_t self_ns;
} fnself;
/* Decodes frame seq's fns blob into per-key self times (ids of one key summed,
 * keys in first-seen order) in *buf (grown, *cap); returns how many. Dies on a
 * malformed blob. */
size_t fns_decode(pdb *p, const fkeys *k, const unsigned char *b, size_t len, int64_t seq, fnself **buf,
                  size_t *cap);

/* The run's (thread's) kept frames; with `cond` (SQL on the view frames,
 * binding ?3 to x), those meeting it; cond "spike": the run's own marks. */
int64_t frames_count_rows(pdb *p, int64_t run, long thread, const char *cond, double x);
/* The median frame and the spike threshold (2x the median) of every frame of
 * the run (thread), kept or not, from its frame histogram (has_hist). Runs
 * stored before schema 5 have none but every frame in the table: with
 * from_table, they come from the stored rows (counted into stored; else -1). */
typedef struct {
    int has_hist;
    double median_ns, spike_ns;
    int64_t stored;
} frame_split;
void frames_split(pdb *p, const run_info *r, long thread, int from_table, frame_split *s);
/* Which frames a view shows, in order: the first `first` (-1: all), then up
 * to `spikes` (-1: all) spikes after them, found through the partial indexes
 * of frame_rows.spike and frame_blocks.spikes (use_col: the run's own marks)
 * or as total_ns > spike_ns. */
typedef struct {
    int64_t first, spikes;
    int use_col;
    double spike_ns;
} frame_window;
/* Every frame of a run (of thread `thread`, -1: all; spikes_only: the run's
 * marked spikes, any thread) with a seq above `after`, in seq order: the rows
 * of frame_rows merged with the frames of frame_blocks (store/frames_blob.h).
 * A frame returned is valid until the next call. Dies on a malformed block. */
typedef struct {
    pdb *p;
    int64_t run, after, block_seq;
    long thread;
    int spikes_only;
    sqlite3_stmt *rows, *blocks;
    piano_frame_row row_r;      /* the current row of frame_rows */
    piano_frames_reader blk;    /* the current block, at its current frame */
    int in_block, has_row, has_block, advance_rows, advance_block;
} frame_scan;
void frame_scan_open(frame_scan *s, pdb *p, int64_t run, long thread, int spikes_only, int64_t after);
const piano_frame_row *frame_scan_next(frame_scan *s);   /* NULL at the end */
void frame_scan_close(frame_scan *s);
/* The frames of a view, one by one, their fns decoded into fns[0..nfns). */
typedef struct {
    pdb *p;
    const fkeys *k;
    frame_scan scan;
    frame_window win;
    int64_t run, after, shown, spikes_shown;
    long thread_want;
    int phase;       /* 0: the first frames, 1: starting the spikes, 2: the spikes */
    int64_t seq, thread, start_ns, total_ns, allocs, alloc_bytes, frees, free_bytes;
    int64_t cpu_ns;  /* CPU time in the frame, when cpu_known */
    int cpu_known;
    fnself *fns;
    size_t nfns, cap;
} frame_iter;
void frame_iter_open(frame_iter *it, pdb *p, const fkeys *k, int64_t run, long thread, const frame_window *w);
int frame_iter_next(frame_iter *it);
void frame_iter_close(frame_iter *it);

/* ---- sets of runs (runset.c) ---- */
typedef struct {
    int64_t *ids;      /* the runs that recorded something, ascending */
    size_t n;
    size_t empty;      /* runs named that recorded nothing: left out */
    size_t total;      /* runs named */
    char *what;        /* how it was named: "3..40", "tag suite", "--command jq", "--all-runs" */
} runset;
/* Whether s is a list of run ids and ranges ("3..40", "3,5", "3..40,45"). */
int pdb_is_set_spec(const char *s);
/* arg as a set: an id list or a tag naming several runs: 1 (s filled), else 0
 * (arg names one run, or nothing). */
int pdb_set_arg(pdb *p, const char *arg, runset *s);
/* The set of --all-runs, --command NAME, or of the one argument o->pos[first]
 * when it names a set: 1 (s filled; dies when no run of it recorded
 * anything), else 0. */
int pdb_set_pick(pdb *p, const pdb_opts *o, int first, runset *s);
void runset_free(runset *s);
/* "38 runs summed (3..40; 2 that recorded nothing left out)" into buf. */
void pdb_set_describe(const runset *s, char *buf, size_t n);
/* How many runs tag name names in tag_runs (0: none, or a tag of one run). */
int64_t pdb_tag_runs_count(pdb *p, const char *name);
/* tag NAME SET...: names several runs (runset.c). */
int runset_tag(pdb *p, const pdb_opts *o, const char *name);
/* The run a one-run command's argument names (0, r loaded), or the set
 * (1; s filled and r standing for it: id -1, command its description, start
 * and duration spanning its runs, heap peak the largest; pdb_run_free it). */
int pdb_pick_run_or_set(pdb *p, const pdb_opts *o, const char *usage, run_info *r, runset *s);
/* runs --group command|parent. */
int runs_grouped(pdb *p, const pdb_opts *o);
/* After runs' table of `shown` runs: when 50 or more, most of one program
 * (10 or more), a line saying how to group and sum them. */
void runs_hint(pdb *p, size_t shown);

/* ---- per-function figures (aggregate.c) ---- */
typedef struct {
    uint16_t b;
    uint64_t c;
} hbin;

/* The overhead correction of one function's per-call self times: a call of
 * raw self time v shows max(v - shift_ns, v * keep), at least 0. shift_ns is
 * the average overhead of a call's instrumented children; keep is the share of
 * the function's whole self time left after its correction, so a call is never
 * cut by more than that share. (Uncorrected: {0, 1}.) Without the bound, a
 * function whose children are all under a few of its calls (an interpreter's
 * dispatch loop: one call runs the program, the others a line) would show
 * every other call as 0. */
typedef struct {
    double shift_ns, keep;
} call_fix;

static inline double call_fix_ns(double v, call_fix f)
{
    double shifted = v - f.shift_ns, kept = v * f.keep;
    double r = shifted > kept ? shifted : kept;
    return r > 0 ? r : 0;
}

typedef struct {
    char *name, *file;
    int64_t line;
    char *label; /* name, or "name (file:line)" when the name is ambiguous in the set */
    /* A field per metric of spool/metrics.h (calls, self_ns, ... p50_ns, ...
     * cpu_ns, ... inuse_bytes, ... unfinished): fnrow_metric(row, m). */
#define PDB_METRIC_FIELD(id, ...) int64_t id;
    PIANO_METRICS(PDB_METRIC_FIELD)
#undef PDB_METRIC_FIELD
    int64_t child_calls;
    int window;      /* figures of a window: only the metrics kept per snapshot (pdb_load_window) */
    /* CPU time (when CPU): known only when every thread's row measured it.
     * Heap in use (when HEAP): inuse_known 0 when the run did not track it. */
    int cpu_known, inuse_known;
    call_fix fix;    /* the correction of each call's self time ({0, 1} uncorrected) */
    hbin *hist;  /* per-call self-time histogram (sparse, ticks), when asked for */
    size_t nhist;
    hbin *hist_total;  /* per-call inclusive-time histogram, likewise (AGG_KEEP_HIST) */
    size_t nhist_total;
    int64_t instances; /* AGG_GROUP: the functions (names) the row sums */
} fnrow;

typedef struct {
    fnrow *v;
    size_t n, cap;
} fnset;

enum { AGG_BY_LINE = 1, AGG_KEEP_HIST = 2, AGG_CORRECTED = 4, AGG_GROUP = 8 };
/* Figures of run r's functions (thread -1: all threads merged), one row per
 * (name, file, line) -- or (name, file) without AGG_BY_LINE -- merging ids;
 * AGG_GROUP: one row per (name_group(name), file), its histograms merged. */
void pdb_load_functions(pdb *p, const run_info *r, long thread, int flags, fnset *out);
void fnset_free(fnset *s);
/* Each row's label (its name, with its place when the name is seen twice). */
void fnset_label(fnset *out, int by_line);
/* The functions of every run of s summed (runset.c): flags as
 * pdb_load_functions'; each run corrected with its own overhead; p50/p99 from
 * the histograms merged in ns (rows' hist: ns, fix {0, 1}). */
void pdb_set_load(pdb *p, const runset *s, long thread, int flags, fnset *out);
/* The calling contexts of the runs of s merged (as ctree_load's of one run). */
struct ctree_s;
void pdb_set_ctree(pdb *p, const runset *s, long thread, struct ctree_s *t);
/* Every frame of the runs of s (thread: of that thread number in each). */
int64_t pdb_set_frames(pdb *p, const runset *s, long thread);
/* The rows of st (bound, in pdb_load_functions' columns, sorted by name,
 * file, line), merged per key into out (zeroed); st is finalized. */
void pdb_load_rows(pdb *p, const run_info *r, sqlite3_stmt *st, int flags, fnset *out);
void fnset_row_free(fnrow *r);   /* one row's strings and histogram */
/* The metrics (spool/metrics.h) as data, and a row's figure of metric m. */
extern const struct piano_metric_info pdb_metrics[PIANO_M_N];
extern const size_t pdb_metric_offset[PIANO_M_N];
static inline int64_t *fnrow_metric(fnrow *r, int m)
{
    return (int64_t *)(void *)((char *)r + pdb_metric_offset[m]);
}
/* Whether row r has a figure for metric m (not NULL: measured, and kept in a window). */
int fnrow_known(const fnrow *r, int m);
/* Sorts by key (one of fnset_sort_keys(), descending); returns 0, -1 for an unknown key. */
int fnset_sort(fnset *s, const char *key);
/* The index of sort key name, or -1; and the keys as "self|total|...". */
int fnset_sort_key(const char *name);
const char *fnset_sort_keys(void);
int64_t corrected_ns(int64_t raw, double overhead);
/* a + b, held at INT64_MAX/INT64_MIN: stored figures are summed as read, and a
 * corrupt database must not make that undefined (found by test/fuzz). */
static inline int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* ---- formatting (format.c) ---- */
void fmt_ns(char *buf, size_t n, double ns);
void fmt_delta_ns(char *buf, size_t n, double ns);
void fmt_bytes(char *buf, size_t n, int64_t bytes);
void fmt_time_local(char *buf, size_t n, int64_t epoch_ns);
size_t utf8_width(const char *s);
/* Byte offset of the first code point past `w` display characters of s. */
size_t utf8_offset(const char *s, size_t w);
/* Length of the valid UTF-8 sequence at s (its code point into *cp), or 0
 * when it is not one (overlong, a surrogate, past U+10FFFF). */
int utf8_seq(const unsigned char *s, unsigned *cp);
/* Copies s into buf, cutting to at most max display characters with "..." */
void fmt_cut(char *buf, size_t n, const char *s, size_t max);
void json_str(FILE *f, const char *s);
/* Does s hold a control character (C0, DEL, C1)? */
int has_ctrl(const char *s);
/* s with its control characters escaped (\n, \t, \r, \x1b, \u0085), in a new
 * string: what tables and messages show of names, so a row stays one line. */
char *esc_ctrl(const char *s);
/* The width s takes in a table, its control characters escaped (print_pad). */
size_t shown_width(const char *s);
void csv_str(FILE *f, const char *s);

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_BOLD "\033[1m"
#define C_OFF "\033[0m"

/* A text table: column 0 and leftmask columns left-aligned, the others right-aligned. */
typedef struct {
    int ncols;
    const char **hdr;
    const int *minw; /* minimum widths (may be NULL) */
    unsigned leftmask; /* bit c: column c (> 0) is left-aligned text */
    char **cells;    /* nrows * ncols */
    const char **rowcolor;
    size_t nrows, cap;
    int fit_col;  /* this column's cells are shortened to fit the width (-1: none) */
    int fit_mode; /* FIT_NAMES or FIT_COMMAND */
} table;
enum { FIT_NAMES = 0, FIT_COMMAND = 1 };
/* Total width tables fit: $COLUMNS when set, else the terminal's when stdout is
 * one, else TABLE_WIDTH_NOT_TTY. */
#define TABLE_WIDTH_NOT_TTY 160
size_t term_width(void);
/* Names shown in max display characters: a C++ name without its return type,
 * then where needed template arguments elided (a<…>::f), parameters (f(…)),
 * then the middle cut (head…tail) that keeps the function's own name; never
 * two of them alike (rows that would read the same take another form that
 * fits, else a number: " #2"), never wider than max. n new strings (names_free). */
char **names_fit(const char *const *names, size_t n, size_t max);
/* A demangled C++ name without the return type a template function carries
 * (`char const* ns::f<char>(char const*)` -> `ns::f<char>(char const*)`), as a new string. */
char *name_without_return(const char *s);
/* The key of report --group template: the name without its return type, every
 * template argument list before its parameters and the parameters elided
 * (`fmt::detail::write<…>(…)`), as a new string. */
char *name_group(const char *s);
/* The name PIANO_FNS patterns see: without return type, template arguments and
 * parameters (`fmt::detail::write`), as a new string. */
char *name_for_pattern(const char *s);
void names_free(char **v, size_t n);
/* A run's command as shown: argv[0]'s base name and the arguments, the
 * arguments cut to fit max characters (the name never). New string. */
char *fmt_command(const char *cmd, size_t max);
/* Each path as its shortest suffix (whole components, "//" collapsed) that no
 * other, different path of the set ends with. n new strings (names_free). */
char **paths_short(const char *const *paths, size_t n);
void table_init(table *t, int ncols, const char **hdr, const int *minw);
/* Adds a row of ncols strings (copied); color may be NULL. */
void table_add(table *t, const char **cells, const char *color);
void table_print(table *t, FILE *f, int use_color);
void table_free(table *t);
void print_pad(FILE *f, const char *s, size_t width, int right);

/* ---- rendering result sets (emit.c) ---- */
typedef enum { EMIT_TABLE, EMIT_JSON, EMIT_CSV } emit_mode;
/* Column types: how a value reads in a table; outside tables the number types
 * are integers. */
enum {
    COL_TEXT,     /* s; a table cuts it to `cut` characters when set */
    COL_INT,      /* i */
    COL_NS,       /* i; tables: 1.25ms */
    COL_DELTA_NS, /* i; tables: +1.20ms */
    COL_BYTES,    /* i; tables: 24.1KB */
    COL_TIME,     /* i, ns since the epoch; tables: local time */
    COL_SIGNED,   /* i; tables: +3 */
    COL_REAL,     /* d, printed with fmt everywhere */
    COL_BOOL,     /* i: true or false everywhere */
    COL_FLAG,     /* i: JSON true or false, CSV 1 or 0 */
    COL_LIST,     /* names[n]: JSON an array; tables joined by ',' ('-' if empty) */
    COL_MAP,      /* names[n] -> ints[n]: a JSON object */
    COL_ROWS,     /* rows[n][nsub] of the columns sub: a nested JSON array; in CSV
                   * a line per nested row after this row's own values (the last column) */
};
enum { COL_LEFT = 1, COL_FIT_NAMES = 2, COL_FIT_COMMAND = 4, COL_NOJSON = 8, COL_NOCSV = 16 };
typedef struct emit_col {
    const char *head;  /* the table's header; NULL: not in tables */
    const char *key;   /* the JSON key and CSV header; NULL: tables only */
    int type;
    unsigned flags;    /* COL_LEFT: left-aligned text; COL_FIT_*: shortened to fit the width
                        * (table.fit_mode); COL_NOJSON, COL_NOCSV: left out there */
    int minw;          /* table: the least width (streamed: the width) */
    int cut;           /* COL_TEXT, COL_LIST in tables: at most this many characters (0: all) */
    const char *fmt;   /* COL_REAL */
    const char *csv;   /* the CSV header when it is not key */
    const struct emit_col *sub; /* COL_ROWS */
    int nsub;
} emit_col;
typedef struct emit_val {
    int null;          /* JSON null, CSV empty, tables '-' */
    int64_t i;
    double d;
    const char *s;
    const char *const *names;
    const int64_t *ints;
    const struct emit_val *rows;
    size_t n;
    const char *shown; /* tables show this instead */
} emit_val;
enum { EMIT_STREAM = 1, /* tables: print rows as they come, at fixed widths (minw) */
       EMIT_COLOR = 2 }; /* tables: rows in their colour */
typedef struct {
    FILE *f;
    emit_mode mode;
    const emit_col *cols;
    int ncols;
    unsigned flags;
    size_t rows;
    table t;           /* tables: the rows, printed at the end */
    int *table_col, ntable;
    const char **hdr;
    int *minw;
} emitter;
emit_mode emit_mode_of(const pdb_opts *o);
/* Starts the output: JSON's '[', CSV's header, a streamed table's header. */
void emit_begin(emitter *e, FILE *f, emit_mode mode, const emit_col *cols, int ncols, unsigned flags);
/* One row: v[ncols], parallel to the columns; color (tables) may be NULL. */
void emit_row(emitter *e, const emit_val *v, const char *color);
/* Ends it (a table is printed now; with no rows, `none` instead when given);
 * returns the rows. */
size_t emit_end(emitter *e, const char *none);

/* ---- significance (stats.c) ---- */
typedef struct {
    double p_value;     /* two-sided, normal approximation with tie correction */
    double z;           /* > 0: B tends larger (slower) */
    double median_a_ns, median_b_ns;
    double shift;       /* (median_b - median_a) / median_a, 0 if median_a is 0 */
    int significant;    /* p < PDB_ALPHA and |shift| >= PDB_MIN_SHIFT */
    int valid;          /* both sides have samples */
} sig_result;
#define PDB_ALPHA 0.001
#define PDB_MIN_SHIFT 0.02
/* Bucket values are call_fix_ns(ticks * ns_per_tick, fix). */
sig_result sig_mann_whitney(const hbin *a, size_t na, double nspt_a, call_fix fix_a,
                            const hbin *b, size_t nb, double nspt_b, call_fix fix_b);

/* ---- commands ---- */
int cmd_report(pdb *p, const pdb_opts *o);
int cmd_frames(pdb *p, const pdb_opts *o, const run_info *r);
void report_spans(pdb *p, const pdb_opts *o, const run_info *r);   /* report --spans (spans.c) */
void diff_spans(pdb *p, const pdb_opts *o, const run_info *ra, const run_info *rb);   /* diff --spans (spans.c) */
int cmd_runs(pdb *p, const pdb_opts *o);
int cmd_tag(pdb *p, const pdb_opts *o);
int cmd_untag(pdb *p, const pdb_opts *o);
int cmd_diff(pdb *p, const pdb_opts *o);
int cmd_rm(pdb *p, const pdb_opts *o);
int cmd_gc(pdb *p, const pdb_opts *o);
int cmd_flamegraph(pdb *p, const pdb_opts *o);
int cmd_plot(pdb *p, const pdb_opts *o);
int cmd_plot_heap(pdb *p, const pdb_opts *o, const run_info *r);   /* plot heap (plot_heap.c) */
int cmd_export(pdb *p, const pdb_opts *o);
/* flamegraph --metric: whether name is one; the names as "wall|alloc|...". */
int flame_metric_known(const char *name);
const char *flame_metric_names(void);
/* set: NULL, or the set r stands for (pdb_pick_run_or_set). */
void export_pprof(pdb *p, const pdb_opts *o, const run_info *r, const runset *set, long thread);
int cmd_push(pdb *p, const pdb_opts *o);
int cmd_top(pdb *p, const pdb_opts *o);
int cmd_snapshots(pdb *p, const pdb_opts *o);
int cmd_sql(pdb *p, const pdb_opts *o);   /* sql.c */

/* ---- snapshots over time (snapshots.c, window.c) ---- */
/* Whether the database has the snapshot tables (schema 10 on). */
int pdb_has_snapshots(pdb *p);
/* The run's snapshots (0 for a database without them). */
int64_t pdb_snapshot_count(pdb *p, int64_t run);
/* A window of a run: its figures between two snapshots. Asked as seconds
 * from the run's start (either side may be open); resolved to the snapshots
 * at or before them: the start (0, every figure 0) and the end of the run
 * count as snapshots. */
typedef struct {
    int set;                   /* a window was asked for */
    int from_set, to_set;
    double from_s, to_s;       /* as asked */
    int64_t a_ns, b_ns;        /* the snapshots used */
    int b_end;                 /* b is the end of the run (its stored figures) */
} pdb_window;
/* Parses "T1..T2" (either may be empty) into w; 0, or -1 when it is not one. */
int pdb_window_parse(const char *s, pdb_window *w);
/* Resolves w for run r; dies with one line when the run has no snapshots. */
void pdb_window_resolve(pdb *p, const run_info *r, pdb_window *w);
/* "0.200 s (snapshot) .. 1.402 s (end of the run)" into buf. */
void pdb_window_describe(const pdb_window *w, char *buf, size_t n);
/* pdb_load_functions for a window (threads merged): calls, self, child calls
 * and allocations as differences; p50/p99, inclusive times and frees are not
 * kept per snapshot (fnrow.window: shown empty). */
void pdb_load_window(pdb *p, const run_info *r, const pdb_window *w, int flags, fnset *out);
struct ctree_s;
/* The window's figures as a flat ctree (each function a root), for pprof_build. */
void pdb_window_tree(pdb *p, const run_info *r, const pdb_window *w, struct ctree_s *t);
/* The spans of window w of run r (those of which one closed in it, or was
 * open at the end), by wall time: rows of name, fn (NULL: none), then the
 * growth of each figure of spool/span_spool.h's PIANO_SPAN_FIGURES (count,
 * unfinished, wall_ns, busy_ns), never below 0. */
sqlite3_stmt *pdb_window_spans(pdb *p, const run_info *r, const pdb_window *w);
/* Adds window w's spans to the window's tree t (pdb_window_tree): each span
 * name with spans a root whose busy_ns and idle_ns are its spans' (a window
 * has no contexts: nothing below them). Returns the span names added. */
int ctree_add_window_spans(pdb *p, struct ctree_s *t, const run_info *r, const pdb_window *w);

/* ---- calling contexts merged across threads (ctxtree.c) ---- */
/* A node of the merged tree: node 0 is the synthetic root (key -1); each other
 * node is a path of function keys from a frame's root. Figures are the stored
 * contexts' (uncorrected), summed over the threads holding the path; total_ns
 * is inclusive. Children come after their parent. */
typedef struct {
    int key, parent, depth;
    int first_child, last_child, next_sibling; /* -1: none */
    /* A field per CTX metric of spool/metrics.h (calls, self_ns, total_ns,
     * allocs, ... cpu_ns, ... inuse_bytes, peak_inuse_bytes), ctree_load's
     * columns: the CPU ones valid when the tree's cpu_known, the heap ones 0
     * when not tracked. */
#define PDB_CNODE_FIELD(id, unit, when, where, ...) PIANO_IF(WHERE, where, int64_t id;)
    PIANO_METRICS(PDB_CNODE_FIELD)
#undef PDB_CNODE_FIELD
    /* Spans (ctree_add_spans; else 0): busy_ns is self_ns in a span's frame or
     * below it; idle_ns, on a span's root node, its spans' idle time. */
    int64_t busy_ns, idle_ns;
} cnode;
typedef struct ctree_s {
    fkeys keys;
    cnode *v;
    size_t n, cap;
    int64_t *hash; /* (parent, key) -> node, open addressing; internal */
    size_t hcap;
    int cpu_known;   /* every context read has its CPU time */
} ctree;
/* thread -1: every thread. */
void ctree_load(pdb *p, int64_t run, long thread, ctree *t);
/* Makes metric (--metric: wall, cpu or offcpu; NULL: wall) the figure of
 * t's self_ns, total_ns summed from it; dies with one line when run `run`
 * did not measure it. */
void ctree_use_metric(ctree *t, const char *metric, int64_t run);
/* The metrics ctree_use_metric takes, as "wall|cpu|offcpu". */
#define PDB_METRICS "wall|cpu|offcpu"
/* --group template: the keys of t's functions become name_group's (a
 * template's instantiations one function per file), the paths that then read
 * alike merged, their figures summed. */
void ctree_group(ctree *t);
/* A tree of no context (its keys empty), to merge runs' trees into. */
void ctree_empty(ctree *t);
/* Adds from's contexts into `into`, from's key k being into's keymap[k]: the
 * paths alike merged, figures summed (runset.c: a set's tree). */
void ctree_merge(ctree *into, const ctree *from, const int *keymap);
/* The child of node parent with key, or -1. */
int ctree_child(const ctree *t, int parent, int key);
/* The child of node parent with key, made when there is none. */
int ctree_add(ctree *t, int parent, int key);
/* Adds the run's spans to t (loaded for the whole run: thread -1): each span
 * name with spans is a root node whose idle_ns is their idle time, and each
 * node's busy_ns its self time when it is a span's frame or below one.
 * Returns the span names added (0: the run has none). */
int ctree_add_spans(pdb *p, ctree *t, int64_t run);
void ctree_free(ctree *t);
/* Labels of the path root..node joined by sep into a new string. */
char *ctree_path(const ctree *t, int node, const char *sep);

/* ---- pprof (pprof.c) ---- */
/* Which figure of a context a sample type carries. */
enum { PPROF_CALLS, PPROF_SELF_NS, PPROF_ALLOC_BYTES, PPROF_ALLOCS, PPROF_CPU_NS, PPROF_INUSE_OBJECTS, PPROF_INUSE_BYTES,
       PPROF_WALL, PPROF_WALL_BUSY, PPROF_WALL_IDLE };
typedef struct {
    const char *type, *unit;
    int field;
} pprof_value;
/* The sample types of export --format pprof (group -1) or of push's
 * profile of group g (PPROF_GROUP_*), in their order, from the one
 * sample-type table (pprof.c): those measured when asked only with cpu
 * (CPU time) or heap (heap in use). Returns how many went to out (room for
 * PPROF_NSAMPLES). */
enum { PPROF_GROUP_WALL, PPROF_GROUP_CPU, PPROF_GROUP_MEMORY, PPROF_NGROUPS, PPROF_NSAMPLES = 8 };
int pprof_values(int group, int cpu, int heap, pprof_value *out);
/* Context c's figure that a sample type of field `field` (PPROF_*) carries. */
int64_t pprof_field(const cnode *c, int field);
/* A profile's sample types, its period type (NULL: none) and default type;
 * skip_zero: samples whose values are all 0 are left out. */
typedef struct {
    const pprof_value *values;
    int nvalues;
    const char *period_type, *period_unit;
    const char *default_type;
    int skip_zero;
} pprof_shape;
/* The contexts of t (run r's) as a gzipped profile.proto of shape s: a new
 * buffer of *len bytes; NULL when skip_zero left no sample. */
unsigned char *pprof_build(const ctree *t, const run_info *r, const pprof_shape *s, size_t *len);
/* A gzipped profile.proto read back (piano-db push, its kept profiles):
 * raw (a new buffer, raw_len bytes; for pprof_restamp, then free it), its
 * samples counted, time_nanos and duration_nanos. Inflates up to about limit
 * bytes: too_big says it is larger (raw then partial, fields not read).
 * Returns -1 when it is not a gzipped profile.proto (raw freed). */
typedef struct {
    unsigned char *raw;
    size_t raw_len;
    int too_big;
    size_t samples;
    int64_t time_ns, duration_ns;
} pprof_info;
int pprof_inspect(const unsigned char *gz, size_t n, size_t limit, pprof_info *out);
/* in's profile with time_nanos set to time_ns, gzipped into a new buffer of
 * *len bytes; in->raw grows by the field. */
unsigned char *pprof_restamp(pprof_info *in, int64_t time_ns, size_t *len);

/* ---- charts (plot.c dispatches: frames here, plot_heap.c, timeline.c) ---- */
/* plot timeline: self time per interval between snapshots, stacked. */
int plot_timeline(pdb *p, const pdb_opts *o);

/* ---- output files, SVG and the charts' axes (svg.c) ---- */
/* Opens o->output for writing ("-" or NULL: stdout); dies with one line. */
FILE *out_open(const pdb_opts *o, int binary);
void out_close(FILE *f, const pdb_opts *o);
/* XML text/attribute: & < > " ' escaped, invalid UTF-8 and control characters replaced. */
void xml_str(FILE *f, const char *s);
/* The font of an SVG's text, in every SVG piano-db writes. */
#define SVG_FONT "font-family:Verdana,'DejaVu Sans',sans-serif;font-size:12px"
/* The rules plot's charts share (title, subtitle, axis labels, grid, axes);
 * a chart adds its own after them. */
#define SVG_CHART_CSS                                                                                            \
    "text{" SVG_FONT ";fill:#222}\n"                                                                             \
    "#title{font-size:17px;text-anchor:middle}\n#sub{text-anchor:middle;fill:#555}\n"                             \
    ".yl{text-anchor:end}.xl{text-anchor:middle}\n"                                                               \
    ".grid{stroke:#ddd;stroke-width:1}.axis{stroke:#444;stroke-width:1}\n"
/* An SVG document's head: the XML declaration, the <svg> element of width x
 * height, the style (css: its rules, each line ending in \n) and a background
 * rectangle of that colour over the whole. The caller closes it with </svg>. */
void svg_begin(FILE *f, int width, int height, const char *css, const char *background);
/* A round axis step near range/target: 1, 2 or 5 times a power of ten. */
double plot_nice_step(double range, int target);
/* Axis label for a time: 0, 250us, 1.5ms, 2s (no trailing zeros). */
void axis_ns(char *buf, size_t n, double ns);

#endif
