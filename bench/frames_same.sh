#!/bin/sh
# frames_same.sh OLD_PIANO_DB NEW_PIANO_DB [WORK] - whether two piano-db builds read the same
# frames back from the same spools: every command that reads frames, byte for byte.
#
# Records three runs into one spool with PIANO_STORE=later (this tree's build/bin/piano-cc and
# runtime): bench/src/frames.c (200,000 frames, every one kept, allocations), the e2e case
# frames_budget (100,000 frames on 4 threads, PIANO_FRAMES=1000: the first, every spike, a
# sample) and the same on one thread with PIANO_CPU=1 (cpu_ns, when perf_event_open is allowed).
# OLD imports them (old/p.db). Two imports of one spool differ in their clock's calibration
# (a run stored later measures its rate at the import: store/calibrate.c), so NEW reads copies
# of that database: up/p.db upgraded by NEW (its frames moved into blocks), and rows/p.db
# upgraded too, then every frame moved back to frame_rows (an UPDATE through the view frames).
# Then runs the commands below in each folder and compares NEW's outputs with OLD's.
#   sh bench/frames_same.sh /work/main/build/bin/piano-db build/bin/piano-db
set -u
OLD=$(realpath "$1") NEW=$(realpath "$2") W=${3:-/tmp/frames_same}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$W" && mkdir -p "$W/rec" "$W/old" "$W/up" "$W/rows" || exit 1
cc_piano() { env PIANO_MIN_SIZE=0 "$ROOT/build/bin/piano-cc" -O2 "$@"; }
PIANO_FNS=wk_ cc_piano -I "$ROOT/bench/src" "$ROOT/bench/src/frames.c" -o "$W/frames" || exit 1
PIANO_FNS=frame,work cc_piano -pthread "$ROOT/test/e2e/cases/frames/frames_budget.c" -o "$W/budget" || exit 1
rec() { env PIANO_STORE=later PIANO_DB="$W/rec/p.db" "$@" > /dev/null || exit 1; }
rec PIANO_FRAMES=all "$W/frames" 200000
rec PIANO_FRAMES=1000 "$W/budget" 4
rec PIANO_FRAMES=1000 PIANO_CPU=1 "$W/budget"
cp -a "$W/rec/p.db.spool" "$W/old/p.db.spool"
(cd "$W/old" && "$OLD" runs --db p.db > /dev/null) || exit 1
cp "$W/old/p.db" "$W/up/p.db" && cp "$W/old/p.db" "$W/rows/p.db" || exit 1
(cd "$W/up" && "$NEW" runs --db p.db > /dev/null) || exit 1
(cd "$W/rows" && "$NEW" sql --db p.db "UPDATE frames SET spike = spike" &&
 "$NEW" sql --db p.db "SELECT count(*) FROM frame_blocks") | grep -qx 0 || { echo "rows: blocks left"; exit 1; }
echo "up: $(cd "$W/up" && "$NEW" sql --db p.db "SELECT count(*) || ' blocks, ' || (SELECT count(*) FROM frame_rows) || ' rows' FROM frame_blocks")"
runs=$(cd "$W/old" && "$OLD" sql --db p.db "SELECT id FROM runs ORDER BY id")
# the commands, one a line (in the database's folder; OUT names a file they write)
{
    echo "runs"
    echo "runs --json"
    echo "report --frames"
    echo "report --frames --spikes"
    echo "diff 1 2"
    echo "sql SELECT * FROM frames ORDER BY run, seq"
    echo "sql SELECT run, count(*), sum(spike), sum(total_ns), sum(cpu_ns), sum(thread_seq), max(length(fns)) FROM frames GROUP BY run"
    echo "sql SELECT run, thread, count(*) FROM frames WHERE spike GROUP BY run, thread"
    for r in $runs; do
        for o in "" "--json" "--csv" "--all" "--all --json" "--spikes" "--spikes --all --csv" "--top 7" \
                 "--spikes --top 3 --json" "--thread 0" "--thread 1 --all --csv" "--thread 2 --spikes --json" "--cpu"; do
            echo "report $r --frames $o"
        done
        echo "report $r"
        echo "report $r --threads"
        echo "report $r --frames --top 0 --json"
        echo "plot frames $r -o OUT.svg"
        echo "plot frames $r --thread 1 -o OUT.svg"
        echo "export $r --format chrome -o OUT.json"
        echo "export $r --format chrome --all -o OUT.json"
        echo "export $r --format chrome --thread 0 -o OUT.json"
        echo "sql SELECT count(*), sum(spike) FROM frames WHERE run = $r"
        echo "sql SELECT seq, total_ns FROM frames WHERE run = $r AND seq BETWEEN 900 AND 1100"
    done
} > "$W/commands"
n=0 differ=0
while IFS= read -r c; do
    n=$((n + 1))
    for d in old up rows; do
        pdb=$NEW && [ "$d" = old ] && pdb=$OLD
        cmd=$(printf '%s' "$c" | sed "s|OUT|$W/$d/out$n|")
        set -f
        (cd "$W/$d" && case "$cmd" in
            "sql "*) "$pdb" sql --db p.db "${cmd#sql }" ;;
            *) "$pdb" $cmd --db p.db ;;
        esac) > "$W/$d/stdout$n" 2> "$W/$d/stderr$n"
        echo $? > "$W/$d/rc$n"
        set +f
    done
    for d in up rows; do
        for f in stdout stderr rc; do
            cmp -s "$W/old/$f$n" "$W/$d/$f$n" || { echo "DIFFERS ($d, $f): $c"; differ=$((differ + 1)); }
        done
        for f in "$W/old/out$n".*; do
            [ -e "$f" ] || continue
            cmp -s "$f" "$W/$d/$(basename "$f")" || { echo "DIFFERS ($d, file): $c"; differ=$((differ + 1)); }
        done
    done
done < "$W/commands"
echo "$n commands on $(echo $runs | wc -w) runs, each run by OLD and by NEW on its blocks and on its rows: $differ differences"
[ "$differ" = 0 ]
