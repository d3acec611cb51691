#!/usr/bin/env bash
# same_outputs.sh OLD_BUILD NEW_BUILD [WORK] - the proof that a change of the stored layout
# (a schema or blob format) reads back the same: every piano-db reading command run by OLD's
# piano-db and by NEW's on the same data, their stdout, stderr and exit status compared.
#
#   upgrade   databases made by OLD (its runtime storing at exit; its make_fixture's fixtures):
#             OLD's piano-db on one copy, NEW's on another (which upgrades it first)
#   store     one PIANO_STORE=later spool made by OLD's runtime, stored by each piano-db into a
#             new database of its own (NEW's writer), then read; a control stores it twice with
#             OLD's piano-db: an output that differs there (times: the store converts ticks
#             then) is counted apart, not as a difference (skipped when NEW cannot read the
#             spool: another spool version)
#   fixtures  each build's make_fixture's fixtures (its own writer), each read by its piano-db
#
# The data: jq's trivial run (JQ=path to a jq built with piano, default /tmp/piano-short-run/
# piano/jq; left out when missing) plain, with PIANO_HEAP=1 and with PIANO_CPU=1, test/e2e's
# many_threads.c (200 threads) and fork.c (a parent and its child), built by OLD's piano-cc;
# fixtures basic, sig, tree, snaps and sets. Per database: runs (--json, --csv, --group command
# and parent), sql of every stats, contexts and functions row, per run (the first MAXRUNS,
# default 8) report with its flags, snapshots, the four exports, flamegraph (4 metrics), plot
# frames, timeline and heap; then diff (several flags), sets of runs (report, flamegraph and
# export of an id list, --all-runs, --command), tags of sets.
# Prints the counts per part and each differing command; exits 1 when one differs.
set -uo pipefail
for b in "${1:-}" "${2:-}"; do
    [ -x "$b/bin/piano-db" ] && [ -x "$b/bin/make_fixture" ] && [ -x "$b/bin/piano-cc" ] ||
        { echo "same_outputs.sh: $b: no bin/piano-db, bin/make_fixture (-DPIANO_TESTS=ON) or bin/piano-cc" >&2; exit 2; }
done
old=$(cd "${1:?usage: same_outputs.sh OLD_BUILD NEW_BUILD [WORK]}" && pwd)
new=$(cd "${2:?usage: same_outputs.sh OLD_BUILD NEW_BUILD [WORK]}" && pwd)
work=${3:-/tmp/piano-same-outputs}
src=$(cd "$(dirname "$0")/.." && pwd)
jq=${JQ:-/tmp/piano-short-run/piano/jq}
rm -rf "$work" && mkdir -p "$work" || exit 1
export COLUMNS=160 NO_COLOR=1 TZ=UTC LC_ALL=C
unset PIANO_DB PIANO_STORE PIANO_HEAP PIANO_CPU PIANO_FRAMES PIANO_INTERVAL PIANO_KEEP_EMPTY

# cmds PIANO_DB FOLDER NAME OUT: the commands on a copy of FOLDER (its NAME.db and NAME.db.spool)
# at one path for every side (messages name it), each output into OUT/N.{out,err,rc}; the run ids
# are the database's own.
cmds() {
    local pdb=$1 db=$work/cur/$3.db out=$4 i=0
    rm -rf "$work/cur" && cp -r "$2" "$work/cur" && mkdir -p "$out" || exit 1
    run() {
        i=$((i + 1))
        (cd "$(dirname "$db")" && "$pdb" --db "$(basename "$db")" "$@" >"$out/$i.out" 2>"$out/$i.err"
            echo "$? $*" >"$out/$i.rc")
    }
    run runs; run runs --json; run runs --csv; run runs --group command; run runs --group parent
    local ids
    ids=$(cd "$(dirname "$db")" && "$pdb" --db "$(basename "$db")" sql "SELECT id FROM runs ORDER BY id" 2>/dev/null |
        grep -E '^[0-9]+$' | head -"${MAXRUNS:-8}")
    run sql "SELECT * FROM stats ORDER BY run, thread, fn"
    run sql "SELECT * FROM contexts ORDER BY run, thread, id"
    run sql "SELECT * FROM functions ORDER BY run, id"
    run sql "SELECT run, thread, count(*), sum(calls), sum(child_calls), sum(allocs), sum(self_ns), sum(total_ns) FROM stats GROUP BY run, thread"
    for r in $ids; do
        run report "$r"; run report "$r" --json; run report "$r" --csv; run report "$r" --threads
        run report "$r" --all; run report "$r" --cpu; run report "$r" --heap; run report "$r" --threads --json
        run report "$r" --uncorrected --all; run report "$r" --sort p99 --top 5; run report "$r" --sort allocs --csv
        run report "$r" --frames; run report "$r" --spikes; run report "$r" --group template --json
        run report "$r" --thread 0 --json; run report "$r" --spans
        run snapshots "$r"; run snapshots "$r" --json
        run export "$r" --format folded; run export "$r" --format callgrind; run export "$r" --format pprof
        run export "$r" --format chrome
        run flamegraph "$r"; run flamegraph "$r" --metric cpu; run flamegraph "$r" --metric alloc
        run flamegraph "$r" --metric inuse
        run plot frames "$r"; run plot timeline "$r"; run plot heap "$r"
    done
    set -- $ids
    if [ $# -ge 2 ]; then
        run diff "$1" "$2"; run diff "$1" "$2" --json; run diff "$1" "$2" --csv --all; run diff "$2" "$1" --cpu
        run diff "$1" "$2" --uncorrected --top 3; run flamegraph --diff "$1" "$2"
        local set="$1..${*: -1}"
        run report "$set"; run report "$set" --json; run report "$set" --csv --cpu
        run flamegraph "$set"; run export "$set" --format folded; run export "$set" --format pprof
        run export "$set" --format callgrind
        run report --all-runs; run report --all-runs --json; run report --command jq
        run tag suite "$set"; run report suite --json; run diff suite "$1"; run tag
    fi
    echo "$i" >"$out/count"
}

# compare NAME A B [CONTROL]: counts the commands whose outputs are identical in A and B;
# with CONTROL (a second run like A), those that differ between A and CONTROL are counted apart.
same=0 differ=0 varies=0
compare() {
    local name=$1 a=$2 b=$3 c=${4:-} n s=0 d=0 v=0 f
    n=$(cat "$a/count")
    [ "$n" = "$(cat "$b/count")" ] || { echo "$name: $n commands against $(cat "$b/count")"; differ=$((differ + 1)); }
    for ((k = 1; k <= n; k++)); do
        if [ -n "$c" ] && ! { cmp -s "$a/$k.out" "$c/$k.out" && cmp -s "$a/$k.err" "$c/$k.err" && cmp -s "$a/$k.rc" "$c/$k.rc"; }; then
            v=$((v + 1)); continue
        fi
        if cmp -s "$a/$k.out" "$b/$k.out" && cmp -s "$a/$k.err" "$b/$k.err" && cmp -s "$a/$k.rc" "$b/$k.rc"; then
            s=$((s + 1))
        else
            d=$((d + 1)); echo "  DIFFERS $name: piano-db $(cut -d' ' -f2- "$a/$k.rc")"
            for f in out err rc; do cmp -s "$a/$k.$f" "$b/$k.$f" || diff "$a/$k.$f" "$b/$k.$f" | head -6 | sed 's/^/    /'; done
        fi
    done
    printf '%-28s %4d commands: %4d identical, %d differ%s\n' "$name" "$n" "$s" "$d" "${c:+, $v vary in the control}"
    same=$((same + s)) differ=$((differ + d)) varies=$((varies + v))
}

# The programs, built by OLD's piano-cc.
progs=()
for c in threads/many_threads fork/fork; do
    "$old/bin/piano-cc" -O2 -g "$src/test/e2e/cases/$c.c" -o "$work/$(basename $c)" -lpthread -lm 2>"$work/cc.err" ||
        { echo "cannot build $c: $(head -3 "$work/cc.err")"; exit 1; }
    progs+=("$work/$(basename $c)")
done
echo '{"a":[1,2]}' >"$work/in.json"
# record DB [ENV...]: every program once, with OLD's runtime, into DB
record() {
    local db=$1; shift
    if [ -x "$jq" ]; then
        for e in X=1 PIANO_HEAP=1 PIANO_CPU=1; do
            (cd "$work" && env "$@" $e PIANO_DB="$db" LD_LIBRARY_PATH="$old/lib" "$jq" '.a|add' in.json >/dev/null)
        done
    fi
    for p in "${progs[@]}"; do (cd "$work" && env "$@" PIANO_DB="$db" LD_LIBRARY_PATH="$old/lib" "$p" >/dev/null 2>&1); done
}

echo "old $old, new $new; load $(cut -d' ' -f1-3 /proc/loadavg)"
# upgrade: runs stored at exit by OLD, and OLD's fixtures
mkdir -p "$work/up"
record "$work/up/rec.db"
"$old/bin/piano-db" --db "$work/up/rec.db" runs >/dev/null 2>&1   # WAL into the file
kinds="basic sig tree snaps sets"
for k in $kinds; do "$old/bin/make_fixture" "$k" "$work/up/$k.db" >/dev/null; done
for d in rec $kinds; do
    cmds "$old/bin/piano-db" "$work/up" "$d" "$work/out/up-old-$d"
    cmds "$new/bin/piano-db" "$work/up" "$d" "$work/out/up-new-$d"
    compare "upgrade $d" "$work/out/up-old-$d" "$work/out/up-new-$d"
done
# store: one spool, stored by each piano-db (OLD's twice: the control)
mkdir -p "$work/sp"
record "$work/sp/later.db" PIANO_STORE=later
for side in old ctl new; do
    b=$old && [ $side = new ] && b=$new
    cmds "$b/bin/piano-db" "$work/sp" later "$work/out/st-$side"
    # each stored every run: none left in its spool
    left=$(find "$work/cur/later.db.spool" -mindepth 1 -maxdepth 1 -type d -not -name '.*' | wc -l)
    [ "$left" = 0 ] || { echo "  store: $left runs left in $side's spool (another spool version?)"; differ=$((differ + 1)); }
done
compare "store (PIANO_STORE=later)" "$work/out/st-old" "$work/out/st-new" "$work/out/st-ctl"
# fixtures: each build's own
for k in $kinds; do
    for side in old new; do
        rm -rf "$work/fx" && mkdir -p "$work/fx" && b=$old && [ $side = new ] && b=$new
        "$b/bin/make_fixture" "$k" "$work/fx/$k.db" >/dev/null
        cmds "$b/bin/piano-db" "$work/fx" "$k" "$work/out/fx-$side-$k"
    done
    compare "fixture $k" "$work/out/fx-old-$k" "$work/out/fx-new-$k"
done
echo "total: $same identical, $differ differ, $varies vary in the control (outputs in $work/out)"
[ "$differ" = 0 ]
