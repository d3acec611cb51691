/*
 * piano_schema.h - the one definition of piano's SQLite schema, used by the
 * runtime (which writes runs) and by piano-db (which reads them).
 *
 * All times are nanoseconds (INTEGER), converted from clock ticks when a run is
 * stored. A "run" is one process. Function ids, thread numbers and context ids
 * are local to their run.
 *
 * Histogram blobs (stats.hist_self, stats.hist_total) are sparse log-linear
 * histograms of per-call times in clock ticks: their non-zero buckets, ascending,
 * each its distance from the previous bucket and its count as varints (one
 * varint for both when the count is 1-3), the format spool/hist.h describes and
 * spool/hist.c alone writes and reads. Older formats (schema 15 and before: fixed
 * 10-byte records { uint16 bucket; uint64 count; }; schemas 16-19: two varints a
 * bucket) stay as they are and are still read (each blob tells its format).
 * Multiply a bucket's value by runs.ns_per_tick for ns.
 *
 * Frame histograms (runs.frame_hist, threads.frame_hist) and span histograms
 * (spans.hist_wall, spans.hist_busy) have the same format: the total times of
 * every completed frame of the run (or thread), kept or not.
 *
 * Frame blobs (frames.fns): per function that ran in the frame, its id and its
 * self time in ns, each an unsigned LEB128 varint (rt/fns_blob.h). Schema 2
 * had fixed { uint32 fn; uint64 self_ns; } records; opening such a database
 * rewrites its blobs.
 *
 * A comma in the comment of a table's next-to-last column makes SQLite's
 * DROP COLUMN of the last one fail (the unit tests drop columns to make
 * older schemas): keep that comment free of commas.
 *
 * Schema changes: bump PIANO_SCHEMA_VERSION (stored as PRAGMA user_version),
 * add a PIANO_SCHEMA_MIGRATE_<old> step, and let piano_store_open() run it; a
 * database with a newer version is refused.
 */
#ifndef PIANO_SCHEMA_H
#define PIANO_SCHEMA_H

#include "metrics.h"   /* the figures' columns of stats and contexts (spool/metrics.h) */
#include "span_spool.h"   /* the span figures kept per snapshot (PIANO_SPAN_FIGURES) */

/* 12 (spans), 13 (the run-time selection), 14 (spans in snapshots), 15
 * (tag_runs), 16 (compact histogram blobs: older tools cannot read them; the
 * upgrade rewrites nothing), 17 (a thread's contexts as one blob:
 * context_trees), 18 (a thread's stats as one blob: stat_trees), 19 (no
 * plain-SQL views contexts and stats: PIANO_SCHEMA_MIGRATE_VIEWS), 20
 * (compact v2 histograms, one varint for a bucket's distance and a count of
 * 1-3: older tools cannot read them; the upgrade rewrites nothing), 21 (a
 * run's functions as one blob: fn_lists; no stored view functions), 22 (v3
 * stats blobs, child_calls before the allocation figures: stats_blob.h;
 * older tools cannot read them; the upgrade rewrites nothing), 23 (stats,
 * contexts and function-list blobs stored packed when that makes them shorter:
 * blob_pack.h; older tools cannot read them; the upgrade rewrites nothing),
 * 24 (frames in blocks: frame_blocks; the table frames becomes frame_rows,
 * its rows moved into blocks),
 * and one per metric added since (spool/metrics.h). */
#define PIANO_SCHEMA_VERSION (24 + PIANO_METRICS_SCHEMA)

/* A function's name, file and line are stored once per database (names),
 * shared by every run that calls it; a run's function ids point at them.
 * Since schema 21 the import stores a run's ids and their names as one blob
 * (fn_lists.fns, the format of functions_blob.h: about a byte a function where
 * a row of run_functions took 13); run_functions holds rows written before and
 * rows inserted through the view. The TEMP view functions (functions_blob.c:
 * made on their connection by piano-db and `piano-db sql`, not stored) reads
 * both as the table of schema 7 and before did (run, id, name, file, line),
 * and takes inserts. */
#define PIANO_SCHEMA_FN_LISTS \
"CREATE TABLE IF NOT EXISTS fn_lists(\n" \
"  run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  fns BLOB NOT NULL                   -- its function ids and names (store/functions_blob.h)\n" \
");\n"
#define PIANO_SCHEMA_FUNCTIONS \
"CREATE TABLE IF NOT EXISTS names(\n" \
"  id   INTEGER PRIMARY KEY,\n" \
"  name TEXT NOT NULL,                 -- C: plain name; C++: demangled signature\n" \
"  file TEXT NOT NULL,\n" \
"  line INTEGER NOT NULL,\n" \
"  UNIQUE(name, file, line)\n" \
");\n" \
"CREATE TABLE IF NOT EXISTS run_functions(  -- rows of schemas 8-20 and inserted ones (read through functions)\n" \
"  run  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  id   INTEGER NOT NULL,              -- the function's id in the run (stats.fn, contexts.fn...)\n" \
"  name INTEGER NOT NULL REFERENCES names(id),\n" \
"  PRIMARY KEY(run, id)\n" \
") WITHOUT ROWID;\n" \
PIANO_SCHEMA_FN_LISTS

/* Profiles `piano-db push` could not send (the server down, a 5xx, a
 * timeout): the next push to the same url sends them first. Each row is a
 * whole request, so it goes out as it was made even after its run is deleted. */
#define PIANO_SCHEMA_PUSHES \
"CREATE TABLE IF NOT EXISTS pushes(\n" \
"  id      INTEGER PRIMARY KEY,        -- sent in this order\n" \
"  url     TEXT NOT NULL,              -- the server as push normalised it (scheme://host:port/path)\n" \
"  tenant  TEXT,                       -- its X-Scope-OrgID header (NULL: none)\n" \
"  run     INTEGER NOT NULL,           -- the run it was made from (not a reference: it outlives rm)\n" \
"  query   TEXT NOT NULL,              -- name=APP{labels}&from=S&until=S (an /ingest query: the series)\n" \
"  profile BLOB NOT NULL,              -- gzipped profile.proto\n" \
"  kind    TEXT NOT NULL,              -- its sample-type group (wall or cpu or memory)\n" \
"  tries   INTEGER NOT NULL DEFAULT 0, -- failed tries so far\n" \
"  error   TEXT                        -- why the last one failed\n" \
");\n"

/* What `piano-db push` sent or kept, per server and tenant, so that a run
 * goes once (Pyroscope adds up what it receives): the whole run, or the
 * windows of its first `snapshots` snapshots (push --follow). Made by push
 * when it first runs (CREATE TABLE IF NOT EXISTS): no schema version of its
 * own; a database without it has pushed nothing since. */
#define PIANO_SCHEMA_PUSHED \
"CREATE TABLE IF NOT EXISTS pushed(\n" \
"  url       TEXT NOT NULL,            -- as in pushes\n" \
"  tenant    TEXT NOT NULL,            -- its X-Scope-OrgID ('': none)\n" \
"  run_key   TEXT NOT NULL,            -- runs.key: the same run live and stored\n" \
"  snapshots INTEGER NOT NULL,         -- --follow: the windows up to this snapshot went\n" \
"  whole     INTEGER NOT NULL,         -- 1: all of the run went (whole or its windows to its end)\n" \
"  PRIMARY KEY(url, tenant, run_key)\n" \
") WITHOUT ROWID;\n"

/* Snapshots (PIANO_INTERVAL): a run's figures over time. snapshot_times has
 * a row per snapshot taken; snapshots a row per function whose figures
 * changed in it, with its cumulative figures then (a function's figures at
 * time T are its row with the latest t_ns <= T; before its first row, 0). */
#define PIANO_SCHEMA_SNAPSHOTS \
"CREATE TABLE IF NOT EXISTS snapshot_times(\n" \
"  run  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  t_ns INTEGER NOT NULL,              -- since the run's start\n" \
"  PRIMARY KEY(run, t_ns)\n" \
") WITHOUT ROWID;\n" \
"CREATE TABLE IF NOT EXISTS snapshots(\n" \
"  run  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  fn   INTEGER NOT NULL,\n" \
"  t_ns INTEGER NOT NULL,\n" \
"  calls INTEGER NOT NULL, self_ns INTEGER NOT NULL,\n" \
"  child_calls INTEGER NOT NULL,       -- instrumented calls made directly by it (overhead correction)\n" \
"  allocs INTEGER NOT NULL, alloc_bytes INTEGER NOT NULL,\n" \
"  cpu_ns INTEGER,                     -- self CPU time (NULL when the run did not measure it: runs.cpu_mode)\n" \
"  inuse_objects INTEGER,              -- its allocations live then (NULL when the run did not track heap in use)\n" \
"  inuse_bytes INTEGER,                -- their bytes as asked\n" \
"  PRIMARY KEY(run, fn, t_ns)\n" \
") WITHOUT ROWID;\n"

/* CPU time of a function (stats) or a calling context (contexts), NULL when
 * the run or its thread did not measure it (runs.cpu_mode). cpu_ns is self
 * (its own code: self_ns less its own off-CPU time); the others are
 * inclusive, as total_ns; offcpu_ns is total_ns - cpu_total_ns. */
#define PIANO_SCHEMA_CPU_COLUMNS PIANO_METRIC_COLUMNS_CPU
/* Heap in use (PIANO_HEAP), per function (stats) and per context: the
 * allocations made there still live at the run's end, and the bytes they held
 * when the run's heap peaked (within 1/64: rt/heap.c). NULL: not tracked. */
#define PIANO_SCHEMA_INUSE PIANO_METRIC_COLUMNS_HEAP

/* Spans (include/piano/span.h): per run and span name (with its fields),
 * the lifetime figures of its spans. What ran while they were entered is in
 * stats and contexts under the span's function (fn; its file is '<span>'). */
#define PIANO_SCHEMA_SPANS \
"CREATE TABLE IF NOT EXISTS spans(\n" \
"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  name TEXT NOT NULL,                 -- the span's name with its fields: request{method=GET}\n" \
"  fn INTEGER,                         -- its function id in the run: its frame in contexts and stats\n" \
"  count INTEGER NOT NULL,             -- spans closed and those open at the end\n" \
"  unfinished INTEGER NOT NULL,        -- of them open at the end (timed to it)\n" \
"  wall_ns INTEGER NOT NULL,           -- open to close (summed)\n" \
"  busy_ns INTEGER NOT NULL,           -- entered: idle is wall_ns - busy_ns\n" \
"  hist_wall BLOB,                     -- histogram of each span's wall time (ticks)\n" \
"  hist_busy BLOB,                     -- and of its busy time\n" \
"  PRIMARY KEY(run, name)\n" \
") WITHOUT ROWID;\n"

/* Spans in snapshots (PIANO_INTERVAL): a row per span name whose figures
 * changed in a snapshot (its time: snapshot_times), with its cumulative
 * figures then, the columns of the spans table kept per snapshot
 * (span_spool.h PIANO_SPAN_FIGURES). A span counts when it closes: one open
 * at a snapshot is in a later one, whole. */
#define PIANO_SCHEMA_SPAN_SNAPSHOTS \
"CREATE TABLE IF NOT EXISTS span_snapshots(\n" \
"  run  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  name TEXT NOT NULL,                 -- spans.name\n" \
"  t_ns INTEGER NOT NULL,              -- snapshot_times.t_ns\n" \
PIANO_SPAN_FIGURE_COLUMNS \
"  PRIMARY KEY(run, name, t_ns)\n" \
") WITHOUT ROWID;\n"

/* Tags that name several runs (`piano-db tag NAME SET`): a row per run;
 * a tag of one run is a row of tags. A name is in one of them, never both. */
#define PIANO_SCHEMA_TAG_RUNS \
"CREATE TABLE IF NOT EXISTS tag_runs(\n" \
"  name TEXT NOT NULL,\n" \
"  run  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  PRIMARY KEY(name, run)\n" \
") WITHOUT ROWID;\n"

/* Calling contexts, per run and thread: a tree whose context ids are the
 * runtime's node numbers (a parent's id is smaller than its children's).
 * Since schema 17 the import stores a thread's whole tree as one blob
 * (context_trees.nodes, the format of contexts_blob.h: about 8 bytes a
 * context where a row took 41); context_rows holds rows written before (the
 * contexts table of schema 16 and older, renamed) and rows inserted through
 * the view. context_trees has rowids: a blob longer than a page's share
 * then fills its overflow pages whole (SQLite keeps the remainder in the
 * table's page), where a WITHOUT ROWID table's spills from 489 bytes on and
 * leaves its last overflow page part empty (jq's 10 KB trees: 3 pages
 * instead of 2 and 2 KB in a shared page). The TEMP view contexts
 * (contexts_blob.c: made on their connection by piano-db and `piano-db sql`,
 * not stored) reads both as the table of schema 16 did, same columns; under
 * `piano-db sql` it takes inserts, updates and deletes (an update or delete
 * of a context in a blob moves its thread's tree to context_rows first). */
#define PIANO_SCHEMA_CONTEXT_ROWS \
"CREATE TABLE IF NOT EXISTS context_rows(  -- calling context tree per run and thread (read through contexts)\n" \
"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  thread INTEGER NOT NULL, id INTEGER NOT NULL,\n" \
"  parent INTEGER,                     -- NULL at a root (outermost instrumented call)\n" \
"  fn INTEGER NOT NULL,\n" \
PIANO_METRIC_COLUMNS_ALWAYS \
PIANO_SCHEMA_CPU_COLUMNS \
PIANO_SCHEMA_INUSE \
"  PRIMARY KEY(run, thread, id)\n" \
") WITHOUT ROWID;\n"
#define PIANO_SCHEMA_CONTEXT_TREES \
"CREATE TABLE IF NOT EXISTS context_trees(\n" \
"  run    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  thread INTEGER NOT NULL,\n" \
"  nodes  BLOB NOT NULL,               -- its contexts (store/contexts_blob.h)\n" \
"  PRIMARY KEY(run, thread)\n" \
");\n"

/* Per-function figures and histograms, per run and thread. Since schema 18
 * the import stores a thread's functions as one blob (stat_trees.fns, the
 * format of stats_blob.h: about 5 bytes a function besides its histograms,
 * where a row took about 50, and a leaf function's hist_total, equal to its
 * hist_self, stored once); stat_rows holds rows written before (the stats
 * table of schema 17 and older, renamed) and rows inserted through the view.
 * stat_trees has rowids, as context_trees. The TEMP view stats (stats_blob.c:
 * made as contexts is) reads both as the table of schema 17 did, same
 * columns; under `piano-db sql` it takes inserts, updates and deletes (an
 * update or delete of a function in a blob moves its thread's stats to
 * stat_rows first). */
#define PIANO_SCHEMA_STAT_ROWS \
"CREATE TABLE IF NOT EXISTS stat_rows( -- per run and thread and function (read through stats)\n" \
"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  thread INTEGER NOT NULL, fn INTEGER NOT NULL,\n" \
PIANO_METRIC_COLUMNS_ALWAYS \
"  hist_self BLOB, hist_total BLOB,\n" \
"  child_calls INTEGER NOT NULL DEFAULT 0, -- instrumented calls made directly by it (overhead correction)\n" \
PIANO_METRIC_COLUMNS_FN \
PIANO_SCHEMA_CPU_COLUMNS \
PIANO_SCHEMA_INUSE \
"  PRIMARY KEY(run, thread, fn)\n" \
") WITHOUT ROWID;\n"
#define PIANO_SCHEMA_STAT_TREES \
"CREATE TABLE IF NOT EXISTS stat_trees(\n" \
"  run    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  thread INTEGER NOT NULL,\n" \
"  fns    BLOB NOT NULL,               -- its functions' stats (store/stats_blob.h)\n" \
"  PRIMARY KEY(run, thread)\n" \
");\n"

/* Frames (PIANO_FRAMES): per run, the frames kept, numbered in order of
 * their end across the run (seq). Since schema 24 the import stores them in
 * blocks of up to 256 consecutive frames (frame_blocks.frames, the format of
 * store/frames_blob.h: about 8 bytes a frame besides its fns, where a row
 * took about 25, and a row's work in SQLite was most of what storing a frame
 * cost); frame_rows (the frames table of schema 22 and older, renamed, with
 * its index frames_spikes) holds the rows the upgrade could not move into
 * blocks and rows inserted through the view. The TEMP view frames (frames_blob.c: made on their
 * connection by piano-db and `piano-db sql`, not stored) reads both as the
 * table of schema 22 did, same columns; under `piano-db sql` it takes
 * inserts, updates and deletes (an update or delete of a frame in a block
 * moves the block's frames to frame_rows first). A frame is a spike when its
 * total_ns is over 2x the median of every frame of the run (runs.frame_hist),
 * marked when it is stored; frame_blocks.spikes counts a block's, and its
 * partial index finds the blocks that hold some. frame_blocks has rowids, as
 * context_trees. */
#define PIANO_SCHEMA_FRAME_ROWS \
"CREATE TABLE IF NOT EXISTS frame_rows(  -- frames no block holds and inserted ones (read through frames)\n" \
"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  seq INTEGER NOT NULL,               -- 1, 2, ... in order of frame end across the run\n" \
"  thread INTEGER NOT NULL,\n" \
"  start_ns INTEGER NOT NULL,          -- since the run's start\n" \
"  total_ns INTEGER NOT NULL,\n" \
"  allocs INTEGER NOT NULL, alloc_bytes INTEGER NOT NULL,\n" \
"  frees INTEGER NOT NULL, free_bytes INTEGER NOT NULL,\n" \
"  fns BLOB NOT NULL,\n" \
"  thread_seq INTEGER,                 -- its number among its thread's frames, kept or not (1, 2, ...)\n" \
"  spike INTEGER NOT NULL DEFAULT 0,   -- total_ns > 2x the median of the run's frames (runs.frame_hist)\n" \
"  cpu_ns INTEGER,                     -- CPU time in the frame: total_ns less its off-CPU time (NULL: not measured)\n" \
"  PRIMARY KEY(run, seq)\n" \
") WITHOUT ROWID;\n" \
"CREATE INDEX IF NOT EXISTS frames_spikes ON frame_rows(run, seq) WHERE spike;\n"

#define PIANO_SCHEMA_FRAME_BLOCKS \
"CREATE TABLE IF NOT EXISTS frame_blocks(\n" \
"  run    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  seq    INTEGER NOT NULL,            -- its first frame's\n" \
"  last   INTEGER NOT NULL,            -- its last frame's seq\n" \
"  n      INTEGER NOT NULL,            -- its frames\n" \
"  spikes INTEGER NOT NULL,            -- of them spikes\n" \
"  frames BLOB NOT NULL,               -- the frames (store/frames_blob.h)\n" \
"  PRIMARY KEY(run, seq)\n" \
");\n" \
"CREATE INDEX IF NOT EXISTS frame_blocks_spikes ON frame_blocks(run, seq) WHERE spikes;\n"

#define PIANO_SCHEMA_SQL \
"CREATE TABLE IF NOT EXISTS runs(\n" \
"  id          INTEGER PRIMARY KEY,\n" \
"  key         TEXT NOT NULL UNIQUE,   -- '<pid>-<start ns>': names the run before it is stored\n" \
"  parent_key  TEXT,                   -- key of the run this one was forked from\n" \
"  pid         INTEGER NOT NULL,\n" \
"  command     TEXT NOT NULL,          -- argv joined by spaces\n" \
"  started_ns  INTEGER NOT NULL,       -- CLOCK_REALTIME at start, ns since the epoch\n" \
"  duration_ns INTEGER NOT NULL,\n" \
"  status      TEXT NOT NULL,          -- 'complete' (exit/return from main) or 'recovered' (imported after the process died)\n" \
"  clock       TEXT NOT NULL,          -- 'tsc' or 'monotonic'\n" \
"  ns_per_tick REAL NOT NULL,          -- calibration of the clock\n" \
"  overhead_ns REAL NOT NULL DEFAULT 0,-- measured instrumentation cost per call, for correction\n" \
"  frames_dropped INTEGER NOT NULL DEFAULT 0,\n" \
"  samples_dropped INTEGER NOT NULL DEFAULT 0, -- calls missing from the histograms (pages ran out)\n" \
"  calls_untimed INTEGER NOT NULL DEFAULT 0,   -- calls nested deeper than the shadow stack: counted nowhere\n" \
"  frames      INTEGER,                -- every completed frame, kept or not (NULL: not known: count the frames table)\n" \
"  frames_kept INTEGER,                -- the rows of the frames table (PIANO_FRAMES: the budget, spikes, a sample)\n" \
"  frame_hist  BLOB,                   -- histogram of every frame's total (ticks); NULL before schema 5\n" \
"  spikes_unkept INTEGER NOT NULL DEFAULT 0, -- spikes past the spike limit of the run: sampled like other frames\n" \
"  allocator   TEXT,                   -- an allocator whose calls piano does not see (je_malloc or malloc in libjemalloc.so.2) or NULL\n" \
"  cpu_mode    TEXT,                   -- CPU time: 'perf' (PIANO_CPU=1) or 'refused' (perf_event_open was) or NULL (not asked)\n" \
"  heap_peak_bytes INTEGER,            -- the heap in use at its peak (PIANO_HEAP); NULL: not tracked\n" \
"  selection   TEXT                    -- the run-time PIANO_FNS; NULL: unset (the compile-time selection)\n" \
");\n" \
PIANO_SCHEMA_FUNCTIONS \
"CREATE TABLE IF NOT EXISTS threads(\n" \
"  run    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  thread INTEGER NOT NULL,            -- 0, 1, ... in order of first instrumented call\n" \
"  tid    INTEGER NOT NULL,\n" \
"  name   TEXT NOT NULL,\n" \
"  frames INTEGER,                     -- its completed frames, kept or not\n" \
"  frame_hist BLOB,                    -- histogram of their totals (ticks)\n" \
"  PRIMARY KEY(run, thread)\n" \
") WITHOUT ROWID;\n" \
PIANO_SCHEMA_STAT_ROWS \
PIANO_SCHEMA_STAT_TREES \
PIANO_SCHEMA_CONTEXT_ROWS \
PIANO_SCHEMA_CONTEXT_TREES \
PIANO_SCHEMA_FRAME_ROWS \
PIANO_SCHEMA_FRAME_BLOCKS \
"CREATE TABLE IF NOT EXISTS unfinished( -- calls still in flight when the run ended (counted in stats since schema 4)\n" \
"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
"  thread INTEGER NOT NULL, depth INTEGER NOT NULL, fn INTEGER NOT NULL,\n" \
"  start_ns INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL,\n" \
"  PRIMARY KEY(run, thread, depth)\n" \
") WITHOUT ROWID;\n" \
"CREATE TABLE IF NOT EXISTS tags(\n" \
"  name TEXT PRIMARY KEY,\n" \
"  run  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE\n" \
");\n" \
PIANO_SCHEMA_PUSHES \
PIANO_SCHEMA_SNAPSHOTS \
PIANO_SCHEMA_SPANS \
PIANO_SCHEMA_SPAN_SNAPSHOTS \
PIANO_SCHEMA_TAG_RUNS

/* From version 1 to 2: what a run lost to its limits, so it is never silent.
 * (2 -> 3 rewrites frames.fns: store.c, with the piano_fns_v3() SQL function.) */
#define PIANO_SCHEMA_MIGRATE_1 \
"ALTER TABLE runs ADD COLUMN samples_dropped INTEGER NOT NULL DEFAULT 0;\n" \
"ALTER TABLE runs ADD COLUMN calls_untimed INTEGER NOT NULL DEFAULT 0;\n"

/* From version 3 to 4: calls in flight at the end count as calls (stats.unfinished
 * says how many of them). Runs stored before keep 0: their calls in flight are
 * only in the unfinished table, not in calls. */
#define PIANO_SCHEMA_MIGRATE_3 \
"ALTER TABLE stats ADD COLUMN unfinished INTEGER NOT NULL DEFAULT 0;\n"

/* From version 4 to 5: frames have a budget (PIANO_FRAMES). The count of a
 * run's and a thread's frames is stored, counted here once for the runs stored
 * before (every frame was kept, or dropped); their frame_hist stays NULL (the
 * frames table holds all of them: piano-db reads their median from it). */
#define PIANO_SCHEMA_MIGRATE_4 \
"ALTER TABLE runs ADD COLUMN frames INTEGER;\n" \
"ALTER TABLE runs ADD COLUMN frames_kept INTEGER;\n" \
"ALTER TABLE runs ADD COLUMN frame_hist BLOB;\n" \
"ALTER TABLE runs ADD COLUMN spikes_unkept INTEGER NOT NULL DEFAULT 0;\n" \
"ALTER TABLE threads ADD COLUMN frames INTEGER;\n" \
"ALTER TABLE threads ADD COLUMN frame_hist BLOB;\n" \
"ALTER TABLE frames ADD COLUMN thread_seq INTEGER;\n" \
"ALTER TABLE frames ADD COLUMN spike INTEGER NOT NULL DEFAULT 0;\n" \
"CREATE INDEX IF NOT EXISTS frames_spikes ON frames(run, seq) WHERE spike;\n" \
"UPDATE runs SET frames_kept = 0;\n" \
"UPDATE runs SET frames_kept = c.n FROM (SELECT run, count(*) AS n FROM frames GROUP BY run) AS c WHERE runs.id = c.run;\n" \
"UPDATE runs SET frames = frames_kept + frames_dropped;\n" \
"UPDATE threads SET frames = 0;\n" \
"UPDATE threads SET frames = c.n FROM (SELECT run, thread, count(*) AS n FROM frames GROUP BY run, thread) AS c\n" \
"  WHERE threads.run = c.run AND threads.thread = c.thread;\n"

/* From version 5 to 6: a run names the allocator piano did not see, if any
 * (runs stored before: NULL, not known). */
#define PIANO_SCHEMA_MIGRATE_5 \
"ALTER TABLE runs ADD COLUMN allocator TEXT;\n"

/* From version 6 to 7: the queue of profiles piano-db push could not send. */
#define PIANO_SCHEMA_MIGRATE_6 PIANO_SCHEMA_PUSHES

/* From version 7 to 8: names once per database (issue 15: 575 short runs of
 * one program stored their names 575 times). */
#define PIANO_SCHEMA_MIGRATE_7 \
"ALTER TABLE functions RENAME TO functions_v7;\n" \
PIANO_SCHEMA_FUNCTIONS \
"INSERT OR IGNORE INTO names(name, file, line) SELECT name, file, line FROM functions_v7;\n" \
"INSERT INTO run_functions(run, id, name) SELECT f.run, f.id, n.id FROM functions_v7 f\n" \
"  JOIN names n ON n.name = f.name AND n.file = f.file AND n.line = f.line;\n" \
"DROP TABLE functions_v7;\n"

/* From version 8 to 9: CPU time (issue 12). Runs stored before did not
 * measure it: NULL. */
#define PIANO_SCHEMA_CPU_ADD(table) \
"ALTER TABLE " table " ADD COLUMN cpu_ns INTEGER;\n" \
"ALTER TABLE " table " ADD COLUMN cpu_total_ns INTEGER;\n" \
"ALTER TABLE " table " ADD COLUMN cpu_user_ns INTEGER;\n" \
"ALTER TABLE " table " ADD COLUMN cpu_sys_ns INTEGER;\n" \
"ALTER TABLE " table " ADD COLUMN offcpu_ns INTEGER;\n"
#define PIANO_SCHEMA_MIGRATE_8 \
"ALTER TABLE runs ADD COLUMN cpu_mode TEXT;\n" \
PIANO_SCHEMA_CPU_ADD("stats") \
PIANO_SCHEMA_CPU_ADD("contexts") \
"ALTER TABLE frames ADD COLUMN cpu_ns INTEGER;\n"

/* From version 9 to 10: snapshots over time (PIANO_INTERVAL). */
#define PIANO_SCHEMA_MIGRATE_9 PIANO_SCHEMA_SNAPSHOTS

/* From version 10 to 11: heap in use (runs stored before: NULL, not tracked). */
#define PIANO_SCHEMA_MIGRATE_10 \
"ALTER TABLE runs ADD COLUMN heap_peak_bytes INTEGER;\n" \
"ALTER TABLE stats ADD COLUMN inuse_objects INTEGER;\n" \
"ALTER TABLE stats ADD COLUMN inuse_bytes INTEGER;\n" \
"ALTER TABLE stats ADD COLUMN peak_inuse_bytes INTEGER;\n" \
"ALTER TABLE contexts ADD COLUMN inuse_objects INTEGER;\n" \
"ALTER TABLE contexts ADD COLUMN inuse_bytes INTEGER;\n" \
"ALTER TABLE contexts ADD COLUMN peak_inuse_bytes INTEGER;\n"

/* From version 11 to 12: spans. */
#define PIANO_SCHEMA_MIGRATE_11 PIANO_SCHEMA_SPANS

/* From version 12 to 13: the run-time selection (runs stored before: NULL). */
#define PIANO_SCHEMA_MIGRATE_12 \
"ALTER TABLE runs ADD COLUMN selection TEXT;\n"

/* From version 13 to 14: spans in snapshots. Idempotent (IF NOT EXISTS): run
 * for every older version, as versions past 13 may be metrics' too. */
#define PIANO_SCHEMA_MIGRATE_13 PIANO_SCHEMA_SPAN_SNAPSHOTS

/* To version 15: tag_runs, which piano-db made on the first tag of several
 * runs before: a database that has it keeps it and its tags. */
#define PIANO_SCHEMA_TAG_RUNS_SINCE 15
#define PIANO_SCHEMA_MIGRATE_TAG_RUNS PIANO_SCHEMA_TAG_RUNS

/* From version 15 to 16: compact histogram blobs (spool/hist.h). Nothing is
 * rewritten: blobs of the fixed format stay and are read as they are; the
 * version keeps older tools, which cannot read the new blobs, out. */

/* To version 17: contexts in blobs. The table contexts becomes
 * context_rows, its rows kept as they are (read through the view contexts,
 * which store.c makes after the metrics' columns are added). Run when the
 * database has no context_trees. */
#define PIANO_SCHEMA_MIGRATE_CONTEXT_TREES \
"ALTER TABLE contexts RENAME TO context_rows;\n" \
PIANO_SCHEMA_CONTEXT_TREES

/* To version 18: stats in blobs. The table stats becomes stat_rows, its rows
 * kept as they are (read through the view stats, which store.c makes after
 * the metrics' columns are added). Run when the database has no stat_trees. */
#define PIANO_SCHEMA_MIGRATE_STAT_TREES \
"ALTER TABLE stats RENAME TO stat_rows;\n" \
PIANO_SCHEMA_STAT_TREES

/* To version 19: the plain-SQL views contexts and stats of schemas 17 and 18
 * (recursive queries decoding the blobs, with INSTEAD OF triggers) go: every
 * connection parsed them at its first statement, 5.7M instructions of a short
 * run's exit (bench/README.md, issue 23). SQL reaches the blobs through
 * `piano-db sql` (doc/piano-db.md). Dropping a view drops its triggers. Run
 * after the renames above (no table is named contexts or stats then). */
#define PIANO_SCHEMA_MIGRATE_VIEWS \
"DROP VIEW IF EXISTS contexts;\n" \
"DROP VIEW IF EXISTS stats;\n" \
PIANO_SCHEMA_MIGRATE_FUNCTIONS

/* To version 24: frames in blocks. The table frames becomes frame_rows (with
 * its index frames_spikes), whose rows store.c then moves into blocks, those a
 * block holds as they are (piano_frames_pack: every row the import wrote);
 * the others stay rows, read through the view frames. Run when the database
 * has no frame_blocks. */
#define PIANO_SCHEMA_MIGRATE_FRAME_BLOCKS \
"ALTER TABLE frames RENAME TO frame_rows;\n" \
PIANO_SCHEMA_FRAME_BLOCKS

/* To version 21: a run's functions in a blob (fn_lists). The stored view
 * functions of schemas 8-20 and its trigger go (piano-db makes them TEMP:
 * functions_blob.c); run_functions keeps its rows, read as they are. */
#define PIANO_SCHEMA_MIGRATE_FUNCTIONS \
"DROP VIEW IF EXISTS functions;\n" \
PIANO_SCHEMA_FN_LISTS

#endif
