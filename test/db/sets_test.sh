#!/bin/sh
# sets_test.sh SECTION PIANO_DB MAKE_FIXTURE WORKDIR
# Sets of runs (issue 23: a test suite's runs read as one): report SET (an id list, a tag of
# several runs, --all-runs, --command NAME) sums them; diff SET SET; tag NAME SET; runs --group
# command|parent; --group template in diff, flamegraph and export. The fixture 'sets'
# (make_fixture.c) has known figures: runs of other clocks (ns_per_tick 0.5) and overheads, a run
# that recorded nothing, CPU and heap in use in some runs only. Sections: report diff tags runs
# group errors upgrade.
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

# same NAME 'ARGS A' 'ARGS B': the two commands print the same.
same() {
    name=$1
    # shellcheck disable=SC2086
    "$P" --db "$D" $2 > "$W/a" 2>&1; "$P" --db "$D" $3 > "$W/b" 2>&1
    cmp -s "$W/a" "$W/b" || { fail "$name: '$2' and '$3' differ"; diff -u "$W/a" "$W/b"; }
}

D=$W/sets.db
"$FX" sets "$D" || exit 1

case $SECTION in
report)
# parse over runs 1..3: 10 + 30 + 10 calls; self 200 + 3000 + 400 (run 3's clock: 0.5 ns a tick);
# per call 10x20, 30x100, 10x40 ns: p50 100 (the runs' p50s averaged would be 53); main: run 1's
# 5000 + run 2's 9000 less its own overhead (30 child calls x 10 ns) = 13700.
expect report_range "$P" report --db "$D" 1..3 <<'EOF'
3 runs summed (1..3)
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
main                    2    13.70us     5.02us     8.72us        6       300B
parse                  50     3.60us   100.00ns   100.00ns        4        64B

0 frames
EOF
# CPU and heap in use: summed where every run measured them (runs 1 and 2), null where one did not (run 3).
expect report_csv "$P" report --db "$D" 1..3 --csv <<'EOF'
function,file,line,calls,self_ns,total_ns,p50_ns,p99_ns,p50_total_ns,p99_total_ns,allocs,alloc_bytes,frees,free_bytes,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,inuse_bytes,peak_inuse_bytes,unfinished
main,main.c,1,2,13700,20000,5024,8724,8032,11968,6,300,6,300,13700,20000,19800,200,100,4,150,300,0
parse,parse.c,10,50,3600,4400,100,100,120,120,4,64,4,64,,,,,,,,,0
EOF
expect report_pair_csv "$P" report --db "$D" 1,2 --csv <<'EOF'
function,file,line,calls,self_ns,total_ns,p50_ns,p99_ns,p50_total_ns,p99_total_ns,allocs,alloc_bytes,frees,free_bytes,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,inuse_bytes,peak_inuse_bytes,unfinished
main,main.c,1,2,13700,20000,5024,8724,8032,11968,6,300,6,300,13700,20000,19800,200,100,4,150,300,0
parse,parse.c,10,40,3200,3900,100,100,120,120,4,64,4,64,3200,3900,3700,200,100,2,32,64,0
EOF
# uncorrected: run 2's main keeps its 9000
expect report_uncorrected "$P" report --db "$D" 1..3 --uncorrected --csv <<'EOF'
function,file,line,calls,self_ns,total_ns,p50_ns,p99_ns,p50_total_ns,p99_total_ns,allocs,alloc_bytes,frees,free_bytes,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,inuse_bytes,peak_inuse_bytes,unfinished
main,main.c,1,2,14000,20000,5024,9024,8032,11968,6,300,6,300,14000,20000,19800,200,100,4,150,300,0
parse,parse.c,10,50,3600,4400,100,100,120,120,4,64,4,64,,,,,,,,,0
EOF
# a set of one run reads as that run (its own clock and correction)
same one_run_2 "report 2 --json" "report 2..2 --json"
same one_run_3 "report 3 --json" "report 3,3 --json"
same one_run_cmd "report 2 --json" "report --command /usr/bin/jq --json"
same one_run_thread "report 2 --thread 0 --csv" "report 2..2 --thread 0 --csv"
expect report_all "$P" report --db "$D" --all-runs <<'EOF'
6 runs summed (--all-runs; 1 that recorded nothing left out)
Function                  Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------------
fmt::write<char>(int)      2000   150.00us    60.00ns    90.00ns        0         0B
fmt::write<wchar_t>(int)   2000   150.00us    60.00ns    90.00ns        0         0B
main (main.c:1)               2    13.70us     5.02us     8.72us        6       300B
parse                        50     3.60us   100.00ns   100.00ns        4        64B
main (ctest.c:1)              1     1.00us     1.00us     1.00us        0         0B
main (fmt_test.c:1)           2   200.00ns   100.00ns   100.00ns        0         0B

0 frames
EOF
# a set reads its own runs' blobs: a damaged contexts blob of another run (5) does not stop it,
# also where a call in flight makes it look for a forked run's parent (runset.c inherited_calls,
# whose query once read every stored run's contexts for each run of a set: N^2 blob decodes)
cp "$D" "$W/other_damaged.db"
"$P" --db "$W/other_damaged.db" sql "INSERT INTO unfinished(run, thread, depth, fn, start_ns, elapsed_ns)
    SELECT 2, 0, 1, id, 0, 10 FROM functions WHERE run = 2 AND name = 'main';
    UPDATE context_trees SET nodes = x'7f00' WHERE run = 5" > /dev/null || fail "other_damaged: sql"
[ "$("$P" --db "$W/other_damaged.db" sql "SELECT count(*) FROM context_trees WHERE run = 5 AND nodes = x'7f00'")" = 1 ] ||
    fail "other_damaged: run 5's contexts not damaged"
"$P" --db "$W/other_damaged.db" report 1..3 --csv > "$W/out" 2> "$W/err" || fail "other_damaged: exit $?: $(cat "$W/err")"
grep -q '^main,main.c,1,2,' "$W/out" || fail "other_damaged: no main row: $(cat "$W/out")"
"$P" --db "$W/other_damaged.db" sql "SELECT count(*) FROM contexts WHERE run = 5" > "$W/out" 2> "$W/err" &&
    fail "other_damaged: run 5's contexts read"
# --command: the program's name (./jq and /usr/bin/jq alike), run 4 (jq --version) recorded nothing
same command_jq "report 1..3 --json" "report --command jq --json"
expect report_command_top "$P" report --db "$D" --command jq --sort calls --top 1 <<'EOF'
3 runs summed (--command jq; 1 that recorded nothing left out)
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
parse                  50     3.60us   100.00ns   100.00ns        4        64B
(1 more function hidden: --top N or --all shows them)

0 frames
EOF
# A run's functions are looked up by run and id (tools/db/aggregate.c: the + of f.id = +s.fn), not
# compared with every function of the run for each stats row (27M of a jq report's 46M instructions).
plan=$("$P" --db "$D" sql "EXPLAIN QUERY PLAN SELECT f.name FROM stats s JOIN functions f ON f.run = s.run AND f.id = +s.fn WHERE s.run = 1")
case $plan in
*"SEARCH f USING AUTOMATIC PARTIAL COVERING INDEX (run=? AND id=?)"*|*"SEARCH f USING AUTOMATIC COVERING INDEX (run=? AND id=?)"*) ;;
*) fail "the stats-functions join looks functions up by run only: $plan" ;;
esac
;;
group)
# the instantiations of fmt::write over the runs of fmt-test: 4000 calls, per call 60 ns (run 5)
# and 90 ns (run 6): p50 60, p99 90
expect report_group "$P" report --db "$D" --command fmt-test --group template <<'EOF'
2 runs summed (--command fmt-test)
Function            Calls       Self        p50        p99   Allocs      Bytes  Fns
-----------------------------------------------------------------------------------
fmt::write<…>(…)     4000   300.00us    60.00ns    90.00ns        0         0B    2
main                    2   200.00ns   100.00ns   100.00ns        0         0B    1

0 frames
EOF
expect diff_group "$P" diff --db "$D" 5 6 --group template <<'EOF'
Function                 Before      After      Delta  C.Delta      p50   Per call   Allocs  A.Delta
----------------------------------------------------------------------------------------------------
fmt::write<…>(…)       120.00us   180.00us   +60.00us       +0   +50.0%     slower        0       +0
main                   100.00ns   100.00ns    +0.00ns       +0    +0.0%          -        0       +0

before: run 5, after: run 6
Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:
change of one call's self time (median; significance test, see diff --help)
EOF
expect folded "$P" export --db "$D" 5 --format folded <<'EOF'
main 100
main;void fmt::write<char>(int) 60000
main;void fmt::write<wchar_t>(int) 60000
EOF
expect folded_group "$P" export --db "$D" 5 --format folded --group template <<'EOF'
main 100
main;fmt::write<…>(…) 120000
EOF
# a set's calling contexts: the runs' trees merged (runs 5 and 6: 60 and 90 ns a call, 1000 calls each)
expect folded_set "$P" export --db "$D" 5,6 --format folded <<'EOF'
main 200
main;void fmt::write<char>(int) 150000
main;void fmt::write<wchar_t>(int) 150000
EOF
expect folded_set_group "$P" export --db "$D" 5..6 --format folded --group template <<'EOF'
main 200
main;fmt::write<…>(…) 300000
EOF
# --command and --all-runs name sets there too, as in report (fmt-test: runs 5 and 6; all: 1..7
# but the run that recorded nothing, the first line of the title says)
same folded_command 'export --command fmt-test --format folded' 'export 5..6 --format folded'
same folded_all 'export --all-runs --format folded' 'export 1..7 --format folded'
"$P" flamegraph --db "$D" --command fmt-test -o "$W/c.svg" || fail "flamegraph --command: exit $?"
grep -q '<text id="title" x="600" y="24">Flame graph: 2 runs summed (--command fmt-test)</text>' "$W/c.svg" ||
    fail "flamegraph --command: title $(grep -o '<text id="title"[^<]*' "$W/c.svg")"
"$P" export --db "$D" 5..6 --format callgrind > "$W/cg" || fail "callgrind of a set: exit $?"
grep -q '^summary: 300200 4002 0$' "$W/cg" || fail "callgrind of a set: $(grep summary "$W/cg")"
"$P" flamegraph --db "$D" 5..7 -o "$W/s.svg" || fail "flamegraph of a set: exit $?"
grep -q '<text id="title" x="600" y="24">Flame graph: 3 runs summed (5..7)</text>' "$W/s.svg" ||
    fail "flamegraph of a set: title $(grep -o '<text id="title"[^<]*' "$W/s.svg")"
"$P" export --db "$D" 5..6 --format pprof -o "$W/s.pb.gz" || fail "pprof of a set: exit $?"
gzip -dc "$W/s.pb.gz" | grep -a -q 'piano runs summed' || fail "pprof of a set: no comment"
"$P" flamegraph --db "$D" 5 --group template -o "$W/g.svg" || fail "flamegraph --group: exit $?"
[ "$(grep -c 'fmt::write&lt;…&gt;(…)' "$W/g.svg")" -ge 1 ] || fail "flamegraph --group: no grouped frame"
grep -q 'wchar_t' "$W/g.svg" && fail "flamegraph --group: an instantiation left"
"$P" flamegraph --db "$D" --diff 5 6 --group template -o "$W/d.svg" || fail "flamegraph --diff --group: exit $?"
grep -q 'wchar_t' "$W/d.svg" && fail "flamegraph --diff --group: an instantiation left"
"$P" export --db "$D" 5 --format pprof --group template -o "$W/g.pb.gz" || fail "pprof --group: exit $?"
gzip -dc "$W/g.pb.gz" | grep -a -q 'wchar_t' && fail "pprof --group: an instantiation left"
gzip -dc "$W/g.pb.gz" | grep -a -q 'fmt::write<' || fail "pprof --group: no grouped function"
;;
diff)
# sets on both sides: each summed, the test on every call of each
expect diff_sets "$P" diff --db "$D" 5..5 6..6 <<'EOF'
Function                       Before      After      Delta  C.Delta      p50   Per call   Allocs  A.Delta
----------------------------------------------------------------------------------------------------------
fmt::write<char>(int)         60.00us    90.00us   +30.00us       +0   +50.0%     slower        0       +0
fmt::write<wchar_t>(int)      60.00us    90.00us   +30.00us       +0   +50.0%     slower        0       +0
main                         100.00ns   100.00ns    +0.00ns       +0    +0.0%          -        0       +0

before: 1 run summed (5..5), after: 1 run summed (6..6)
Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:
change of one call's self time (median; significance test, see diff --help)
EOF
expect diff_sets_json "$P" diff --db "$D" 1..2 1..3 --json <<'EOF'
[
  {"function": "parse", "file": "parse.c", "calls_a": 40, "calls_b": 50, "self_ns_a": 3200, "self_ns_b": 3600, "delta_ns": 400, "delta_pct": 12.50, "allocs_a": 4, "allocs_b": 4, "alloc_bytes_a": 64, "alloc_bytes_b": 64, "cpu_ns_a": 3200, "cpu_ns_b": null, "inuse_bytes_a": 32, "inuse_bytes_b": null, "change": "same", "significant": false, "p_value": 0.331, "median_a_ns": 100, "median_b_ns": 100},
  {"function": "main", "file": "main.c", "calls_a": 2, "calls_b": 2, "self_ns_a": 13700, "self_ns_b": 13700, "delta_ns": 0, "delta_pct": 0.00, "allocs_a": 6, "allocs_b": 6, "alloc_bytes_a": 300, "alloc_bytes_b": 300, "cpu_ns_a": 13700, "cpu_ns_b": 13700, "inuse_bytes_a": 150, "inuse_bytes_b": 150, "change": "same", "significant": false, "p_value": 1, "median_a_ns": 5024, "median_b_ns": 5024}
]
EOF
# a set against one run, and sets named by tags
"$P" tag --db "$D" before 5 7 > /dev/null && "$P" tag --db "$D" after 6..7 > /dev/null || fail "tag: exit $?"
"$P" diff --db "$D" 5,7 6 --fail-above 10 > "$W/out" 2> "$W/err"
[ $? -eq 3 ] || fail "diff SET RUN --fail-above: exit $?, wanted 3"
grep -q '^before: 2 runs summed (5,7), after: run 6$' "$W/out" || fail "diff SET RUN: $(cat "$W/out")"
"$P" diff --db "$D" before after --json > "$W/out" || fail "diff TAG TAG: exit $?"
grep -q '"function": "void fmt::write<char>(int)".*"change": "slower"' "$W/out" || fail "diff TAG TAG: $(cat "$W/out")"
grep -q '"function": "main", "file": "ctest.c", "calls_a": 1, "calls_b": 1.*"change": "same"' "$W/out" ||
    fail "diff TAG TAG (ctest): $(cat "$W/out")"
;;
tags)
expect tag_command "$P" tag --db "$D" suite --command jq <<'EOF'
tagged 'suite' -> 3 runs (1..3); 1 that recorded nothing left out
EOF
same report_tag "report 1..3 --json" "report suite --json"
expect tag_list "$P" tag --db "$D" <<'EOF'
Tag    Run              Started  Command
----------------------------------------
suite    -  2023-11-14 22:13:21  3 runs
EOF
expect tag_json "$P" tag --db "$D" --json <<'EOF'
[
  {"tag": "suite", "run": null}
]
EOF
"$P" runs --db "$D" --json > "$W/runs" || fail "runs: exit $?"
[ "$(grep -c '"tags": \["suite"\]' "$W/runs")" -eq 3 ] || fail "runs: suite on 3 runs: $(cat "$W/runs")"
expect tag_positional "$P" tag --db "$D" fmt 5 6 7 <<'EOF'
tagged 'fmt' -> 3 runs (5..7)
EOF
expect tag_of_tags "$P" tag --db "$D" all suite fmt <<'EOF'
tagged 'all' -> 6 runs (1..3,5..7)
EOF
error one_run_cmd "tag 'suite' names 3 runs: report, diff, flamegraph and export take a set of runs, not this command" "$P" snapshots --db "$D" suite
# gc keeps the runs a tag names; rm takes a run out of its sets
"$P" untag --db "$D" all > /dev/null && "$P" untag --db "$D" fmt > /dev/null || fail "untag: exit $?"
expect gc_keeps "$P" gc --db "$D" --keep 1 <<'EOF'
removed 3 runs
EOF
expect gc_left "$P" report --db "$D" suite --csv <<'EOF'
function,file,line,calls,self_ns,total_ns,p50_ns,p99_ns,p50_total_ns,p99_total_ns,allocs,alloc_bytes,frees,free_bytes,cpu_ns,cpu_total_ns,cpu_user_ns,cpu_sys_ns,offcpu_ns,inuse_objects,inuse_bytes,peak_inuse_bytes,unfinished
main,main.c,1,2,13700,20000,5024,8724,8032,11968,6,300,6,300,13700,20000,19800,200,100,4,150,300,0
parse,parse.c,10,50,3600,4400,100,100,120,120,4,64,4,64,,,,,,,,,0
EOF
"$P" rm --db "$D" 3 > /dev/null || fail "rm: exit $?"
same rm_leaves "report 1..2 --json" "report suite --json"
# re-tagging one run makes it a tag of one run
expect retag_one "$P" tag --db "$D" suite 2 <<'EOF'
tagged 'suite' -> 2
EOF
same retag_report "report 2" "report suite"
expect untag "$P" untag --db "$D" suite <<'EOF'
untagged 'suite'
EOF
error untag_gone "no tag 'suite' in $D" "$P" untag --db "$D" suite
;;
runs)
expect runs_command "$P" runs --db "$D" --group command <<'EOF'
Command   Runs  Empty  Recovered  Running      Time                First                 Last  Set
---------------------------------------------------------------------------------------------------
fmt-test     2      0          0        0   40.00ms  2023-11-14 22:13:26  2023-11-14 22:13:27  5..6
ctest        1      0          0        0  900.00ms  2023-11-14 22:13:25  2023-11-14 22:13:25  7
jq           4      1          1        0  151.00ms  2023-11-14 22:13:21  2023-11-14 22:13:24  1..4

Set: the runs, as report and diff take them (piano-db report SET sums them; tag NAME SET names them)
EOF
expect runs_command_json "$P" runs --db "$D" --group command --json <<'EOF'
[
  {"command": "fmt-test", "runs": 2, "empty": 0, "recovered": 0, "running": 0, "duration_ns": 40000000, "first_started": 1700000006000000000, "last_started": 1700000007000000000, "set": "5..6"},
  {"command": "ctest", "runs": 1, "empty": 0, "recovered": 0, "running": 0, "duration_ns": 900000000, "first_started": 1700000005000000000, "last_started": 1700000005000000000, "set": "7"},
  {"command": "jq", "runs": 4, "empty": 1, "recovered": 1, "running": 0, "duration_ns": 151000000, "first_started": 1700000001000000000, "last_started": 1700000004000000000, "set": "1..4"}
]
EOF
expect runs_parent "$P" runs --db "$D" --group parent <<'EOF'
Parent    Command  Runs  Empty  Recovered  Running     Time                First                 Last  Set
-------------------------------------------------------------------------------------------------------------
7         ctest       2      0          0        0  40.00ms  2023-11-14 22:13:26  2023-11-14 22:13:27  5..6
-         -           5      1          1        0    1.05s  2023-11-14 22:13:21  2023-11-14 22:13:25  1..4,7

Set: the runs, as report and diff take them (piano-db report SET sums them; tag NAME SET names them)
EOF
expect runs_parent_csv "$P" runs --db "$D" --group parent --csv <<'EOF'
parent,command,runs,empty,recovered,running,duration_ns,first_started,last_started,set
7,ctest,2,0,0,0,40000000,1700000006000000000,1700000007000000000,5..6
,,5,1,1,0,1051000000,1700000001000000000,1700000005000000000,"1..4,7"
EOF
# 50 runs or more, 10 or more of one program: runs says how to group them
"$P" runs --db "$D" > "$W/out" || fail "runs: exit $?"
grep -q 'group' "$W/out" && fail "runs: a hint for 7 runs: $(tail -1 "$W/out")"
sqlite3 -version > /dev/null 2>&1 || { echo "note: sqlite3 missing: the hint of runs not checked"; }
if sqlite3 -version > /dev/null 2>&1; then
    cp "$D" "$W/many.db"
    sqlite3 "$W/many.db" "WITH RECURSIVE r(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM r WHERE i < 142)
        INSERT INTO runs(id, key, pid, command, started_ns, duration_ns, status, clock, ns_per_tick, overhead_ns)
        SELECT i, 'k' || i, i, './jq .x', 1700000010000000000 + i, 1000, 'complete', 'tsc', 1.0, 0 FROM r" ||
        fail "sqlite3: more runs"
    "$P" runs --db "$W/many.db" > "$W/out" || fail "runs (50): exit $?"
    [ "$(tail -1 "$W/out")" = "50 runs of 3 programs: piano-db runs --group command counts them per program; report --command NAME sums a program's runs" ] ||
        fail "runs (50): hint: $(tail -1 "$W/out")"
    "$P" runs --db "$W/many.db" --json | grep -q 'group' && fail "runs --json (50): a hint"
fi
# the Set column is a set report takes
same runs_set "report 1..4 --json" "report --command jq --json"
;;
upgrade)
# A database of the schema before tag_runs, whose tag_runs piano-db made on the first tag of several runs:
# opening it upgrades it to the schema of a new database (which has tag_runs from the
# start), its tags kept; one without tag_runs gets it and takes tags of several runs.
command -v sqlite3 > /dev/null || { echo "SKIP: sqlite3 missing"; exit 77; }
"$FX" empty "$W/new.db" || exit 1
V=$(sqlite3 "$W/new.db" 'PRAGMA user_version')
[ "$(sqlite3 "$W/new.db" "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'tag_runs'")" = 1 ] ||
    fail "a new database has no tag_runs"
"$FX" sets-old "$D" || exit 1
[ "$(sqlite3 "$D" 'PRAGMA user_version')" -lt "$V" ] || fail "sets-old is not at an older schema"
expect old_tags "$P" tag --db "$D" <<'EOF'
Tag    Run              Started  Command
-------------------------------------------
one      5  2023-11-14 22:13:26  ./fmt-test
suite    -  2023-11-14 22:13:21  3 runs
EOF
[ "$(sqlite3 "$D" 'PRAGMA user_version')" = "$V" ] || fail "old: schema $(sqlite3 "$D" 'PRAGMA user_version') after opening, not $V"
same old_report "report 1..3 --json" "report suite --json"
same old_diff "diff 1..3 5..6 --json" "diff suite 5..6 --json"
expect old_retag "$P" tag --db "$D" suite 1 3 <<'EOF'
tagged 'suite' -> 2 runs (1,3)
EOF
"$FX" sets-old-untagged "$D" || exit 1
expect untagged_tag "$P" tag --db "$D" suite 1..3 <<'EOF'
tagged 'suite' -> 3 runs (1..3)
EOF
[ "$(sqlite3 "$D" 'PRAGMA user_version')" = "$V" ] || fail "untagged: schema $(sqlite3 "$D" 'PRAGMA user_version') after tag, not $V"
same untagged_report "report 1..3 --json" "report suite --json"
;;
errors)
error none "9..12: no such runs in $D" "$P" report --db "$D" 9..12
error empty "4..4: its 1 run recorded nothing" "$P" report --db "$D" 4..4
error backwards "3..1: runs backwards (A..B with A <= B)" "$P" report --db "$D" 3..1
error all_and_run "report: --all-runs names the runs: no RUN besides it" "$P" report --db "$D" --all-runs 3
error all_and_cmd "report: --all-runs and --command exclude each other" "$P" report --db "$D" --all-runs --command jq
error no_command "--command nope: no such runs in $D" "$P" report --db "$D" --command nope
error set_frames "report: a set of runs gives its functions summed (not --from, --to, --frames, --threads or --heap)" \
    "$P" report --db "$D" 1..3 --frames
error diff_one "diff: a set of runs is compared with another set or run: diff A B" "$P" diff --db "$D" 1..3
error runs_group "runs: unknown grouping 'x' (command|parent)" "$P" runs --db "$D" --group x
error report_group "report: unknown grouping 'command' (template)" "$P" report --db "$D" --group command
error flame_diff_all "flamegraph: --diff compares two runs (not --all-runs or --command)" \
    "$P" flamegraph --db "$D" --diff --all-runs
error export_command_run "export: --command names the runs: no RUN besides it" \
    "$P" export --db "$D" --command jq 3 --format folded
error chrome_all "export: a set of runs goes with --format folded, pprof or callgrind (chrome's events are one run's frames)" \
    "$P" export --db "$D" --all-runs --format chrome
error chrome_group "export: --group goes with --format folded, pprof or callgrind (chrome's events are frames)" \
    "$P" export --db "$D" 5 --format chrome --group template
error tag_list_name "tag: '1..3' is shaped like a list of runs (3..40,45): a tag of that name could never be reached" \
    "$P" tag --db "$D" 1..3 2
error one_run_list "'1..3' names several runs: report, diff, flamegraph and export take a set of runs, not this command" "$P" snapshots --db "$D" 1..3
error chrome_set "export: a set of runs goes with --format folded, pprof or callgrind (chrome's events are one run's frames)" \
    "$P" export --db "$D" 5..6 --format chrome
error cpu_set "a run of the set has no CPU time (recorded without PIANO_CPU=1, or perf_event_open was refused)" \
    "$P" flamegraph --db "$D" 5,6 --metric cpu
error tag_empty "tag: the runs named recorded nothing: 'x' not made" "$P" tag --db "$D" x 4..4
;;
*) echo "unknown section $SECTION"; exit 2 ;;
esac

[ $FAILS -eq 0 ] && echo "sets $SECTION: ok"
[ $FAILS -eq 0 ]
