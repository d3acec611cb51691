#!/bin/sh
# cli_test.sh SECTION PIANO_DB MAKE_FIXTURE WORKDIR
# Runs piano-db against fixture databases with known figures and compares its
# output exactly. Sections: report frames runs tags diff errors big huge snapshots sql.
set -u
SECTION=$1 P=$2 FX=$3 W=$4
export TZ=UTC NO_COLOR=1 LC_ALL=C
unset PIANO_DB
rm -rf "$W" && mkdir -p "$W" || exit 1
FAILS=0

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# expect NAME CMD... : stdout of CMD must equal stdin, exit status 0.
expect() {
    name=$1; shift
    cat > "$W/expected"
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    if [ $rc -ne 0 ]; then fail "$name: exit $rc: $(cat "$W/err")"; return; fi
    if ! cmp -s "$W/expected" "$W/out"; then
        fail "$name: output differs"
        diff -u "$W/expected" "$W/out"
    fi
}

# expect_rc NAME RC CMD... : exit status RC; stdout must equal stdin.
expect_rc() {
    name=$1 want=$2; shift 2
    cat > "$W/expected"
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    [ $rc -eq "$want" ] || fail "$name: exit $rc, wanted $want"
    if ! cmp -s "$W/expected" "$W/out"; then
        fail "$name: output differs"
        diff -u "$W/expected" "$W/out"
    fi
}

# error NAME 'MESSAGE' CMD... : non-zero exit, nothing on stdout, one stderr line 'piano-db: MESSAGE'.
error() {
    name=$1 msg=$2; shift 2
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    [ $rc -ne 0 ] || fail "$name: exit 0"
    [ -s "$W/out" ] && fail "$name: wrote to stdout: $(head -c 200 "$W/out")"
    [ "$(wc -l < "$W/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$W/err")"
    [ "$(cat "$W/err")" = "piano-db: $msg" ] || fail "$name: stderr '$(cat "$W/err")', wanted 'piano-db: $msg'"
}

B=$W/basic.db
"$FX" basic "$B" || exit 1

case $SECTION in
report)
expect report_default "$P" report --db "$B" <<'EOF'
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
resolve                47   141.13ms     3.00ms     3.00ms      329     24.1KB
parse_item            108    94.58ms   798.72us     1.20ms     1620    126.3KB
main                    1   499.41us   501.17us   501.17us        3       300B
parse                  12    18.96us   950.00ns     4.93us        6      2.1KB
helper (a.c:3)        100     3.00us    30.00ns    30.00ns        0         0B
helper (b.c:7)         50     0.00ns     0.00ns     0.00ns        0         0B

5 frames
2 calls unfinished (run ended inside them)
recovered run: the process died and its figures were imported afterwards
run 2 (app), the latest, was forked from run 1 (app --fast): piano-db report 1 shows that one
EOF
# parse: ids 1 and 6 merged (10 calls at 1000 ticks + 2 at 5000, 108 child calls);
# self 20040 - 108 * 10 = 18960; a call is shifted by 10 ns * 108/12 = 90 ns but keeps at least
# 18960/20040 of its time: p50 = max(1004 - 90, 1004 * 0.946) = 950, p99 = max(5024 - 90, 4753) = 4934.
# helper (b.c): 200 child calls cost more than its self time: clamped at 0.
expect report_json "$P" report --db "$B" --json <<'EOF'
[
  {"function": "resolve", "file": "resolve.c", "line": 5, "calls": 47, "self_ns": 141130000, "total_ns": 150000000, "p50_ns": 2998272, "p99_ns": 2998272, "p50_total_ns": 3096576, "p99_total_ns": 3096576, "allocs": 329, "alloc_bytes": 24678, "frees": 329, "free_bytes": 24678, "cpu_ns": 70565000, "cpu_total_ns": 75000000, "cpu_user_ns": 65625000, "cpu_sys_ns": 9375000, "offcpu_ns": 75000000, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0},
  {"function": "parse_item", "file": "parse.c", "line": 40, "calls": 108, "self_ns": 94580000, "total_ns": 94580000, "p50_ns": 798720, "p99_ns": 1204224, "p50_total_ns": 798720, "p99_total_ns": 1204224, "allocs": 1620, "alloc_bytes": 129331, "frees": 1600, "free_bytes": 120000, "cpu_ns": null, "cpu_total_ns": null, "cpu_user_ns": null, "cpu_sys_ns": null, "offcpu_ns": null, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0},
  {"function": "main", "file": "main.c", "line": 10, "calls": 1, "self_ns": 499410, "total_ns": 250000000, "p50_ns": 501170, "p99_ns": 501170, "p50_total_ns": 250609664, "p99_total_ns": 250609664, "allocs": 3, "alloc_bytes": 300, "frees": 3, "free_bytes": 300, "cpu_ns": 249410, "cpu_total_ns": 125000000, "cpu_user_ns": 109375000, "cpu_sys_ns": 15625000, "offcpu_ns": 125000000, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0},
  {"function": "parse", "file": "parse.c", "line": 20, "calls": 12, "self_ns": 18960, "total_ns": 32000, "p50_ns": 950, "p99_ns": 4934, "p50_total_ns": 2008, "p99_total_ns": 5984, "allocs": 6, "alloc_bytes": 2148, "frees": 6, "free_bytes": 2148, "cpu_ns": null, "cpu_total_ns": null, "cpu_user_ns": null, "cpu_sys_ns": null, "offcpu_ns": null, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0},
  {"function": "helper", "file": "a.c", "line": 3, "calls": 100, "self_ns": 3000, "total_ns": 3000, "p50_ns": 30, "p99_ns": 30, "p50_total_ns": 30, "p99_total_ns": 30, "allocs": 0, "alloc_bytes": 0, "frees": 0, "free_bytes": 0, "cpu_ns": 1500, "cpu_total_ns": 1500, "cpu_user_ns": 1313, "cpu_sys_ns": 187, "offcpu_ns": 1500, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0},
  {"function": "helper", "file": "b.c", "line": 7, "calls": 50, "self_ns": 0, "total_ns": 1000, "p50_ns": 0, "p99_ns": 0, "p50_total_ns": 20, "p99_total_ns": 20, "allocs": 0, "alloc_bytes": 0, "frees": 0, "free_bytes": 0, "cpu_ns": 0, "cpu_total_ns": 500, "cpu_user_ns": 438, "cpu_sys_ns": 62, "offcpu_ns": 500, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0}
]
EOF
# --cpu: CPU (self, corrected as Self is), User and Sys (split of the inclusive CPU), Off-CPU;
# parse and parse_item have a row on thread 1, which measured none: '-'
expect report_cpu "$P" report --db "$B" --cpu --sort cpu --top 3 <<'EOF'
Function            Calls       Self        p50        p99   Allocs      Bytes        CPU       User        Sys    Off-CPU
--------------------------------------------------------------------------------------------------------------------------
resolve                47   141.13ms     3.00ms     3.00ms      329     24.1KB    70.56ms    65.62ms     9.38ms    75.00ms
main                    1   499.41us   501.17us   501.17us        3       300B   249.41us   109.38ms    15.62ms   125.00ms
helper (a.c:3)        100     3.00us    30.00ns    30.00ns        0         0B     1.50us     1.31us   187.00ns     1.50us
(3 more functions hidden: --top N or --all shows them)

5 frames
2 calls unfinished (run ended inside them)
recovered run: the process died and its figures were imported afterwards
run 2 (app), the latest, was forked from run 1 (app --fast): piano-db report 1 shows that one
EOF
expect report_uncorrected_csv "$P" report --db "$B" --csv --uncorrected --sort p99 --top 2 <<'EOF'
function,file,line,calls,self_ns,total_ns,p50_ns,p99_ns,p50_total_ns,p99_total_ns,allocs,alloc_bytes,frees,free_bytes,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,inuse_bytes,peak_inuse_bytes,unfinished
resolve,resolve.c,5,47,141130000,150000000,2998272,2998272,3096576,3096576,329,24678,329,24678,70565000,75000000,65625000,9375000,75000000,,,,0
parse_item,parse.c,40,108,94580000,94580000,798720,1204224,798720,1204224,1620,129331,1600,120000,,,,,,,,,0
EOF
expect report_top_sort "$P" report --db "$B" --top 3 --sort calls <<'EOF'
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
parse_item            108    94.58ms   798.72us     1.20ms     1620    126.3KB
helper (a.c:3)        100     3.00us    30.00ns    30.00ns        0         0B
helper (b.c:7)         50     0.00ns     0.00ns     0.00ns        0         0B
(3 more functions hidden: --top N or --all shows them)

5 frames
2 calls unfinished (run ended inside them)
recovered run: the process died and its figures were imported afterwards
run 2 (app), the latest, was forked from run 1 (app --fast): piano-db report 1 shows that one
EOF
# run 1 by id, by key; ticks of 0.5 ns; no overhead.
expect report_run1 "$P" report --db "$B" 1000-1700000000000000000 <<'EOF'
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
parse                  12   341.21ms    28.18ms    28.18ms      840     62.5KB
resolve                47   141.13ms     2.97ms     2.97ms      329     24.1KB
helper                100     3.00us    30.00ns    30.00ns        0         0B
old_fn                  3   900.00ns   302.00ns   302.00ns        1        10B

0 frames
EOF
"$P" report --db "$B" 1 > "$W/by_id" && "$P" report --db "$B" 1000-1700000000000000000 > "$W/by_key" &&
    cmp -s "$W/by_id" "$W/by_key" || fail "report by id and by key differ"
expect report_threads "$P" report --db "$B" --threads --sort self <<'EOF'
Thread 0 (tid 1001, main)
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
resolve                47   141.13ms     3.00ms     3.00ms      329     24.1KB
main                    1   499.41us   501.17us   501.17us        3       300B
parse                  10     9.04us   904.00ns   904.00ns        5      2.0KB
helper (a.c:3)        100     3.00us    30.00ns    30.00ns        0         0B
helper (b.c:7)         50     0.00ns     0.00ns     0.00ns        0         0B
4 frames

Thread 1 (tid 1005, worker "w")
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
parse_item            108    94.58ms   798.72us     1.20ms     1620    126.3KB
parse                   2     9.92us     4.98us     4.98us        1       100B
1 frames

5 frames
2 calls unfinished (run ended inside them)
recovered run: the process died and its figures were imported afterwards
run 2 (app), the latest, was forked from run 1 (app --fast): piano-db report 1 shows that one
EOF
expect report_threads_json "$P" report --db "$B" --threads --json --thread 1 <<'EOF'
[
  {"thread": 1, "tid": 1005, "name": "worker \"w\"", "functions": [
    {"function": "parse_item", "file": "parse.c", "line": 40, "calls": 108, "self_ns": 94580000, "total_ns": 94580000, "p50_ns": 798720, "p99_ns": 1204224, "p50_total_ns": 798720, "p99_total_ns": 1204224, "allocs": 1620, "alloc_bytes": 129331, "frees": 1600, "free_bytes": 120000, "cpu_ns": null, "cpu_total_ns": null, "cpu_user_ns": null, "cpu_sys_ns": null, "offcpu_ns": null, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0},
    {"function": "parse", "file": "parse.c", "line": 20, "calls": 2, "self_ns": 9920, "total_ns": 12000, "p50_ns": 4984, "p99_ns": 4984, "p50_total_ns": 5984, "p99_total_ns": 5984, "allocs": 1, "alloc_bytes": 100, "frees": 1, "free_bytes": 100, "cpu_ns": null, "cpu_total_ns": null, "cpu_user_ns": null, "cpu_sys_ns": null, "offcpu_ns": null, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": 0}
  ]}
]
EOF
# No colour codes in a pipe, even with NO_COLOR unset.
env -u NO_COLOR "$P" report --db "$B" | grep -q "$(printf '\033')" && fail "colour in a pipe"
"$P" report --help | grep -q 'max(0, self - child_calls \* overhead)' || fail "report --help lacks the correction"
;;

frames)
expect frames_table "$P" report --db "$B" --frames <<'EOF'
Frame    Thread      Total      parse    resolve  parse_item   Allocs      Bytes
--------------------------------------------------------------------------------
1             0    48.12ms    28.11ms     2.98ms    870.00us       93     21.3KB
2             0    49.01ms    28.50ms     3.01ms    910.00us       95     21.8KB
3             0    47.88ms    27.94ms     2.95ms    850.00us       91     20.9KB
4             0   102.33ms    71.22ms     3.10ms      1.05ms      210     48.7KB  <<
5             1    48.55ms    28.30ms          -    890.00us       94     21.5KB

5 frames | 1 spikes (>2x median)
EOF
expect frames_spikes_thread "$P" report --db "$B" --frames --spikes --thread 0 <<'EOF'
Frame        Total      parse    resolve  parse_item   Allocs      Bytes
------------------------------------------------------------------------
4         102.33ms    71.22ms     3.10ms      1.05ms      210     48.7KB  <<

4 frames | 1 spikes (>2x median)
EOF
expect frames_top "$P" report --db "$B" --frames --top 2 --thread 0 <<'EOF'
Frame        Total      parse    resolve  parse_item   Allocs      Bytes
------------------------------------------------------------------------
1          48.12ms    28.11ms     2.98ms    870.00us       93     21.3KB
2          49.01ms    28.50ms     3.01ms    910.00us       95     21.8KB
4         102.33ms    71.22ms     3.10ms      1.05ms      210     48.7KB  <<
(1 more frame hidden: --all shows them)

4 frames | 1 spikes (>2x median)
EOF
# Frame 5 holds ids 6 and 1, both parse.c:20: one key, summed.
expect frames_cpu "$P" report --db "$B" --frames --cpu --thread 0 --top 2 <<'EOF'
Frame        Total        CPU      parse    resolve  parse_item   Allocs      Bytes
-----------------------------------------------------------------------------------
1          48.12ms    24.06ms    28.11ms     2.98ms    870.00us       93     21.3KB
2          49.01ms    24.50ms    28.50ms     3.01ms    910.00us       95     21.8KB
4         102.33ms    51.16ms    71.22ms     3.10ms      1.05ms      210     48.7KB  <<
(1 more frame hidden: --all shows them)

4 frames | 1 spikes (>2x median)
EOF
expect frames_json "$P" report --db "$B" --frames --json <<'EOF'
[
  {"frame": 1, "thread": 0, "start_ns": 1000, "total_ns": 48120000, "cpu_ns": 24060000, "allocs": 93, "alloc_bytes": 21811, "functions": {"parse": 28110000, "resolve": 2980000, "parse_item": 870000}, "spike": false},
  {"frame": 2, "thread": 0, "start_ns": 50000000, "total_ns": 49010000, "cpu_ns": 24505000, "allocs": 95, "alloc_bytes": 22323, "functions": {"parse": 28500000, "resolve": 3010000, "parse_item": 910000}, "spike": false},
  {"frame": 3, "thread": 0, "start_ns": 100000000, "total_ns": 47880000, "cpu_ns": 23940000, "allocs": 91, "alloc_bytes": 21401, "functions": {"parse": 27940000, "resolve": 2950000, "parse_item": 850000}, "spike": false},
  {"frame": 4, "thread": 0, "start_ns": 150000000, "total_ns": 102330000, "cpu_ns": 51165000, "allocs": 210, "alloc_bytes": 49868, "functions": {"parse": 71220000, "resolve": 3100000, "parse_item": 1050000}, "spike": true},
  {"frame": 5, "thread": 1, "start_ns": 260000000, "total_ns": 48550000, "cpu_ns": null, "allocs": 94, "alloc_bytes": 22016, "functions": {"parse": 28300000, "parse_item": 890000}, "spike": false}
]
EOF
expect frames_empty_run "$P" report --db "$B" --frames 1 <<'EOF'
Frame        Total   Allocs      Bytes
--------------------------------------

0 frames | 0 spikes (>2x median)
EOF
;;

runs)
expect runs_table "$P" runs --db "$B" <<'EOF'
Run    Tags   PID  Parent  Command                 Started  Duration  Status     Frames
---------------------------------------------------------------------------------------
2      -     1001       1  app         2023-11-14 22:15:00     1.20s  recovered       5
1      -     1000       -  app --fast  2023-11-14 22:13:20     2.50s  complete        0
EOF
expect runs_json "$P" runs --db "$B" --json <<'EOF'
[
  {"run": 2, "tags": [], "pid": 1001, "parent": 1, "command": "./app", "started": 1700000100000000000, "duration_ns": 1200000000, "status": "recovered", "frames": 5, "heap_peak_bytes": null, "selection": null},
  {"run": 1, "tags": [], "pid": 1000, "parent": null, "command": "./app --fast", "started": 1700000000000000000, "duration_ns": 2500000000, "status": "complete", "frames": 0, "heap_peak_bytes": null, "selection": null}
]
EOF
expect rm_one "$P" rm --db "$B" 2 <<'EOF'
removed run 2
EOF
expect runs_after_rm "$P" runs --db "$B" --json <<'EOF'
[
  {"run": 1, "tags": [], "pid": 1000, "parent": null, "command": "./app --fast", "started": 1700000000000000000, "duration_ns": 2500000000, "status": "complete", "frames": 0, "heap_peak_bytes": null, "selection": null}
]
EOF
;;

tags)
Q="it's \"q\" ✓; DROP TABLE runs; --"
expect tag_latest "$P" tag --db "$B" "$Q" <<'EOF'
tagged 'it's "q" ✓; DROP TABLE runs; --' -> 2
EOF
expect tag_run1 "$P" tag --db "$B" "base line" 1 <<'EOF'
tagged 'base line' -> 1
EOF
expect tag_dash "$P" tag --db "$B" -- -x 1 <<'EOF'
tagged '-x' -> 1
EOF
expect tag_list_json "$P" tag --db "$B" --json <<'EOF'
[
  {"tag": "-x", "run": 1},
  {"tag": "base line", "run": 1},
  {"tag": "it's \"q\" ✓; DROP TABLE runs; --", "run": 2}
]
EOF
expect tag_list "$P" tag --db "$B" <<'EOF'
Tag                              Run              Started  Command
-----------------------------------------------------------------------
-x                                 1  2023-11-14 22:13:20  ./app --fast
base line                          1  2023-11-14 22:13:20  ./app --fast
it's "q" ✓; DROP TABLE runs; --    2  2023-11-14 22:15:00  ./app
EOF
"$P" report --db "$B" "$Q" --json > "$W/by_tag" && "$P" report --db "$B" 2 --json > "$W/by_id" &&
    cmp -s "$W/by_tag" "$W/by_id" || fail "report by tag differs from report by id"
expect tag_move "$P" tag --db "$B" "base line" 2 <<'EOF'
tagged 'base line' -> 2
EOF
expect runs_tags "$P" runs --db "$B" --json <<'EOF'
[
  {"run": 2, "tags": ["base line", "it's \"q\" ✓; DROP TABLE runs; --"], "pid": 1001, "parent": 1, "command": "./app", "started": 1700000100000000000, "duration_ns": 1200000000, "status": "recovered", "frames": 5, "heap_peak_bytes": null, "selection": null},
  {"run": 1, "tags": ["-x"], "pid": 1000, "parent": null, "command": "./app --fast", "started": 1700000000000000000, "duration_ns": 2500000000, "status": "complete", "frames": 0, "heap_peak_bytes": null, "selection": null}
]
EOF
expect untag "$P" untag --db "$B" "$Q" <<'EOF'
untagged 'it's "q" ✓; DROP TABLE runs; --'
EOF
error untag_again "no tag 'it's \"q\" ✓; DROP TABLE runs; --' in $B" "$P" untag --db "$B" "$Q"
error report_untagged "no run or tag 'it's \"q\" ✓; DROP TABLE runs; --' in $B" "$P" report --db "$B" "$Q"
# gc keeps the newest run and tagged ones: tag run 1, keep 1 -> nothing removed.
expect gc_keeps_tagged "$P" gc --db "$B" --keep 1 <<'EOF'
removed 0 runs
EOF
"$P" untag --db "$B" -- -x > /dev/null || fail "untag -x"
expect gc_removes "$P" gc --db "$B" --keep 1 <<'EOF'
removed 1 run
EOF
[ "$("$P" runs --db "$B" --json | grep -c '"run"')" -eq 1 ] || fail "gc left the wrong runs"
;;

diff)
expect diff_default "$P" diff --db "$B" <<'EOF'
Function                 Before      After      Delta  C.Delta      p50   Per call   Allocs  A.Delta
----------------------------------------------------------------------------------------------------
parse                  341.21ms    18.96us  -341.19ms       +0  -100.0%     faster        6     -834
parse_item                    -    94.58ms   +94.58ms     +108        -    (added)     1620    +1620
main                          -   499.41us  +499.41us       +1        -    (added)        3       +3
old_fn                 900.00ns          -  -900.00ns       -3        -  (removed)        -       -1
helper (a.c)             3.00us     3.00us    +0.00ns       +0    +0.0%          -        0       +0
helper (b.c)                  -     0.00ns    +0.00ns      +50        -    (added)        0       +0
resolve                141.13ms   141.13ms    +0.00ns       +0    +1.1%          -      329       +0

before: run 1, after: run 2
Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:
change of one call's self time (median; significance test, see diff --help)
EOF
# --cpu: the change of the total self CPU time ('-' where a side did not measure it)
expect diff_cpu "$P" diff --db "$B" --cpu 1 2 <<'EOF'
Function                 Before      After      Delta  C.Delta      p50   Per call   Allocs  A.Delta  CPU.Delta
---------------------------------------------------------------------------------------------------------------
parse                  341.21ms    18.96us  -341.19ms       +0  -100.0%     faster        6     -834          -
parse_item                    -    94.58ms   +94.58ms     +108        -    (added)     1620    +1620          -
main                          -   499.41us  +499.41us       +1        -    (added)        3       +3  +249.41us
old_fn                 900.00ns          -  -900.00ns       -3        -  (removed)        -       -1          -
helper (a.c)             3.00us     3.00us    +0.00ns       +0    +0.0%          -        0       +0          -
helper (b.c)                  -     0.00ns    +0.00ns      +50        -    (added)        0       +0    +0.00ns
resolve                141.13ms   141.13ms    +0.00ns       +0    +1.1%          -      329       +0          -

before: run 1, after: run 2
Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:
change of one call's self time (median; significance test, see diff --help)
EOF
"$P" diff --db "$B" --json 1 2 > "$W/dj" || fail "diff --json"
grep -q '"function": "old_fn", "file": "old.c", "calls_a": 3, "calls_b": 0, "self_ns_a": 900, "self_ns_b": 0, "delta_ns": -900, "delta_pct": -100.00, "allocs_a": 1, "allocs_b": 0, "alloc_bytes_a": 10, "alloc_bytes_b": 0, "cpu_ns_a": null, "cpu_ns_b": null, "inuse_bytes_a": null, "inuse_bytes_b": null, "change": "removed"' "$W/dj" ||
    fail "diff json: old_fn removed"
grep -q '"function": "main", "file": "main.c", "calls_a": 0, "calls_b": 1, "self_ns_a": 0, "self_ns_b": 499410, "delta_ns": 499410, "delta_pct": null,' "$W/dj" ||
    fail "diff json: main added"
grep -q '"function": "main", .*"alloc_bytes_b": 300, "cpu_ns_a": null, "cpu_ns_b": 249410, "inuse_bytes_a": null, "inuse_bytes_b": null, "change": "added"' "$W/dj" ||
    fail "diff json: main's CPU"

S=$W/sig.db
"$FX" sig "$S" || exit 1
# 'slower': work drawn from a log-normal with a 10% higher median; steady unchanged.
expect diff_slower "$P" diff --db "$S" base slower <<'EOF'
Function                 Before      After      Delta  C.Delta      p50   Per call   Allocs  A.Delta
----------------------------------------------------------------------------------------------------
work                   209.21ms   230.13ms   +20.92ms       +0   +10.3%     slower        0       +0
steady                 104.60ms   104.60ms    +0.00ns       +0    +0.0%          -        0       +0

before: run 1, after: run 2
Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:
change of one call's self time (median; significance test, see diff --help)
EOF
# 'same': fresh draws from the same distributions: nothing significant.
"$P" diff --db "$S" base same --json > "$W/same" || fail "diff same"
grep -q '"significant": true' "$W/same" && fail "same distribution flagged: $(cat "$W/same")"
[ "$(grep -c '"change": "same"' "$W/same")" -eq 2 ] || fail "same distribution: $(cat "$W/same")"
"$P" diff --db "$S" slower base --json | grep -q '"function": "work".*"change": "faster", "significant": true' ||
    fail "reverse diff not faster"
expect_rc fail_above_trips 3 "$P" diff --db "$S" base slower --fail-above 5 --json <<'EOF'
[
  {"function": "work", "file": "work.c", "calls_a": 20000, "calls_b": 20000, "self_ns_a": 209205571, "self_ns_b": 230126129, "delta_ns": 20920558, "delta_pct": 10.00, "allocs_a": 0, "allocs_b": 0, "alloc_bytes_a": 0, "alloc_bytes_b": 0, "cpu_ns_a": null, "cpu_ns_b": null, "inuse_bytes_a": null, "inuse_bytes_b": null, "change": "slower", "significant": true, "p_value": 6.09e-213, "median_a_ns": 9920, "median_b_ns": 10944},
  {"function": "steady", "file": "work.c", "calls_a": 20000, "calls_b": 20000, "self_ns_a": 104602785, "self_ns_b": 104602785, "delta_ns": 0, "delta_pct": 0.00, "allocs_a": 0, "allocs_b": 0, "alloc_bytes_a": 0, "alloc_bytes_b": 0, "cpu_ns_a": null, "cpu_ns_b": null, "inuse_bytes_a": null, "inuse_bytes_b": null, "change": "same", "significant": false, "p_value": 0.986, "median_a_ns": 5024, "median_b_ns": 5024}
]
EOF
[ "$(cat "$W/err")" = "piano-db: 1 function significantly slower by more than 5%: work (median +10.3%)" ] ||
    fail "fail-above message: $(cat "$W/err")"
"$P" diff --db "$S" base slower --fail-above 20 > /dev/null; [ $? -eq 0 ] || fail "fail-above 20 tripped"
"$P" diff --db "$S" base same --fail-above 0 > /dev/null; [ $? -eq 0 ] || fail "fail-above on noise tripped"
"$P" diff --db "$S" slower base --fail-above 0 > /dev/null; [ $? -eq 0 ] || fail "fail-above on a speedup tripped"
;;

errors)
"$FX" junk "$W/junk.db" && "$FX" foreign "$W/foreign.db" && "$FX" v99 "$W/v99.db" && "$FX" empty "$W/empty.db" || exit 1
cp "$W/junk.db" "$W/junk.copy"
# this piano's schema version: the one of a database it made (the fixture tool creates with store/)
SCHEMA=$(sqlite3 "$W/empty.db" 'PRAGMA user_version')
for cmd in report runs tag diff; do
    error "$cmd: missing db" "no database at $W/nope.db" "$P" $cmd --db "$W/nope.db"
    error "$cmd: random bytes" "$W/junk.db is not a piano database (file is not a database)" "$P" $cmd --db "$W/junk.db"
    error "$cmd: foreign sqlite" "$W/foreign.db is not a piano database" "$P" $cmd --db "$W/foreign.db"
    error "$cmd: newer schema" "$W/v99.db has schema version 99, newer than this piano's $SCHEMA: upgrade piano" "$P" $cmd --db "$W/v99.db"
done
cmp -s "$W/junk.db" "$W/junk.copy" || fail "the random file was modified"
[ -e "$W/nope.db" ] && fail "a missing database was created"
error empty_report "no runs stored in $W/empty.db yet" "$P" report --db "$W/empty.db"
error empty_diff "diff needs two runs; $W/empty.db holds none" "$P" diff --db "$W/empty.db"
error unknown_run "no run or tag '77' in $B" "$P" report --db "$B" 77
error unknown_tag "no run or tag 'nosuch' in $B" "$P" diff --db "$B" 1 nosuch
error rm_unknown "no run or tag '9' in $B" "$P" rm --db "$B" 1 9
[ "$("$P" runs --db "$B" --json | grep -c '"run"')" -eq 2 ] || fail "rm with an unknown run removed something"
error bad_option "report: unknown option '--bogus' (piano-db report --help)" "$P" report --db "$B" --bogus
error bad_top "report: --top wants a number >= 0, not 'x'" "$P" report --db "$B" --top x
error bad_sort "report: unknown sort key 'foo' (self|total|calls|p50|p99|allocs|bytes|cpu|offcpu|inuse|peak)" "$P" report --db "$B" --sort foo
error bad_command "unknown command 'frobnicate' (piano-db --help lists them)" "$P" frobnicate
error no_command "missing command (piano-db --help lists them)" "$P"
error gc_no_keep "gc: --keep N is required" "$P" gc --db "$B"
error folder "$W is a folder, not a database file" "$P" report --db "$W"
# A frame whose fns blob ends inside a varint: one line, not a crash or a guess.
cp "$B" "$W/badblob.db"
"$P" sql --db "$W/badblob.db" "UPDATE frames SET fns = x'0780' WHERE seq = 2" || fail "corrupting a blob"
[ "$(sqlite3 "$W/badblob.db" "SELECT count(*) FROM frame_rows")" = 5 ] || fail "the update moved the block to frame_rows"
error bad_fns_blob "frame 2: malformed fns blob in $W/badblob.db" "$P" report --db "$W/badblob.db" --frames
# export streams: what it wrote before frame 2 stays on stdout, then the one line.
"$P" export --db "$W/badblob.db" --format chrome > "$W/out" 2> "$W/err" && fail "bad_fns_blob_export: exit 0"
[ "$(cat "$W/err")" = "piano-db: frame 2: malformed fns blob in $W/badblob.db" ] ||
    fail "bad_fns_blob_export: stderr '$(cat "$W/err")'"
# A block of frames cut short (frame_blocks.frames, store/frames_blob.h): one line, for every reader
# (run 2 has no frame histogram: its median comes from the view frames, which reads the block first).
cp "$B" "$W/badblock.db"
sqlite3 "$W/badblock.db" "UPDATE frame_blocks SET frames = substr(frames, 1, 40)" || fail "cutting a block"
error bad_frame_block "$W/badblock.db: a block of frames (frame_blocks.frames) is malformed" "$P" report --db "$W/badblock.db" --frames
error bad_frame_block_plot "$W/badblock.db: a block of frames (frame_blocks.frames) is malformed" "$P" plot --db "$W/badblock.db" frames -o "$W/bad.svg"
error bad_frame_block_sql "sql: a block of frames (frame_blocks.frames) is malformed" "$P" sql --db "$W/badblock.db" "SELECT count(*) FROM frames"
error bad_frame_block_export "run 2: malformed block of frames (from frame 1) in $W/badblock.db" "$P" export --db "$W/badblock.db" --format chrome -o "$W/bad.json"
# A thread's stats or contexts blob cut short: one line naming the table, exit 1.
cp "$B" "$W/badstats.db"
sqlite3 "$W/badstats.db" "INSERT INTO stat_trees(run, thread, fns) VALUES(1, 7, x'0105')" || fail "corrupting a stats blob"
error bad_stats_blob "$W/badstats.db: a thread's stats (stat_trees.fns) are malformed" "$P" report --db "$W/badstats.db"
cp "$B" "$W/badctx.db"
sqlite3 "$W/badctx.db" "INSERT INTO context_trees(run, thread, nodes) VALUES(2, 7, x'05ffff')" || fail "corrupting a contexts blob"
error bad_ctx_blob "$W/badctx.db: a calling context tree (context_trees.nodes) is malformed" "$P" export --db "$W/badctx.db" --format folded
# PIANO_DB is the default database.
PIANO_DB=$B "$P" runs > /dev/null || fail "PIANO_DB not used"
# A database whose pages are damaged past the header.
"$FX" basic "$W/trunc.db" && head -c 3000 "$W/trunc.db" > "$W/t2.db" && mv "$W/t2.db" "$W/trunc.db"
"$P" report --db "$W/trunc.db" > "$W/out" 2> "$W/err"
rc=$?
[ $rc -ne 0 ] && { [ "$(wc -l < "$W/err")" -eq 1 ] && grep -q '^piano-db: ' "$W/err" || fail "truncated: $(cat "$W/err")"; }
;;

snapshots)
# Snapshots (PIANO_INTERVAL) and windows of a run: make_fixture snaps says the figures.
S=$W/snaps.db
"$FX" snaps "$S" || exit 1
expect snapshots_table "$P" snapshots --db "$S" 1 <<'EOF'
Time      Function            Calls       Self   Allocs      Bytes
------------------------------------------------------------------
1.000s    parse                  10   100.00ms        0         0B
1.000s    resolve                 5    50.00ms        2        64B
2.000s    parse                  30   300.00ms        0         0B

3 snapshots; figures are cumulative from the run's start; a function is listed at the snapshots in which its figures changed
EOF
expect snapshots_json "$P" snapshots --db "$S" 1 --json <<'EOF'
[
  {"t_ns": 1000000000, "functions": {"parse": {"calls": 10, "self_ns": 100000000, "allocs": 0, "alloc_bytes": 0}, "resolve": {"calls": 5, "self_ns": 50000000, "allocs": 2, "alloc_bytes": 64}}},
  {"t_ns": 2000000000, "functions": {"parse": {"calls": 30, "self_ns": 300000000, "allocs": 0, "alloc_bytes": 0}, "resolve": {"calls": 5, "self_ns": 50000000, "allocs": 2, "alloc_bytes": 64}}},
  {"t_ns": 2500000000, "functions": {"parse": {"calls": 30, "self_ns": 300000000, "allocs": 0, "alloc_bytes": 0}, "resolve": {"calls": 5, "self_ns": 50000000, "allocs": 2, "alloc_bytes": 64}}}
]
EOF
# A window's figures never go below 0: the run's end is stored with its final
# clock calibration, its snapshots with the live one (push --follow sent a
# negative CPU time once). parse's stored self time is made 1 ms below its
# last snapshot's.
cp "$S" "$W/neg.db"
"$P" --db "$W/neg.db" sql "UPDATE stats SET self_ns = 299000000 WHERE run = 1 AND fn = 2" || fail "making neg.db"
got=$("$P" report --db "$W/neg.db" 1 --from 2 --json --uncorrected | grep -o '"function": "parse", "file": "parse.c", "line": 20, "calls": [0-9]*, "self_ns": -\?[0-9]*')
[ "$got" = '"function": "parse", "file": "parse.c", "line": 20, "calls": 10, "self_ns": 0' ] || fail "window_never_negative: $got"
expect snapshots_none "$P" snapshots --db "$S" 2 <<'EOF'
run 2 has no snapshots (made without PIANO_INTERVAL=SECS, or it ended before its first: a forked child that ended with _exit)
EOF
expect snapshots_none_json "$P" snapshots --db "$S" 2 --json <<'EOF'
[]
EOF
# the span names per snapshot (span_snapshots): those that changed, cumulative
expect snapshots_spans "$P" snapshots --db "$S" 1 --spans <<'EOF'
Time      Span        Count       Wall       Busy       Idle
------------------------------------------------------------
1.000s    req             4   400.00ms    40.00ms   360.00ms
2.000s    req             6   700.00ms    60.00ms   640.00ms

3 snapshots; figures are cumulative from the run's start, of the spans closed by then; a span is listed at the snapshots in which its figures changed
EOF
expect snapshots_spans_json "$P" snapshots --db "$S" 1 --spans --json <<'EOF'
[
  {"t_ns": 1000000000, "spans": {"req": {"count": 4, "wall_ns": 400000000, "busy_ns": 40000000, "idle_ns": 360000000}}},
  {"t_ns": 2000000000, "spans": {"req": {"count": 6, "wall_ns": 700000000, "busy_ns": 60000000, "idle_ns": 640000000}}},
  {"t_ns": 2500000000, "spans": {"req": {"count": 6, "wall_ns": 700000000, "busy_ns": 60000000, "idle_ns": 640000000}}}
]
EOF
expect window_between "$P" report --db "$S" 1 --from 1 --to 2 <<'EOF'
run 1, window 1.000 s (snapshot) .. 2.000 s (snapshot)
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
parse                  20   200.00ms          -          -        0         0B

window: the difference of the two snapshots named above; p50/p99 are not kept per snapshot (-)
EOF
expect window_to_end "$P" report --db "$S" 1 --from 2 <<'EOF'
run 1, window 2.000 s (snapshot) .. 3.000 s (end of the run)
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
parse                  10   100.00ms          -          -        0         0B
resolve                 3    30.00ms          -          -        1        32B

window: the difference of the two snapshots named above; p50/p99 are not kept per snapshot (-)
EOF
# between snapshot times: the snapshots at or before them (2.5 s: nothing changed in it)
expect window_json "$P" report --db "$S" 1 --from 1.5 --to 2.7 --json <<'EOF'
[
  {"function": "parse", "file": "parse.c", "line": 20, "calls": 20, "self_ns": 200000000, "total_ns": null, "p50_ns": null, "p99_ns": null, "p50_total_ns": null, "p99_total_ns": null, "allocs": 0, "alloc_bytes": 0, "frees": null, "free_bytes": null, "cpu_ns": null, "cpu_total_ns": null, "cpu_user_ns": null, "cpu_sys_ns": null, "offcpu_ns": null, "inuse_objects": null, "inuse_bytes": null, "peak_inuse_bytes": null, "unfinished": null}
]
EOF
expect window_from_start "$P" report --db "$S" 1 --to 1.2 --csv <<'EOF'
function,file,line,calls,self_ns,total_ns,p50_ns,p99_ns,p50_total_ns,p99_total_ns,allocs,alloc_bytes,frees,free_bytes,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,inuse_bytes,peak_inuse_bytes,unfinished
parse,parse.c,20,10,100000000,,,,,,0,0,,,,,,,,,,,
resolve,resolve.c,5,5,50000000,,,,,,2,64,,,,,,,,,,,
EOF
expect diff_windows "$P" diff --db "$S" 1@..1 1@2.. <<'EOF'
Function                 Before      After      Delta  C.Delta      p50   Per call   Allocs  A.Delta
----------------------------------------------------------------------------------------------------
resolve                 50.00ms    30.00ms   -20.00ms       -2        -          -        1       -1
parse                  100.00ms   100.00ms    +0.00ns       +0        -          -        0       +0

before: run 1, window 0.000 s (start of the run) .. 1.000 s (snapshot), after: run 1, window 2.000 s (snapshot) .. 3.000 s (end of the run)
a window keeps no per-call times: its p50 and Per call are '-'
Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:
change of one call's self time (median; significance test, see diff --help)
EOF
# a window against a whole run: no significance test on the window's side
expect diff_window_run_json sh -c "'$P' diff --db '$S' 1@1..2 2 --json | jq -c '[.[] | [.function, .calls_a, .calls_b, .change]]'" <<'EOF'
[["parse",20,4,"untested"]]
EOF
# spans of a window (span_snapshots): the spans closed in it, exact differences
expect window_spans "$P" report --db "$S" 1 --spans --from 1 --to 2 <<'EOF'
run 1, window 1.000 s (snapshot) .. 2.000 s (snapshot)
Span        Count       Wall       Busy       Idle        p50        p99   p50 busy   p99 busy        CPU   Allocs      Bytes  Unfinished
-----------------------------------------------------------------------------------------------------------------------------------------
req             2   300.00ms    20.00ms   280.00ms          -          -          -          -          -        -          -           0

window: the spans closed in it (a span counts whole in the window of its close); p50/p99, CPU and allocations are not kept per snapshot (-)
EOF
expect window_spans_to_end "$P" report --db "$S" 1 --spans --from 2.2 <<'EOF'
run 1, window 2.000 s (snapshot) .. 3.000 s (end of the run)
Span        Count       Wall       Busy       Idle        p50        p99   p50 busy   p99 busy        CPU   Allocs      Bytes  Unfinished
-----------------------------------------------------------------------------------------------------------------------------------------
req             3   500.00ms    40.00ms   460.00ms          -          -          -          -          -        -          -           1
job             2   300.00ms    30.00ms   270.00ms          -          -          -          -          -        -          -           0

window: the spans closed in it (a span counts whole in the window of its close); unfinished: still open at the end, timed to it; p50/p99, CPU and allocations are not kept per snapshot (-)
EOF
expect window_spans_json "$P" report --db "$S" 1 --spans --to 1.5 --json <<'EOF'
[
  {"span": "req", "count": 4, "wall_ns": 400000000, "busy_ns": 40000000, "idle_ns": 360000000, "p50_ns": null, "p99_ns": null, "p50_busy_ns": null, "p99_busy_ns": null, "cpu_ns": null, "allocs": null, "alloc_bytes": null, "unfinished": 0}
]
EOF
expect window_spans_csv "$P" report --db "$S" 1 --spans --from 1 --csv <<'EOF'
span,count,wall_ns,busy_ns,idle_ns,p50_ns,p99_ns,p50_busy_ns,p99_busy_ns,cpu_ns,allocs,alloc_bytes,unfinished
req,5,800000000,60000000,740000000,,,,,,,,1
job,2,300000000,30000000,270000000,,,,,,,,0
EOF
expect window_spans_none "$P" report --db "$S" 1 --spans --from 2 --to 2.7 <<'EOF'
run 1, window 2.000 s (snapshot) .. 2.500 s (snapshot)
no span closed in this window
EOF
error window_spans_no_snapshots "run 2 has no snapshots: a window needs a run made with PIANO_INTERVAL=SECS" "$P" report --db "$S" 2 --spans --from 0
error window_no_snapshots "run 2 has no snapshots: a window needs a run made with PIANO_INTERVAL=SECS" "$P" report --db "$S" 2 --from 0
error window_diff_no_snapshots "run 2 has no snapshots: a window needs a run made with PIANO_INTERVAL=SECS" "$P" diff --db "$S" 1 2@0..1
error window_backwards "the window 2..1 s ends before it starts" "$P" report --db "$S" 1 --from 2 --to 1
error window_bad_from "report: --from wants seconds from the run's start (>= 0), not 'soon'" "$P" report --db "$S" 1 --from soon
error window_bad_diff "diff: '1@1..x' is not RUN@T1..T2 (seconds from the run's start; either may be left out)" "$P" diff --db "$S" 1@1..x 2
error window_frames "report: --from/--to give the run's functions, threads merged (not with --frames, --threads or --thread)" "$P" report --db "$S" 1 --from 1 --frames
error window_sort_p50 "report: --sort p50 is not available for a window (snapshots keep calls, self and allocations)" "$P" report --db "$S" 1 --from 1 --sort p50
# rm takes a run's snapshots with it
"$P" rm --db "$S" 1 > /dev/null || fail "rm"
expect rm_snapshots sqlite3 "$S" 'SELECT (SELECT count(*) FROM snapshots) + (SELECT count(*) FROM snapshot_times)' <<'EOF'
0
EOF
# Long names (issue 25). long_names DB LEN MIDDLE: the snaps fixture with 4 more functions of
# about LEN characters, told apart at the end (MIDDLE 0) or only in the middle (1), each in
# 250 more snapshots (1,000 rows).
long_names() {
    "$FX" snaps "$1" && "$P" --db "$1" sql "
      INSERT INTO functions(run, id, name, file, line)
        SELECT 1, 10 + v, CASE $3 WHEN 0 THEN 'ns::' || printf('%.*c', $2, 'x') || '_' || v
                          ELSE 'ns::' || printf('%.*c', $2 / 2, 'x') || v || printf('%.*c', $2 / 2, 'y') END, 'f.c', v
        FROM (SELECT 0 v UNION SELECT 1 UNION SELECT 2 UNION SELECT 3)" && sqlite3 "$1" "
      INSERT INTO snapshot_times(run, t_ns)
        WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 250) SELECT 1, 3000000000 + k FROM i;
      INSERT INTO snapshots(run, fn, t_ns, calls, self_ns, child_calls, allocs, alloc_bytes)
        WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 250)
        SELECT 1, 10 + v, 3000000000 + k, k, k * 1000, 0, 0, 0
        FROM i, (SELECT 0 v UNION SELECT 1 UNION SELECT 2 UNION SELECT 3)"
}
# The rows of one function in many snapshots are one name, not names to tell apart: names of
# 2,000 characters are cut to the table's width (they were shown whole, and took seconds).
long_names "$W/long.db" 2000 0 || fail "long names fixture"
"$P" snapshots --db "$W/long.db" 1 > "$W/out" || fail "snapshots of long names"
[ "$(grep -c '^3\.[0-9]*s  *ns::x*…x*_[0-3]  ' "$W/out")" = 1000 ] ||
    fail "long names: not 1,000 rows with the names cut: $(grep -c 'ns::' "$W/out")"
[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$W/out")" -le 170 ] ||
    fail "long names: lines wider than the table (160 columns)"
# Telling long names apart costs their length, not its square: 4 names of 100,000 characters
# that differ only in the middle (cut where the tail reaches it), 1,000 rows, took over 60 s (25 s of CPU
# time and not done); now about a second. Bounded in CPU time (ulimit -t), which load does not
# stretch as it does wall time.
long_names "$W/longer.db" 100000 1 || fail "longer names fixture"
(ulimit -t 20 && exec "$P" snapshots --db "$W/longer.db" 1) > "$W/out" 2> "$W/err" ||
    fail "snapshots of 100,000-character names: exit $? (over 20 s of CPU time?) $(head -c 200 "$W/err")"
[ "$(grep -c '^3\.[0-9]*s  *ns::x*…x*[0-3]y*…*y*  ' "$W/out")" = 1000 ] ||
    fail "longer names: not 1,000 rows cut where they differ: $(grep -c 'ns::' "$W/out")"
rm -f "$W/longer.db" "$W/long.db" "$W/out"
;;

sql)
# piano-db sql: the user's own SQL, with the views stats and contexts that the
# stored schema no longer holds (schema 19): rows as sqlite3 -batch prints them.
T=$W/tree.db
"$FX" tree "$T" || exit 1
expect sql_no_stored_views "$P" sql --db "$B" "SELECT count(*) FROM main.sqlite_master WHERE type IN ('view', 'trigger')
    AND (name IN ('stats', 'contexts') OR sql LIKE '%stat_trees%' OR sql LIKE '%context_trees%')" <<'EOF'
0
EOF
# hist_self in the compact v2 format (schema 20: a 0 byte, then distance << 2 | count
# and, for counts over 3, the count), the same buckets as schema 19's v1 pairs
expect sql_stats "$P" sql --db "$B" "SELECT run, thread, fn, calls, self_ns, cpu_ns, hex(hist_self) FROM stats
    WHERE run = 1 ORDER BY fn LIMIT 4" <<'EOF'
1|0|0|12|341210000||00B0290C
1|0|1|47|141130000||00EC222F
1|0|2|100|3000||00F40164
1|0|3|3|900||00B308
EOF
# SQL from stdin, two statements and a comment; the tree fixture's contexts
# are blobs (context_trees), as a run's import stores them
printf '%s\n' "SELECT run, thread, id, parent, fn, calls, total_ns FROM contexts WHERE run = 1 ORDER BY thread, id LIMIT 3;" \
    "-- the blobs" "SELECT count(*) > 0 FROM context_trees;" > "$W/two.sql"
expect sql_contexts_stdin sh -c '"$1" sql --db "$2" < "$3"' sh "$P" "$T" "$W/two.sql" <<'EOF'
1|0|1||0|1|13200
1|0|2|1|1|12|10000
1|0|3|2|3|20|2000
1
EOF
expect sql_csv "$P" sql --db "$B" --header --csv "SELECT f.name, f.file, s.calls, s.cpu_ns, 'a b' AS t FROM stats s
    JOIN functions f ON f.run = s.run AND f.id = s.fn WHERE s.run = 1 ORDER BY s.fn LIMIT 2" <<'EOF'
name,file,calls,cpu_ns,t
parse,parse.c,12,,"a b"
resolve,resolve.c,47,,"a b"
EOF
expect sql_json "$P" sql --db "$B" --json "SELECT f.name, s.calls, s.cpu_ns, s.self_ns / 1e6 AS ms FROM stats s
    JOIN functions f ON f.run = s.run AND f.id = s.fn WHERE s.run = 1 ORDER BY s.fn LIMIT 2" <<'EOF'
[{"name":"parse","calls":12,"cpu_ns":null,"ms":341.21},
{"name":"resolve","calls":47,"cpu_ns":null,"ms":141.13}]
EOF
# the user's own writes: a real table's, and the views' (an update moves a
# thread's blob to rows), read back
cp "$T" "$W/w.db"
"$P" tag --db "$W/w.db" gone 1 > /dev/null || fail "sql: tag"
expect sql_writes "$P" sql --db "$W/w.db" "DELETE FROM tags WHERE name = 'gone';
    UPDATE contexts SET calls = 7 WHERE run = 1 AND thread = 0 AND id = 2;
    SELECT (SELECT count(*) FROM tags WHERE name = 'gone'), calls FROM contexts WHERE run = 1 AND thread = 0 AND id = 2" <<'EOF'
0|7
EOF
[ "$("$P" sql --db "$W/w.db" "SELECT count(*) FROM context_rows WHERE run = 1 AND thread = 0")" -gt 1 ] ||
    fail "sql: the updated thread's contexts are not rows"
# the same views in the sqlite3 shell through the loadable extension
# (not in the sanitizer stages: they do not build it, and the system's sqlite3,
# built without sanitizers, cannot load a module built with them)
EXT=$(cd "$(dirname "$P")/../lib" && pwd)/libpiano_sqlite
if [ -n "${PIANO_TEST_SANITIZED:-}" ]; then
    echo "note: sanitizer build: the loadable extension not checked"
elif command -v sqlite3 > /dev/null; then
    for q in "SELECT * FROM contexts ORDER BY run, thread, id" "SELECT * FROM stats ORDER BY run, thread, fn" \
             "SELECT * FROM functions ORDER BY run, id"; do
        "$P" sql --db "$T" "$q" > "$W/a" || fail "sql: $q"
        sqlite3 -batch -noheader "$T" -cmd ".load $EXT" "$q" > "$W/b" 2>&1 || fail "sqlite3 .load: $(cat "$W/b")"
        [ -s "$W/a" ] && cmp -s "$W/a" "$W/b" || fail "sqlite3 .load $EXT: not piano-db sql's rows for $q"
    done
else
    echo "note: sqlite3 missing: the loadable extension not checked"
fi
error sql_error "sql: no such table: no_such_table" "$P" sql --db "$B" "SELECT * FROM no_such_table"
[ "$rc" = 1 ] || fail "sql_error: exit $rc, wanted 1"
error sql_two_args "sql: one SQL argument (quote it), or none to read SQL from stdin" "$P" sql --db "$B" "SELECT 1" "SELECT 2"
[ "$rc" = 2 ] || fail "sql_two_args: exit $rc, wanted 2"
;;

big)
N=${PIANO_DB_BIG_FRAMES:-1000000}
"$FX" big "$W/big.db" "$N" || exit 1
t0=$(date +%s%N)
"$P" report --db "$W/big.db" > "$W/out" || fail "big report"
t1=$(date +%s%N)
echo "report on $N frames: $(( (t1 - t0) / 1000000 )) ms"
tail -1 "$W/out" | grep -qx "$N frames" || fail "big report footer: $(tail -1 "$W/out")"
t0=$(date +%s%N)
"$P" report --db "$W/big.db" --frames --spikes > "$W/out" || fail "big frames"
t1=$(date +%s%N)
echo "report --frames --spikes on $N frames: $(( (t1 - t0) / 1000000 )) ms"
tail -1 "$W/out" | grep -qx "$N frames | 0 spikes (>2x median)" || fail "big frames footer: $(tail -1 "$W/out")"
;;
huge)
# A run of 100 M frames of which the budget kept 5 M (PIANO_DB_HUGE_KEPT): every
# command reads the stored counts, shows a bounded view, streams, in bounded memory.
N=${PIANO_DB_HUGE_KEPT:-5000000}
ALL=$((N * 20))
"$FX" huge "$W/huge.db" "$N" || exit 1
# timed [MAX_MS MAX_KB] CMD...: runs CMD (output in $W/out, $W/err), says its CPU time
# (user + system: a wall time on a loaded machine is many times it, and these
# bounds tell a bounded view from reading every frame, which takes 10x more)
# and peak memory. Under sanitizers (scripts/test.sh --full sets PIANO_TEST_SANITIZED)
# both bounds are 4x: ASan's shadow memory and checks cost that much, not piano.
slack=1; [ -z "${PIANO_TEST_SANITIZED:-}" ] || slack=4
timed() {
  max_ms=$(($1 * slack)) max_kb=$(($2 * slack)); shift 2
  /usr/bin/time -f '%U %S %M' -o "$W/mem" "$@" > "$W/out" 2> "$W/err" || fail "$*: exit $?: $(cat "$W/err")"
  line=$(tail -1 "$W/mem"); user=${line%% *}; rest=${line#* }; sys=${rest%% *}; kb=${rest#* }
  ms=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%d", (u + s) * 1000 }')
  echo "$(echo "$*" | sed "s|$P|piano-db|; s|$W/||g"): $ms ms CPU, $kb KiB, $(wc -c < "$W/out") bytes"
  [ "$ms" -le "$max_ms" ] || fail "$*: $ms ms, more than $max_ms"
  [ "$kb" -le "$max_kb" ] || fail "$*: $kb KiB, more than $max_kb"
}
timed 1500 30000 "$P" runs --db "$W/huge.db"
grep -q " $ALL\$" "$W/out" || fail "huge runs: frames: $(cat "$W/out")"
timed 1500 30000 "$P" runs --db "$W/huge.db" --json
[ "$(jq '.[0].frames' "$W/out")" = "$ALL" ] || fail "huge runs --json frames"
timed 1500 30000 "$P" report --db "$W/huge.db"
grep -qx "$ALL frames ($N kept: the first, the longest + a sample)" "$W/out" || fail "huge report footer: $(tail -3 "$W/out")"
timed 1500 30000 "$P" report --db "$W/huge.db" --frames
[ "$(wc -l < "$W/out")" -le 1110 ] || fail "huge report --frames: $(wc -l < "$W/out") lines"
[ "$(grep -c '<<$' "$W/out")" = 1000 ] || fail "huge report --frames: spikes shown"
grep -qx "($((N - 1100)) more frames hidden, $((N / 1000 - 1000)) of them spikes: --all shows them)" "$W/out" ||
  fail "huge report --frames: what is hidden: $(tail -3 "$W/out")"
tail -1 "$W/out" | grep -qx "$ALL frames | $((N / 1000)) spikes (>2x median) | $N kept: the first, the longest + a sample" ||
  fail "huge report --frames footer: $(tail -1 "$W/out")"
timed 1500 30000 "$P" report --db "$W/huge.db" --frames --json
[ "$(jq length "$W/out")" = 1100 ] || fail "huge report --frames --json: $(jq length "$W/out") frames"
grep -q "^piano-db: report --frames: ($((N - 1100)) more frames hidden" "$W/err" || fail "huge --json: not said: $(cat "$W/err")"
timed 1500 30000 "$P" report --db "$W/huge.db" --frames --spikes --top 5
[ "$(grep -c '<<$' "$W/out")" = 5 ] || fail "huge --spikes --top 5"
timed 30000 30000 "$P" plot --db "$W/huge.db" frames -o "$W/huge.svg"
grep -q "$ALL frames ($N kept: the first, spikes and a sample)" "$W/huge.svg" || fail "huge plot subtitle"
[ "$(grep -c '<rect class=' "$W/huge.svg")" = 2000 ] || fail "huge plot bars"
timed 30000 30000 "$P" export --db "$W/huge.db" --format chrome -o "$W/huge.json"
grep -q "^piano-db: export chrome: the first 100000 of $N kept frames and up to 10000 spikes after them, about 7[0-9] MB; --all exports every one" "$W/err" ||
  fail "huge export: not said: $(cat "$W/err")"
# the first 100,000 and the spikes after them (every 1000th kept frame), at most 10,000
sp=$((N / 1000 - 100)); [ $sp -le 10000 ] || sp=10000
[ "$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$W/huge.json")" = $((100000 + sp)) ] || fail "huge export: events"
[ "$(wc -c < "$W/huge.json")" -le 90000000 ] || fail "huge export: $(wc -c < "$W/huge.json") bytes"
rm -f "$W/huge.json" "$W/huge.svg"
;;
*) echo "unknown section $SECTION"; exit 2 ;;
esac

[ $FAILS -eq 0 ] && echo "ok: $SECTION" && exit 0
echo "$FAILS failure(s) in $SECTION"
exit 1
