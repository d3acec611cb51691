/*
 * metrics.h - the one list of piano's per-function figures: what each is,
 * when it is not measured, its column in the database, its JSON/CSV key, its
 * report column and sort key, its pprof sample type. The schema's column
 * lists (store/piano_schema.h), the import's INSERTs and binds (store/), and
 * piano-db's reading, row fields, report columns, sort keys and sample types
 * (tools/db) are generated from it. doc/architecture.md "Adding a metric" says
 * what a new one touches.
 *
 * PIANO_METRICS(X) calls, in the order of report --json's keys,
 *   X(id, unit, when, where, snap, sort, head, minw, pprof, comment)
 *   id      the schema column, the JSON/CSV key, the field of piano-db's fnrow
 *   unit    COUNT, NS or BYTES (how a table shows it; an integer in JSON/CSV)
 *   when    ALWAYS; CPU: NULL (JSON null, "-") unless the run measured CPU
 *           time (PIANO_CPU=1, runs.cpu_mode); HEAP: NULL unless it tracked
 *           heap in use (PIANO_HEAP=1, runs.heap_peak_bytes)
 *   where   CTX: a column of stats (per function) and contexts (per calling
 *           context), summed over threads; FN: of stats only; HIST: not a
 *           column, read from the merged histograms (stats.hist_self/total)
 *   snap    1: kept per snapshot (PIANO_INTERVAL), so a window shows it
 *   sort    report --sort's name for it (its place in the list: SORT_RANKS), or 0
 *   head    its report table column (CPU columns with --cpu only), or 0
 *   minw    that column's least width
 *   pprof   its pprof sample type "type", unit from `unit` (pprof's names:
 *           pprof and Pyroscope show them as Go's), or 0
 *   comment the schema's comment on its column
 */
#ifndef PIANO_METRICS_H
#define PIANO_METRICS_H

#define PIANO_METRICS(X)                                                                                      \
    X(calls, COUNT, ALWAYS, CTX, 1, "calls", "Calls", 5, "calls", "calls made (finished or not)")                                         \
    X(self_ns, NS, ALWAYS, CTX, 1, "self", "Self", 11, "self", "time in its own code")                                            \
    X(total_ns, NS, ALWAYS, CTX, 0, "total", 0, 0, 0,                                                         \
      "inclusive; a recursive function counted at its outermost activation")                                  \
    X(p50_ns, NS, ALWAYS, HIST, 0, "p50", "p50", 11, 0, "median of per-call self time")                                                   \
    X(p99_ns, NS, ALWAYS, HIST, 0, "p99", "p99", 11, 0, "99th percentile of per-call self time")                                                   \
    X(p50_total_ns, NS, ALWAYS, HIST, 0, 0, 0, 0, 0, "median of per-call inclusive time")                                                      \
    X(p99_total_ns, NS, ALWAYS, HIST, 0, 0, 0, 0, 0, "99th percentile of per-call inclusive time")                                                      \
    X(allocs, COUNT, ALWAYS, CTX, 1, "allocs", "Allocs", 9, "alloc_objects", "allocations made as the innermost call")                              \
    X(alloc_bytes, BYTES, ALWAYS, CTX, 1, "bytes", "Bytes", 11, "alloc_space", "their bytes as asked")                            \
    X(frees, COUNT, ALWAYS, CTX, 0, 0, 0, 0, 0, "frees made as the innermost call")                                                           \
    X(free_bytes, BYTES, ALWAYS, CTX, 0, 0, 0, 0, 0, "their bytes")                                                      \
    X(cpu_ns, NS, CPU, CTX, 1, "cpu", "CPU", 11, "cpu", "self CPU time")                                      \
    X(cpu_total_ns, NS, CPU, CTX, 0, 0, 0, 11, 0, "inclusive CPU time")                                       \
    X(cpu_user_ns, NS, CPU, CTX, 0, 0, "User", 11, 0, "its user part")                                        \
    X(cpu_sys_ns, NS, CPU, CTX, 0, 0, "Sys", 11, 0, "its system part")                                        \
    X(offcpu_ns, NS, CPU, CTX, 0, "offcpu", "Off-CPU", 11, 0,                                                 \
      "inclusive time off the CPU: blocked or sleeping or preempted")                                        \
    X(inuse_objects, COUNT, HEAP, CTX, 1, 0, 0, 0, "inuse_objects", "live at the end")                        \
    X(inuse_bytes, BYTES, HEAP, CTX, 1, "inuse", 0, 0, "inuse_space", "their bytes as asked")                 \
    X(peak_inuse_bytes, BYTES, HEAP, CTX, 0, "peak", 0, 0, 0, "bytes live at the run's heap peak")            \
    X(unfinished, COUNT, ALWAYS, FN, 0, 0, 0, 0, 0,                                                           \
      "calls in flight when the run ended (timed to its end): included in calls")

/* The metrics that are plain per-context counters: X(id, field), a CTX
 * metric of PIANO_METRICS whose figure is struct piano_node's `field`
 * (spool/spool.h), recorded by the runtime alone. The import stores it per
 * context as it is and per function summed over its contexts (store/
 * import_state.c), with no code of its own. */
#define PIANO_NODE_COUNTERS(X)

/* Schema versions added by metrics: a new CTX or FN metric adds 1, and
 * opening an older database adds its column (store.c add_metric_columns). */
#define PIANO_METRICS_SCHEMA 0

/* report --sort's keys in the order help and messages list them. */
#define PIANO_SORT_ORDER "self", "total", "calls", "p50", "p99", "allocs", "bytes", "cpu", "offcpu", "inuse", "peak"

/* The metrics' numbers: PIANO_M_calls, ... PIANO_M_N. */
enum piano_metric {
#define PIANO_M_ENUM(id, ...) PIANO_M_##id,
    PIANO_METRICS(PIANO_M_ENUM)
#undef PIANO_M_ENUM
    PIANO_M_N
};

/* The counters' numbers: PIANO_C_<id>, ... PIANO_C_N. */
enum piano_counter {
#define PIANO_C_ENUM(id, field) PIANO_C_##id,
    PIANO_NODE_COUNTERS(PIANO_C_ENUM)
#undef PIANO_C_ENUM
    PIANO_C_N
};

/* Token tests, for generators: PIANO_IF_<where>_<WHERE>(x) is x or nothing. */
#define PIANO_IF(kind, value, x) PIANO_IF_##kind##_##value(x)
#define PIANO_IF_WHERE_CTX(x) x
#define PIANO_IF_WHERE_FN(x)
#define PIANO_IF_WHERE_HIST(x)
#define PIANO_IF_STATS_CTX(x) x
#define PIANO_IF_STATS_FN(x) x
#define PIANO_IF_STATS_HIST(x)
#define PIANO_IF_WHEN_ALWAYS(x) x
#define PIANO_IF_WHEN_CPU(x)
#define PIANO_IF_WHEN_HEAP(x)
#define PIANO_IF_MEASURED_ALWAYS(x)
#define PIANO_IF_MEASURED_CPU(x) x
#define PIANO_IF_MEASURED_HEAP(x) x
#define PIANO_IF_CPU_ALWAYS(x)
#define PIANO_IF_CPU_CPU(x) x
#define PIANO_IF_CPU_HEAP(x)
#define PIANO_IF_HEAP_ALWAYS(x)
#define PIANO_IF_HEAP_CPU(x)
#define PIANO_IF_HEAP_HEAP(x) x

/* Schema text: "  id INTEGER,   -- comment\n" per metric of a group. */
#define PIANO_M_COLUMN(id, unit, when, where, snap, sort, head, minw, pprof, comment) \
    "  " #id " INTEGER, -- " comment "\n"
#define PIANO_M_COLUMN_NN(id, unit, when, where, snap, sort, head, minw, pprof, comment) \
    "  " #id " INTEGER NOT NULL DEFAULT 0, -- " comment "\n"

/* The CTX columns measured always (NOT NULL), and those measured when asked
 * (when CPU: the CPU columns; HEAP: heap in use), for stats and contexts. */
#define PIANO_M_COL_ALWAYS(id, unit, when, where, ...) \
    PIANO_IF(WHERE, where, PIANO_IF(WHEN, when, PIANO_M_COLUMN_NN(id, unit, when, where, __VA_ARGS__)))
#define PIANO_M_COL_CPU(id, unit, when, where, ...) \
    PIANO_IF(WHERE, where, PIANO_IF(CPU, when, PIANO_M_COLUMN(id, unit, when, where, __VA_ARGS__)))
#define PIANO_M_COL_HEAP(id, unit, when, where, ...) \
    PIANO_IF(WHERE, where, PIANO_IF(HEAP, when, PIANO_M_COLUMN(id, unit, when, where, __VA_ARGS__)))
#define PIANO_M_COL_FN(id, unit, when, where, ...) \
    PIANO_IF_FNONLY_##where("  " #id " INTEGER NOT NULL DEFAULT 0, -- " PIANO_M_COMMENT(__VA_ARGS__) "\n")
#define PIANO_M_COMMENT(snap, sort, head, minw, pprof, comment) comment
#define PIANO_METRIC_COLUMNS_FN PIANO_METRICS(PIANO_M_COL_FN)
#define PIANO_METRIC_COLUMNS_ALWAYS PIANO_METRICS(PIANO_M_COL_ALWAYS)
#define PIANO_METRIC_COLUMNS_CPU PIANO_METRICS(PIANO_M_COL_CPU)
#define PIANO_METRIC_COLUMNS_HEAP PIANO_METRICS(PIANO_M_COL_HEAP)

/* Column-name lists, each name followed by a comma: the CTX columns (contexts
 * and stats) and the stats-only (FN) ones. */
#define PIANO_M_NAME_CTX(id, unit, when, where, ...) PIANO_IF(WHERE, where, #id ",")
#define PIANO_M_NAME_FN(id, unit, when, where, ...) PIANO_IF_FNONLY_##where(#id ",")
#define PIANO_IF_FNONLY_CTX(x)
#define PIANO_IF_FNONLY_FN(x) x
#define PIANO_IF_FNONLY_HIST(x)
#define PIANO_METRIC_NAMES_CTX PIANO_METRICS(PIANO_M_NAME_CTX)
#define PIANO_METRIC_NAMES_FN PIANO_METRICS(PIANO_M_NAME_FN)
/* The same with a comma before each name, and as named parameters (",:calls"). */
#define PIANO_M_CNAME_CTX(id, unit, when, where, ...) PIANO_IF(WHERE, where, "," #id)
#define PIANO_M_CNAME_FN(id, unit, when, where, ...) PIANO_IF_FNONLY_##where("," #id)
#define PIANO_M_PARAM_CTX(id, unit, when, where, ...) PIANO_IF(WHERE, where, ",:" #id)
#define PIANO_M_PARAM_FN(id, unit, when, where, ...) PIANO_IF_FNONLY_##where(",:" #id)
#define PIANO_METRIC_COLS_CTX PIANO_METRICS(PIANO_M_CNAME_CTX)
#define PIANO_METRIC_COLS_FN PIANO_METRICS(PIANO_M_CNAME_FN)
#define PIANO_METRIC_PARAMS_CTX PIANO_METRICS(PIANO_M_PARAM_CTX)
#define PIANO_METRIC_PARAMS_FN PIANO_METRICS(PIANO_M_PARAM_FN)

/* What a program may ask of a metric at run time. */
enum piano_metric_unit { PIANO_UNIT_COUNT, PIANO_UNIT_NS, PIANO_UNIT_BYTES };
enum piano_metric_when { PIANO_WHEN_ALWAYS, PIANO_WHEN_CPU, PIANO_WHEN_HEAP };
enum piano_metric_where { PIANO_WHERE_CTX, PIANO_WHERE_FN, PIANO_WHERE_HIST };

struct piano_metric_info {
    const char *id;          /* column and key */
    enum piano_metric_unit unit;
    enum piano_metric_when when;
    enum piano_metric_where where;
    int snap;
    const char *sort, *head; /* or NULL */
    int minw;
    const char *pprof;       /* or NULL */
};

#define PIANO_M_INFO(id, unit, when, where, snap, sort, head, minw, pprof, comment)                          \
    {#id, PIANO_UNIT_##unit, PIANO_WHEN_##when, PIANO_WHERE_##where, snap, sort, head, minw, pprof},
/* When metric m is measured. */
static inline enum piano_metric_when piano_metric_when(int m)
{
#define PIANO_M_WHEN(id, unit, when, ...) PIANO_WHEN_##when,
    static const unsigned char when[] = {PIANO_METRICS(PIANO_M_WHEN)};
#undef PIANO_M_WHEN
    return (enum piano_metric_when)when[m];
}

/* The table as data: static const struct piano_metric_info t[] = { PIANO_METRIC_INFO }; */
#define PIANO_METRIC_INFO PIANO_METRICS(PIANO_M_INFO)

#endif
