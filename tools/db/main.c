/* main.c - piano-db: command dispatch, options and help. */
#include "piano_db.h"
#include "import.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *help_report =
    "usage: piano-db report [RUN|TAG] [options]\n"
    "       piano-db report SET|--all-runs|--command NAME [options]\n"
    "\n"
    "Per-function figures of one run (by default the latest that recorded something),\n"
    "merged across threads:\n"
    "calls, self time, p50/p99 of per-call self time, allocations and bytes allocated.\n"
    "Rows are keyed by (name, file, line); a name present at two places shows as\n"
    "'name (file:line)', the file as the shortest path suffix that tells the rows apart.\n"
    "Tables fit $COLUMNS, else the terminal's width, else 160 columns: a long name loses\n"
    "its template arguments (a<…>::f), then its parameters (f(…)), then its middle,\n"
    "never so far that two rows (or two --frames headers) read the same. JSON and CSV\n"
    "keep full names.\n"
    "\n"
    "Self-time correction: runs store the measured time one instrumented call adds to\n"
    "its caller (overhead), and per function the instrumented calls it made directly\n"
    "(child_calls). Shown self time is max(0, self - child_calls * overhead); self\n"
    "p50/p99 are value - overhead * child_calls / calls, but at least value * (shown\n"
    "self / raw self): a call is not cut by more than its function's overhead share\n"
    "(a dispatch loop's short calls do not drop to 0 for the children of its long\n"
    "one). Inclusive (total) figures are shown as measured. --uncorrected shows raw\n"
    "figures everywhere.\n"
    "\n"
    "Options:\n"
    "  --db FILE        the database\n"
    "  --json           array of {function, file, line, @KEYS@} (CPU figures null when the run"
    " did not measure them: PIANO_CPU=1; inuse_* when it did not track heap in use: PIANO_HEAP=1)\n"
    "  --csv            the same columns, with a header line\n"
    "  --cpu            the table adds CPU (self), User, Sys (the inclusive CPU's split),\n"
    "                   Off-CPU (inclusive: blocked, sleeping, preempted); '-': not measured\n"
    "  --heap           heap in use (PIANO_HEAP=1 runs): functions that allocated, by bytes\n"
    "                   still in use at the end (leaks, marked), with their objects, the\n"
    "                   bytes they held at the run's heap peak, and that peak in the header\n"
    "  --sort KEY       @SORT@\n"
    "  --group template one row per C++ function template (or overload set) and file, its\n"
    "                   instantiations summed: name without template arguments and\n"
    "                   parameters (ns::write<…>(…)), histograms merged for p50/p99; Fns\n"
    "                   (JSON instances) counts the functions in the row\n"
    "  --top N          show N rows (table default: 30; JSON and CSV default: all)\n"
    "  --all            show every row\n"
    "  --threads        one table per thread (JSON: [{thread, tid, name, functions: [rows]}])\n"
    "  --thread T       only thread T\n"
    "  --uncorrected    raw self times, without the overhead correction\n"
    "  --frames         one row per frame instead (see below)\n"
    "  --from T1, --to T2  the figures of a window of the run (seconds from its start; either\n"
    "                   may be left out): the difference of the snapshots (PIANO_INTERVAL) at or\n"
    "                   before T1 and T2, the end of the run counting as the last one; the table's\n"
    "                   first line names the snapshots used. p50/p99, inclusive times and frees\n"
    "                   are not kept per snapshot: shown '-' (JSON null)\n"
    "  --spikes         with --frames: only frames over 2x the median total\n"
    "  --all-runs       every stored run's functions summed (runs that recorded nothing\n"
    "                   left out); --command NAME: the runs of program NAME (argv[0]'s base\n"
    "                   name; with a '/', argv[0])\n"
    "  --spans          one row per span name (include/piano/span.h, doc/spans.md), by wall\n"
    "                   time: count, wall (open to close), busy (entered), idle (open, not\n"
    "                   entered), p50/p99 of each span's wall and busy time, CPU time\n"
    "                   (PIANO_CPU=1) and allocations while entered, spans still open at the\n"
    "                   end (unfinished, timed to it). JSON: array of {span, count, wall_ns,\n"
    "                   busy_ns, idle_ns, p50_ns, p99_ns, p50_busy_ns, p99_busy_ns, cpu_ns,\n"
    "                   allocs, alloc_bytes, unfinished}. With --from/--to: the spans closed\n"
    "                   in the window (a span counts whole in the window of its close); p50/p99,\n"
    "                   CPU and allocations not kept per snapshot ('-', JSON null)\n"
    "\n"
    "SET: run ids and ranges (3..40,45) or a tag naming several runs (tag NAME SET): the\n"
    "functions of its runs summed, the first line naming them: calls, times and\n"
    "allocations added (each run corrected with its own overhead), p50/p99 from the\n"
    "merged histograms of every call, CPU and heap figures '-' (null) when a run did\n"
    "not measure them. Not with --frames, --threads, --heap, --from/--to.\n"
    "\n"
    "--frames lists frames in order: the first 100 (--top N: the first N) and every\n"
    "spike after them (up to 1000; --spikes --top N: the first N spikes), then a line\n"
    "saying what was left out; --all lists every kept frame (JSON and CSV too: what they\n"
    "leave out is said on stderr). Columns: the self time of the up to 6 functions with\n"
    "the most self time over the frames shown ('-': did not run in that frame). Frames\n"
    "whose total is over 2x the median total of every frame of the run (or thread),\n"
    "kept or not, are spikes, marked '<<'. A run keeps its first PIANO_FRAMES frames\n"
    "(default 1000000), then spikes and a sample: the footer then says 'M kept'; frame\n"
    "numbers count the kept frames. JSON: [{frame, thread, start_ns, total_ns, allocs,\n"
    "alloc_bytes, functions: {name: self_ns}, spike}]. Not overhead-corrected.\n";

static const char *help_snapshots =
    "usage: piano-db snapshots [RUN|TAG] [--db FILE] [--json] [--spans]\n"
    "\n"
    "The snapshots of a run that ran with PIANO_INTERVAL=SECS (a live run's so far): per\n"
    "snapshot, the functions whose figures changed in it, with their figures then, counted\n"
    "from the run's start (calls, self time, allocations, bytes allocated; self time as\n"
    "measured, not overhead-corrected); self CPU time for a run made with PIANO_CPU=1, and\n"
    "heap in use then (bytes, objects) for one made with PIANO_HEAP=1.\n"
    "\n"
    "Options:\n"
    "  --db FILE   the database\n"
    "  --json      array of {t_ns, functions: {name: {calls, self_ns, allocs, alloc_bytes}}}, one\n"
    "              element per snapshot with every function's figures so far (t_ns: since the\n"
    "              run's start)\n"
    "  --spans     the span names instead (doc/spans.md): per snapshot, those whose figures\n"
    "              changed, with their count, wall, busy and idle time then, of the spans closed\n"
    "              by then (a span counts at its close); --json: {t_ns, spans: {name: {count,\n"
    "              wall_ns, busy_ns, idle_ns}}}\n";

static const char *help_runs =
    "usage: piano-db runs [--db FILE] [--json|--csv] [--group command|parent]\n"
    "\n"
    "The stored runs, and those of processes still running (status running, read\n"
    "from the spool, never stored by piano-db), newest first: id, tags, pid, parent run\n"
    "(a forked process's parent, '-' if none), command (the program's name and its\n"
    "arguments, the arguments cut to fit), start (local time), duration, status\n"
    "(running, complete or recovered), frames.\n"
    "A recovered run that died before piano saw it do anything shows its duration as\n"
    "'unknown'.\n"
    "  --json   array of {run, tags, pid, parent, command, started, duration_ns, status,\n"
    "           frames, heap_peak_bytes}; started is ns since the epoch, parent a run id\n"
    "           or null.\n"
    "  --csv    the same columns, with a header line\n"
    "  --group command   one row per program (argv[0]'s base name), most recent first:\n"
    "           its runs, those that recorded nothing (Empty), recovered, running, their\n"
    "           durations summed, first and last start, and the runs as a SET for report\n"
    "           and diff (3..40,45). JSON: {command, runs, empty, recovered, running,\n"
    "           duration_ns, first_started, last_started, set}\n"
    "  --group parent    the same per parent run (a test driver built with piano):\n"
    "           {parent, command (the parent's), runs, ...}; null: no stored parent\n";

static const char *help_tag =
    "usage: piano-db tag NAME [RUN]   name RUN (default: the latest run that recorded something)\n"
    "       piano-db tag NAME SET...  name several runs: ids and ranges (3..40,45), runs, tags\n"
    "       piano-db tag NAME --command PROGRAM | --all-runs\n"
    "       piano-db tag [--json]     list the tags\n"
    "\n"
    "A name is any text without control characters (newline, tab, escape...) that\n"
    "cannot be taken for a run: not all digits (a run id) nor shaped like a run key\n"
    "(PID-NS) or a list of runs (3..40). Tagging an existing name moves it to the new\n"
    "run (or runs). A tag of several runs holds those that recorded something then;\n"
    "report and diff sum them; gc keeps them. Put -- before a name\n"
    "that starts with '-'. Prints: tagged 'NAME' -> RUN. Tables show control\n"
    "characters of older names escaped (\\n, \\t, \\x1b).\n";

static const char *help_untag = "usage: piano-db untag NAME [--db FILE]\n\nRemoves the tag NAME.\n";

static const char *help_diff =
    "usage: piano-db diff [A [B]] [options]\n"
    "\n"
    "Compares the self time of two runs (default: of the two latest runs that recorded\n"
    "something, the older as A, the newer as B; with only A, B is the latest that\n"
    "recorded something). Functions match by name and file; rows are sorted by the\n"
    "absolute change of total self time.\n"
    "\n"
    "Columns: Before, After: total self time in A and B; Delta: B - A; C.Delta: the\n"
    "change in calls (a total grows with the calls, a call need not be slower);\n"
    "p50: the change of the median self time of one call; Per call: the verdict of\n"
    "the significance test on one call's self time: slower, faster, - (no significant\n"
    "change), (added) or (removed); Allocs: allocations in B; A.Delta: their change.\n"
    "So '+863ms ... faster' reads: more total time (more calls), each call faster.\n"
    "\n"
    "The test: a two-sided Mann-Whitney U test on the two stored histograms of\n"
    "per-call self time, each bucket a group of ties, normal approximation with tie\n"
    "and continuity correction. A change is significant when p < 0.001 AND the median\n"
    "per-call self time moved by at least 2% in the same direction (with many calls,\n"
    "any tiny shift has a small p; the 2% floor keeps run-to-run noise out).\n"
    "\n"
    "A or B may be a set of runs (ids and ranges 3..40,45, or a tag naming several:\n"
    "see report --help): its functions summed, and for the test the calls of all its\n"
    "runs pooled in one histogram (each run's clock and correction applied).\n"
    "\n"
    "Options:\n"
    "  --db FILE         the database\n"
    "  --json            array of {function, file, calls_a, calls_b, self_ns_a, self_ns_b,\n"
    "                    delta_ns, delta_pct, allocs_a, allocs_b, alloc_bytes_a,\n"
    "                    alloc_bytes_b, cpu_ns_a, cpu_ns_b (self CPU time, null where\n"
    "                    not measured), inuse_bytes_a, inuse_bytes_b (null: not tracked),\n"
    "                    change (same|slower|faster|added|removed),\n"
    "                    significant, p_value, median_a_ns, median_b_ns}\n"
    "  --csv             the same columns, with a header line\n"
    "  --top N, --all    rows shown (default: all)\n"
    "  --thread T        compare thread T of both runs only\n"
    "  --uncorrected     raw self times (see report --help)\n"
    "  --cpu             a CPU.Delta column: the change of the total self CPU time\n"
    "  --fail-above PCT  exit 3 when a function is significantly slower and its median\n"
    "                    per-call self time grew by more than PCT percent (medians, not\n"
    "                    totals: a total moves with the number of calls and preemption)\n"
    "  --heap            the table also shows each run's bytes in use at the end\n"
    "                    (In use A, In use B: PIANO_HEAP=1 runs; '-' when not tracked)\n"
    "  --group template  compare C++ templates, their instantiations summed (report --help)\n"
    "  --spans           one row per span name instead (doc/spans.md): count, wall and busy\n"
    "                    per span, p50/p99 of wall, in A and B; JSON {span, count_a,\n"
    "                    count_b, wall_per_span_ns_a/_b, busy_per_span_ns_a/_b, p50_ns_a/_b,\n"
    "                    p99_ns_a/_b, wall_ns_a/_b, busy_ns_a/_b, idle_ns_a/_b}\n";

static const char *help_rm = "usage: piano-db rm RUN... [--db FILE]\n\nDeletes the runs (and their tags).\n";
static const char *help_gc =
    "usage: piano-db gc --keep N [--db FILE]\n\nDeletes every run but the N newest and the tagged ones.\n";

static const char *help_flamegraph =
    "usage: piano-db flamegraph [RUN|TAG] [-o FILE] [--thread T] [--metric M]\n"
    "       piano-db flamegraph SET|--all-runs|--command NAME [-o FILE] [--thread T] [--metric M]\n"
    "       piano-db flamegraph --diff [A [B]] [-o FILE] [--thread T] [--metric M]\n"
    "\n"
    "Writes a self-contained interactive SVG flame graph (no external script or style)\n"
    "of the run's calling contexts, threads merged (--thread T: one thread). Each\n"
    "box is a context path; its width is the inclusive time, the root at the bottom.\n"
    "Hovering shows function, inclusive time, share of the total, calls and self time;\n"
    "a click zooms into a frame; 'Reset zoom' (or a click on 'all') restores.\n"
    "Figures are as stored (no overhead correction). Boxes under 0.1 px are left out.\n"
    "\n"
    "--diff A B: a differential flame graph. Widths come from B (the newer run; default:\n"
    "the latest, A the one before it, as in `diff`); colour is the change of self time\n"
    "of the same context path from A to B (functions matched by name and file): red\n"
    "slower, blue faster, grey unchanged. Paths only in A are not drawn.\n"
    "\n"
    "  -o, --output FILE   where to write (default: standard output)\n"
    "  --metric M          what widths (and self figures) are: wall (default), cpu (CPU\n"
    "                      time), offcpu (time off the CPU: blocked, sleeping, preempted);\n"
    "                      cpu and offcpu need a run recorded with PIANO_CPU=1; alloc (bytes\n"
    "                      allocated), inuse (bytes still in use at the end: PIANO_HEAP=1),\n"
    "                      busy (time entered in spans: their frames and what ran below\n"
    "                      them), idle (spans' idle time: a box per span name, open and\n"
    "                      not entered); busy and idle need a run with spans (doc/spans.md)\n"
    "  --group template    a C++ template's instantiations as one function: the paths that\n"
    "                      then read alike are one, their figures summed\n"
    "A SET of runs (3..40,45, a tag naming several, --all-runs or --command NAME:\n"
    "report --help): their calling contexts merged, each path's figures summed over the\n"
    "runs (not with --diff).\n";

static const char *help_plot =
    "usage: piano-db plot frames [RUN|TAG] [-o FILE] [--thread T]\n"
    "       piano-db plot timeline [RUN|TAG] [-o FILE]\n"
    "       piano-db plot heap [RUN|TAG] [-o FILE] [--thread T]\n"
    "\n"
    "timeline: an SVG chart of the run's self time per interval between its snapshots\n"
    "(PIANO_INTERVAL), stacked by the 8 functions with the most self time and 'other';\n"
    "a run without snapshots is an error.\n"
    "\n"
    "frames: "
    "an SVG chart of the run's frame times in order: one bar per frame, or with\n"
    "more than 2000 frames one bar per bucket of consecutive frames showing the\n"
    "bucket's longest frame. Frames over 2x the median total are spikes, drawn red;\n"
    "the median is a dashed line. Axes in frame numbers and human time units.\n"
    "\n"
    "plot heap (runs made with PIANO_HEAP=1): heap in use over the run: with snapshots\n"
    "(PIANO_INTERVAL; not with --thread) a bar per snapshot on a time axis, the end,\n"
    "and the peak apart; without, the start, the peak and the end. Each bar is stacked\n"
    "by the functions holding the memory then (the 8 that hold the most, then the others).\n"
    "\n"
    "  -o, --output FILE   where to write (default: standard output)\n";

static const char *help_export =
    "usage: piano-db export [RUN|TAG] --format FORMAT [-o FILE] [--thread T] [--all] [--metric M]\n"
    "       piano-db export SET|--all-runs|--command NAME --format FORMAT [-o FILE] [--thread T] [--metric M]\n"
    "\n"
    "Formats (figures as stored: no overhead correction; threads merged):\n"
    "  folded     one line per calling context path with self time:\n"
    "             'main;parse;parse_item 1234' (ns), for flamegraph.pl, inferno, speedscope.\n"
    "             Paths with no self time are left out; ';' in a name becomes ':'.\n"
    "  pprof      gzipped profile.proto (github.com/google/pprof), one sample per context\n"
    "             path, values calls/count, self/nanoseconds, alloc_space/bytes,\n"
    "             alloc_objects/count, and cpu/nanoseconds (self CPU time) for a run\n"
    "             recorded with PIANO_CPU=1; for a run with spans (doc/spans.md, whole\n"
    "             run) wall, wall_busy, wall_idle (nanoseconds): busy below a span's\n"
    "             frame, idle on a sample whose only frame is the span; one location\n"
    "             and function per function.\n"
    "             For `pprof -http=: FILE`. Binary: needs -o FILE on a terminal.\n"
    "  chrome     Trace Event JSON {\"traceEvents\": [...]}: one complete ('X') event per\n"
    "             frame (ts/dur in us, pid = the run's pid, tid = the thread's tid, name =\n"
    "             the frame's leading function by self time, args: allocs, bytes, self\n"
    "             time per function), thread_name and process_name metadata. For\n"
    "             ui.perfetto.dev and chrome://tracing. --thread T: one thread's frames.\n"
    "             About 700 bytes a frame: past 100000 kept frames, the first 100000 and\n"
    "             up to 10000 spikes after them, said on stderr with the sizes; --all\n"
    "             exports every kept frame.\n"
    "  callgrind  callgrind profile (events: ns calls allocs; self cost per function and\n"
    "             inclusive cost per call edge from the calling contexts), for KCachegrind\n"
    "             and callgrind_annotate.\n"
    "\n"
    "  --format FORMAT     folded, pprof, chrome or callgrind (required)\n"
    "  -o, --output FILE   where to write (default: standard output)\n"
    "  --metric M          folded and callgrind: what the ns figures are: wall (default),\n"
    "                      cpu or offcpu (a run recorded with PIANO_CPU=1)\n"
    "  --group template    folded, pprof, callgrind: a C++ template's instantiations as one\n"
    "                      function (fmt::write<…>(…)), the paths that then read alike merged\n"
    "A SET of runs (3..40,45, a tag naming several, --all-runs or --command NAME: report\n"
    "--help) in folded, pprof or callgrind: their calling contexts merged, each path's\n"
    "figures summed over the runs.\n";

static const char *help_sql =
    "usage: piano-db sql [SQL] [--db FILE] [--header] [--csv|--json]\n"
    "\n"
    "Runs SQL (the argument, else stdin: one or more statements) on the database and\n"
    "prints each statement's rows as the sqlite3 shell does: columns separated by '|',\n"
    "NULL empty. The views contexts and stats (the calling contexts and the\n"
    "per-function figures, one row each, as doc/piano-db.md describes) are there\n"
    "besides the tables; they take INSERT, UPDATE and DELETE too. The runs are read\n"
    "as stored: runs of crashed or live processes are not imported. An error is one\n"
    "line, 'piano-db: sql: ' and SQLite's message, and exit status 1.\n"
    "  --header   a line of the column names first\n"
    "  --csv      comma-separated, quoted as sqlite3 -csv does\n"
    "  --json     a JSON array of objects per statement (as sqlite3 -json)\n";

static const char *help_top =
    "usage: piano-db top [RUN|PID] [--interval SECS] [--top N] [--count N]\n"
    "\n"
    "A live run's functions (the newest running one, or the run or pid given),\n"
    "refreshed every interval like perf top: by self time in the last interval\n"
    "(Self/s, Calls/s: per second), with the totals so far, and frames/s. The run is\n"
    "read from its spool and never stored by piano-db. On a terminal the screen is\n"
    "redrawn and q quits; otherwise a table is printed per interval. It ends when the\n"
    "process does, on SIGINT or SIGTERM, or after --count tables.\n"
    "  --interval SECS  seconds between refreshes (default 1)\n"
    "  --top N          rows shown (default 20)\n"
    "  --count N        stop after N tables\n";

static const char *help_push =
    "usage: piano-db push URL [RUN|TAG] [--app NAME] [--label KEY=VALUE]... [options]\n"
    "       piano-db push URL [RUN] --follow [options]\n"
    "       piano-db push URL --follow-all [--count N] [options]\n"
    "       piano-db push URL --kept\n"
    "\n"
    "Sends a run's profiles (by default the latest run that recorded something) to a\n"
    "Pyroscope server, http:// or https://, through its Push API (POST\n"
    "URL/push.v1.PusherService/Push), one series a profile, labelled __name__ (the\n"
    "profile type), service_name (APP), __delta__=false, each --label, then tag=TAGS\n"
    "(the run's tags joined by '+') unless a --label is tag:\n"
    "  wall     wall/nanoseconds (self time per calling context) and calls/count\n"
    "  process_cpu  cpu/nanoseconds (self CPU time; runs with PIANO_CPU=1)\n"
    "  memory   alloc_objects/count, alloc_space/bytes (and inuse_* with PIANO_HEAP=1)\n"
    "Figures as stored (no overhead correction), threads merged. APP: --app, else the\n"
    "base name of the run's program. A profile's time is its run's start, or the\n"
    "time it is sent when that is over 55 minutes old (Pyroscope refuses profiles\n"
    "over an hour old).\n"
    "Past 16,000 calling contexts the lightest are folded into their callers.\n"
    "A run goes once to a server and tenant: pushed again, nothing is sent (--again).\n"
    "\n"
    "A profile that could not be sent (no connection, a timeout, HTTP 5xx, 408 or 429,\n"
    "after 3 tries 0.25 s and 0.5 s apart; 401 or 403 at once) is kept in the database\n"
    "and sent first by the next push to the same URL; then exit 4. Another 4xx is the\n"
    "server refusing that profile: said with its message, not kept; exit 1.\n"
    "\n"
    "Options:\n"
    "  --app NAME          the application name (letters, digits, '_', '-', '.', '/')\n"
    "  --label KEY=VALUE   a label (KEY: letters, digits, '_', '.'); repeatable\n"
    "  --tenant ID         the X-Scope-OrgID header (a multi-tenant Pyroscope)\n"
    "  --auth USER:TOKEN   basic authentication (also PIANO_PUSH_AUTH, USER:TOKEN@ in\n"
    "                      URL, or ~/.netrc); never stored nor shown\n"
    "  --again             send a run that went to this server before\n"
    "  --timeout SECS      the limit of one try (default 10)\n"
    "  --kept              only send what earlier pushes to URL kept\n"
    "  --follow            a live run (RUN, default the latest): push each new snapshot's\n"
    "                      window (PIANO_INTERVAL) as it appears, stamped with its start,\n"
    "                      until the run ends, then the rest up to its end; SIGINT or\n"
    "                      SIGTERM stop it (what is unsent is kept)\n"
    "  --follow-all        push each run stored from now on (complete or recovered),\n"
    "                      until SIGINT or SIGTERM\n"
    "  --count N           with --follow-all: stop after N runs\n";

/* A help text with its lists made from spool/metrics.h: @KEYS@ is report
 * --json's metric keys, @SORT@ report --sort's keys; a line with either is
 * filled to HELP_WIDTH columns, its next lines indented as its text starts. */
#define HELP_WIDTH 92
static const char *const help_keys[] = {
#define PIANO_M_KEY(id, ...) #id,
    PIANO_METRICS(PIANO_M_KEY)
#undef PIANO_M_KEY
};
static const char *const help_sort[] = {PIANO_SORT_ORDER};

/* The words of line [p, end) with the placeholders expanded, filled. */
static void help_fill_line(FILE *out, const char *p, const char *end)
{
    char line[4096];
    size_t n = 0;
    while (p < end && n + 512 < sizeof line) {
        if (!strncmp(p, "@KEYS@", 6) || !strncmp(p, "@SORT@", 6)) {
            int keys = p[1] == 'K';
            size_t k = keys ? sizeof help_keys / sizeof *help_keys : sizeof help_sort / sizeof *help_sort;
            for (size_t i = 0; i < k && n + 64 < sizeof line; i++)
                n += (size_t)snprintf(line + n, sizeof line - n, "%s%s%s", i ? ", " : "",
                                      keys ? help_keys[i] : help_sort[i], !keys && !i ? " (default)" : "");
            p += 6;
        } else {
            line[n++] = *p++;
        }
    }
    line[n] = 0;
    const char *gap = strstr(line + 2, "  "); /* the text starts after the option and its spaces */
    size_t ind = gap ? (size_t)(gap - line) : 2;
    while (line[ind] == ' ')
        ind++;
    size_t col = 0, i = 0;
    fwrite(line, 1, ind, out);
    col = ind, i = ind;
    int first = 1;
    while (line[i]) {
        size_t w = strcspn(line + i, " ");
        if (!first && col + 1 + w > HELP_WIDTH) {
            fprintf(out, "\n%*s", (int)ind, "");
            col = ind;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        fwrite(line + i, 1, w, out);
        col += w, i += w, first = 0;
        while (line[i] == ' ')
            i++;
    }
}

/* Prints help text t, its @KEYS@/@SORT@ lines made from the metrics. */
static void help_print(const char *t)
{
    while (*t) {
        const char *nl = strchr(t, '\n');
        const char *end = nl ? nl : t + strlen(t);
        const char *k = strstr(t, "@KEYS@"), *s = strstr(t, "@SORT@");
        if ((k && k < end) || (s && s < end))
            help_fill_line(stdout, t, end);
        else
            fwrite(t, 1, (size_t)(end - t), stdout);
        if (!nl)
            break;
        fputc('\n', stdout);
        t = nl + 1;
    }
}

/* The commands: piano-db --help is made from this table. */
typedef struct {
    const char *name;
    const char *args;    /* its arguments, for the overview */
    const char *summary; /* one line, for the overview */
    int (*fn)(pdb *, const pdb_opts *);
    const char *allowed; /* option names, space separated and enclosed */
    const char **help;
    int writes;          /* 0: reads only (opens read-only); 1: writes; 2: writes when given arguments;
                            3: the database as it is, writable when it can be (PDB_OPEN_AS_IS) */
} command;

static const command commands[] = {
    {"report", "[RUN|TAG|SET]", "per-function figures of a run, or of a set of runs summed (--frames: one row per frame)", cmd_report,
     " db json csv sort top all threads thread frames spikes uncorrected cpu heap from to group all-runs command spans ",
     &help_report, 0},
    {"runs", "", "the stored runs (--group command|parent: counted per program or parent)", cmd_runs,
     " db json csv group ", &help_runs, 0},
    {"snapshots", "[RUN|TAG]", "a run's figures over time (PIANO_INTERVAL)", cmd_snapshots, " db json spans ",
     &help_snapshots, 0},
    {"tag", "[NAME [RUN|SET...]]", "name a run or a set of runs; alone, list the tags", cmd_tag,
     " db json all-runs command ", &help_tag, 2},
    {"untag", "NAME", "remove a tag", cmd_untag, " db ", &help_untag, 1},
    {"diff", "[A B]", "compare two runs (or sets of runs), with a significance test per function", cmd_diff,
     " db json csv top all thread uncorrected fail-above cpu heap group spans ", &help_diff, 0},
    {"rm", "RUN...", "delete runs", cmd_rm, " db ", &help_rm, 1},
    {"gc", "--keep N", "delete all but the N newest runs and the tagged ones", cmd_gc, " db keep ", &help_gc, 1},
    {"flamegraph", "[RUN|TAG|SET]", "an interactive SVG flame graph (--diff [A B]: of a change)", cmd_flamegraph,
     " db output thread diff metric group all-runs command ", &help_flamegraph, 0},
    {"plot", "frames|heap|timeline [RUN|TAG]", "frame times, heap in use, or self time over time, as an SVG chart", cmd_plot, " db output thread ", &help_plot, 0},
    {"export", "[RUN|TAG|SET] --format F", "folded stacks, pprof, Chrome trace events or callgrind", cmd_export,
     " db output thread format all metric group all-runs command ", &help_export, 0},
    {"top", "[RUN|PID]", "a live run's functions, refreshed (q quits)", cmd_top, " db top interval count ",
     &help_top, 0},
    {"sql", "[SQL]", "run SQL on the database, with the views contexts and stats (stdin without SQL)", cmd_sql,
     " db json csv header ", &help_sql, 3},
    {"push", "URL [RUN|TAG]", "send a run's profiles to a Pyroscope server (--follow: a live run's snapshots)", cmd_push,
     " db app label tenant auth again timeout kept follow follow-all count ", &help_push, 1},
};
enum { NCOMMANDS = sizeof commands / sizeof *commands };

static void print_usage(FILE *f)
{
    fputs("usage: piano-db [--db FILE] COMMAND [options]   (piano-db COMMAND --help for details)\n"
          "\n"
          "Reads the runs piano stored. Commands:\n", f);
    size_t w = 0;
    for (int i = 0; i < NCOMMANDS; i++) {
        size_t l = strlen(commands[i].name) + (*commands[i].args ? 1 + strlen(commands[i].args) : 0);
        if (l > w)
            w = l;
    }
    for (int i = 0; i < NCOMMANDS; i++) {
        const command *c = &commands[i];
        int l = fprintf(f, "  %s%s%s", c->name, *c->args ? " " : "", c->args);
        fprintf(f, "%*s%s\n", (int)(w + 5 - (size_t)l), "", c->summary);
    }
    fputs("\n"
          "Every command takes --db FILE, before or after the command (default: $PIANO_DB,\n"
          "else ~/.piano/piano.db).\n"
          "RUN is a run id (as `runs` shows), a run key, or a tag name, looked up in that order;\n"
          "without one, a command takes the latest run that recorded something.\n"
          "Exit status: 0 ok, 1 error (one line on stderr, starting 'piano-db: '), 2 bad usage,\n"
          "3 diff --fail-above found a significant slowdown, 4 push left profiles unsent\n"
          "(kept in the database for the next push).\n"
          "Colour only when stdout is a terminal and NO_COLOR is not set.\n", f);
}

/* The one parser of whole-number options: digits only (no sign, no blanks, no
 * hex), at most max. */
static unsigned long long parse_uint(const char *cmd, const char *opt, const char *v, unsigned long long max)
{
    unsigned long long n = 0;
    int big = 0;
    if (!*v)
        pdb_usage_die("%s: %s wants a number >= 0, not ''", cmd, opt);
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9')
            pdb_usage_die("%s: %s wants a number >= 0, not '%s'", cmd, opt, v);
        unsigned d = (unsigned)(*c - '0');
        if (n > (max - d) / 10)
            big = 1;
        else
            n = n * 10 + d;
    }
    if (big)
        pdb_usage_die("%s: %s is at most %llu, not '%s'", cmd, opt, max, v);
    return n;
}

/* A percentage: digits with at most one '.', then an optional '%'; finite, >= 0. */
static double parse_percent(const char *cmd, const char *opt, const char *v)
{
    int digits = 0, dots = 0;
    const char *c = v;
    for (; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digits++;
        else if (*c == '.' && !dots)
            dots++;
        else
            break;
    }
    double x = digits ? strtod(v, NULL) : NAN;
    if (!digits || (*c && strcmp(c, "%") != 0) || !isfinite(x) || x < 0)
        pdb_usage_die("%s: %s wants a percentage >= 0, not '%s'", cmd, opt, v);
    return x;
}

static int allowed(const command *c, const char *name)
{
    char key[80];
    snprintf(key, sizeof key, " %s ", name);
    return strstr(c->allowed, key) != NULL;
}

/* The options that take a value (--name VALUE or --name=VALUE). */
static int takes_value(const char *name)
{
    static const char *const with_value[] = {"db",   "sort",   "top",   "thread",  "fail-above", "keep",
                                                "output", "format", "app", "label", "tenant", "auth", "timeout", "count", "metric",
                                                "interval", "from", "to", "group", "command"};
    for (size_t i = 0; i < sizeof with_value / sizeof *with_value; i++)
        if (!strcmp(name, with_value[i]))
            return 1;
    return 0;
}

/* A word of a space-separated and enclosed list (" a b c ")? */
static int in_list(const char *list, const char *word)
{
    char key[64];
    snprintf(key, sizeof key, " %s ", word);
    return *word && !strchr(word, ' ') && strstr(list, key);
}

/* Sets option `name` (allowed for the command c) to val (NULL for flags). */
static void set_option(pdb_opts *o, const command *c, const char *name, const char *val)
{
    static const struct {
        const char *name;
        size_t offset; /* of its int flag in pdb_opts */
    } flags[] = {
        {"json", offsetof(pdb_opts, json)},     {"csv", offsetof(pdb_opts, csv)},
        {"all", offsetof(pdb_opts, all)},       {"threads", offsetof(pdb_opts, threads)},
        {"frames", offsetof(pdb_opts, frames)}, {"spikes", offsetof(pdb_opts, spikes)},
        {"uncorrected", offsetof(pdb_opts, uncorrected)}, {"diff", offsetof(pdb_opts, diff)},
        {"follow-all", offsetof(pdb_opts, follow_all)}, {"kept", offsetof(pdb_opts, kept)},
        {"follow", offsetof(pdb_opts, follow)}, {"again", offsetof(pdb_opts, again)},
        {"heap", offsetof(pdb_opts, heap)},     {"spans", offsetof(pdb_opts, spans)},
        {"cpu", offsetof(pdb_opts, cpu)},
        {"all-runs", offsetof(pdb_opts, all_runs)},
        {"header", offsetof(pdb_opts, header)},
    };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (!strcmp(name, flags[i].name))
            *(int *)((char *)o + flags[i].offset) = 1;
    if (!strcmp(name, "db") || !strcmp(name, "output")) {
        if (!*val)
            pdb_usage_die("%s: --%s wants a file", c->name, name);
        if (!strcmp(name, "db"))
            o->db = val;
        else
            o->output = val;
    } else if (!strcmp(name, "metric")) {
        /* flamegraph's table also has the heap's (bytes); export's are times */
        if (!strcmp(c->name, "flamegraph") ? !flame_metric_known(val) : !in_list(" wall cpu offcpu ", val))
            pdb_usage_die("%s: unknown metric '%s' (%s)", c->name, val,
                          !strcmp(c->name, "flamegraph") ? flame_metric_names() : PDB_METRICS);
        o->metric = val;
    } else if (!strcmp(name, "format")) {
        if (!in_list(" folded pprof chrome callgrind ", val))
            pdb_usage_die("%s: unknown format '%s' (folded|pprof|chrome|callgrind)", c->name, val);
        o->format = val;
    } else if (!strcmp(name, "group")) {
        const char *known = !strcmp(c->name, "runs") ? " command parent " : " template ";
        if (!in_list(known, val))
            pdb_usage_die("%s: unknown grouping '%s' (%s)", c->name, val,
                          !strcmp(c->name, "runs") ? "command|parent" : "template");
        o->group = val;
    } else if (!strcmp(name, "command")) {
        if (!*val)
            pdb_usage_die("%s: --command wants a program's name", c->name);
        o->command_sel = val;
    } else if (!strcmp(name, "sort")) {
        if (fnset_sort_key(val) < 0)
            pdb_usage_die("%s: unknown sort key '%s' (%s)", c->name, val, fnset_sort_keys());
        o->sort = val;
    } else if (!strcmp(name, "top")) {
        o->top = (long)parse_uint(c->name, "--top", val, LONG_MAX);
        o->top_set = 1;
    } else if (!strcmp(name, "thread")) {
        o->thread = (long)parse_uint(c->name, "--thread", val, UINT32_MAX); /* thread numbers are uint32 */
        o->thread_set = 1;
    } else if (!strcmp(name, "keep")) {
        o->keep = (long)parse_uint(c->name, "--keep", val, LONG_MAX);
        o->keep_set = 1;
    } else if (!strcmp(name, "app")) {
        o->app = val;
    } else if (!strcmp(name, "tenant")) {
        o->tenant = val;
    } else if (!strcmp(name, "auth")) {
        o->auth = val;
    } else if (!strcmp(name, "label")) {
        o->labels[o->nlabels++] = val;
    } else if (!strcmp(name, "timeout")) {
        o->timeout = (long)parse_uint(c->name, "--timeout", val, 3600);
        o->timeout_set = 1;
    } else if (!strcmp(name, "interval")) {
        o->interval = (long)parse_uint(c->name, "--interval", val, 3600);
        if (o->interval == 0)
            pdb_usage_die("%s: --interval wants at least 1 second", c->name);
        o->interval_set = 1;
    } else if (!strcmp(name, "from") || !strcmp(name, "to")) {
        char *end;
        double v = strtod(val, &end);
        if (!*val || *end || !(v >= 0) || v > 1e9)
            pdb_usage_die("%s: --%s wants seconds from the run's start (>= 0), not '%s'", c->name, name, val);
        if (!strcmp(name, "from"))
            o->from = val;
        else
            o->to = val;
    } else if (!strcmp(name, "count")) {
        o->count = (long)parse_uint(c->name, "--count", val, LONG_MAX);
        o->count_set = 1;
    } else if (!strcmp(name, "fail-above")) {
        o->fail_above = parse_percent(c->name, "--fail-above", val);
        o->fail_set = 1;
    }
}

/* One option of command c at argv[*i] (moving *i past a value it takes). */
static void parse_option(pdb_opts *o, const command *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "-o") && allowed(c, "output")) {
        if (*i + 1 >= argc || !*argv[*i + 1])
            pdb_usage_die("%s: -o wants a file", c->name);
        o->output = argv[++*i];
        return;
    }
    if (a[1] != '-')
        pdb_usage_die("%s: unknown option '%s' (piano-db %s --help)", c->name, a, c->name);
    char name[64];
    const char *val = NULL, *eq = strchr(a + 2, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (len >= sizeof name)
        len = sizeof name - 1;
    memcpy(name, a + 2, len);
    name[len] = 0;
    if (!allowed(c, name))
        pdb_usage_die("%s: unknown option '--%s' (piano-db %s --help)", c->name, name, c->name);
    if (takes_value(name)) {
        if (eq)
            val = eq + 1;
        else if (*i + 1 < argc)
            val = argv[++*i];
        else
            pdb_usage_die("%s: --%s wants a value", c->name, name);
    } else if (eq) {
        pdb_usage_die("%s: --%s takes no value", c->name, name);
    }
    set_option(o, c, name, val);
}

/* The options before the command: --db FILE (also accepted after it),
 * --help, --version. Returns the index of the command; exits after --help
 * and --version. */
static int parse_globals(int argc, char **argv, const char **db)
{
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        const char *a = argv[first];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--version")) {
            puts("piano-db 0.1.0");
            exit(0);
        }
        if (!strcmp(a, "--db") || !strncmp(a, "--db=", 5)) {
            *db = a[4] == '=' ? a + 5 : first + 1 < argc ? argv[++first] : NULL;
            if (!*db || !**db)
                pdb_usage_die("--db wants a file");
            continue;
        }
        pdb_usage_die("unknown option '%s' before the command (piano-db --help)", a);
    }
    if (first >= argc)
        pdb_usage_die("missing command (piano-db --help lists them)");
    if (!strcmp(argv[first], "help")) {
        print_usage(stdout);
        exit(0);
    }
    return first;
}

/* What of a live run the command shows (pdb_live_parts): reading a live
 * run's frames costs seconds per million (issue 20), so only the commands
 * that show frames read them. */
static unsigned live_parts(const command *c, const pdb_opts *o)
{
    if (!strcmp(c->name, "runs"))   /* the run's row and totals; grouped, Empty also needs */
        return o->group ? PIANO_LIVE_STATE : 0;   /* whether it recorded something so far */
    if (!strcmp(c->name, "top"))
        return PIANO_LIVE_STATE;
    if (!strcmp(c->name, "snapshots"))
        return PIANO_LIVE_STATE | PIANO_LIVE_SNAPS;   /* the state: the run picked by default has calls */
    if (!strcmp(c->name, "report"))
        return PIANO_LIVE_STATE | (o->frames ? PIANO_LIVE_FRAMES : 0) | (o->from || o->to ? PIANO_LIVE_SNAPS : 0) |
               (o->threads ? PIANO_LIVE_NAMES : 0);
    if (!strcmp(c->name, "diff"))
        return PIANO_LIVE_STATE;
    if (!strcmp(c->name, "flamegraph"))
        return PIANO_LIVE_STATE | PIANO_LIVE_CONTEXTS;
    if (!strcmp(c->name, "push"))   /* profiles of contexts, windows of snapshots: no frame */
        return PIANO_LIVE_STATE | PIANO_LIVE_CONTEXTS | PIANO_LIVE_SNAPS;
    return PIANO_LIVE_ALL;   /* plot, export: frames too (and the threads' names: chrome) */
}

int main(int argc, char **argv)
{
    const char *global_db = NULL;
    int first = parse_globals(argc, argv, &global_db);
    const command *c = NULL;
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[first], commands[i].name))
            c = &commands[i];
    if (!c)
        pdb_usage_die("unknown command '%s' (piano-db --help lists them)", argv[first]);

    pdb_opts o;
    memset(&o, 0, sizeof o);
    o.cmd = c->name;
    o.db = global_db;
    o.pos = calloc((size_t)argc, sizeof *o.pos);
    o.labels = calloc((size_t)argc, sizeof *o.labels);
    if (!o.pos || !o.labels)
        pdb_die("out of memory");
    int only_pos = 0;
    for (int i = first + 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == 0) {
            o.pos[o.npos++] = a;
        } else if (!strcmp(a, "--")) {
            only_pos = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help_print(*c->help);
            free(o.pos);
            free(o.labels);
            return 0;
        } else {
            parse_option(&o, c, argc, argv, &i);
        }
    }
    if (o.spikes && !o.frames)
        pdb_usage_die("report: --spikes goes with --frames");
    if (o.frames && o.threads)
        pdb_usage_die("report: --frames and --threads exclude each other (use --frames --thread T)");
    if (o.spans && (o.frames || o.threads || o.heap || o.group || o.thread_set || o.sort))
        pdb_usage_die("report: --spans goes without --frames, --threads, --thread, --heap, --group and --sort");
    if (o.heap && !strcmp(c->name, "report") && (o.frames || o.threads))
        pdb_usage_die("report: --heap goes without --frames and --threads (use --heap --thread T)");
    if (o.json && o.csv)
        pdb_usage_die("%s: --json and --csv exclude each other", c->name);
    if ((o.from || o.to) && (o.frames || o.threads || o.thread_set))
        pdb_usage_die("report: --from/--to give the run's functions, threads merged (not with --frames, --threads "
                      "or --thread)");

    pdb p;
    pdb_live_parts = live_parts(c, &o);
    pdb_open(&p, o.db, c->writes == 3 ? PDB_OPEN_AS_IS : c->writes == 1 || (c->writes == 2 && o.npos > 0));
    int rc = c->fn(&p, &o);
    pdb_close(&p);
    free(o.pos);
    free(o.labels);
    if (fflush(stdout) != 0 || ferror(stdout))
        pdb_die("cannot write the output: %s", strerror(errno));
    return rc;
}
