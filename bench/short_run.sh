#!/usr/bin/env bash
# short_run.sh - issue 23's short-run row: jq's trivial run (echo '{"a":[1,2]}' | jq '.a|add')
# built with every function instrumented (PIANO_FNS='*'), against the same jq built plainly.
# Prints, side by side in one run: CPU time (perf stat task-clock when perf is there), wall
# time and page faults per run for plain, PIANO_DISABLE=1, recording and recording with
# PIANO_STORE=later (then the spool's bytes left per run, and the CPU time of the piano-db
# command that stores them), and the database's bytes per recorded run, per table (dbstat).
#
# Usage: bench/short_run.sh BUILD_DIR [RUNS]
#   JQ_SRC=dir   jq's source (a git checkout); default: cloned from JQ_GIT
#   JQ_GIT=url   default https://github.com/jqlang/jq (commit JQ_REV, default 579e6f76)
#   WORK=dir     where jq is built (default /tmp/piano-short-run)
#   STORE_ROUNDS=N  rounds (default 3) alternating plain, PIANO_STORE=exit and PIANO_STORE=later,
#                perf stat -r RUNS each, with their means (0: none)
#   COMPARE_LIB=dir  another build's lib/ (its libpiano_rt.so): then ROUNDS (default 5) rounds
#                alternate it and this build's runtime under the same jq binary (LD_LIBRARY_PATH
#                overrides its RUNPATH), perf stat -r RUNS each, recording and with PIANO_DISABLE=1,
#                and print both side by side
# Needs autoconf automake libtool libonig-dev, perf and sqlite3: installs those missing with
# apt-get -y (as root, or through sudo).
set -euo pipefail
missing=()
for p in autoconf automake libtool libonig-dev sqlite3 bc; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get install -y "${missing[@]}" >/dev/null
fi
build=$(cd "${1:?usage: short_run.sh BUILD_DIR [RUNS]}" && pwd)
runs=${2:-30}
work=${WORK:-/tmp/piano-short-run}
rev=${JQ_REV:-579e6f76}
mkdir -p "$work"
if [ ! -d "$work/src" ]; then
    if [ -n "${JQ_SRC:-}" ]; then cp -r "$JQ_SRC" "$work/src"; else
        git clone -q "${JQ_GIT:-https://github.com/jqlang/jq}" "$work/src"
        git -C "$work/src" checkout -q "$rev"
    fi
fi
make_jq() {   # make_jq DIR CC [PIANO_FNS]
    local dir=$1 cc=$2
    [ -x "$dir/jq" ] && return 0
    rm -rf "$dir" && cp -r "$work/src" "$dir"
    (cd "$dir" && git clean -qfdx 2>/dev/null; autoreconf -i >/dev/null 2>&1 &&
        PIANO_DISABLE=1 ./configure --with-oniguruma=yes --disable-docs --disable-shared CC="$cc" >/dev/null &&
        make clean >/dev/null && PIANO_FNS='*' make -j2 >/dev/null 2>&1)
}
make_jq "$work/plain" clang-14
make_jq "$work/piano" "$build/bin/piano-cc"
echo '{"a":[1,2]}' >"$work/in.json"
db=$work/bench.db
rm -rf "$db" "$db-wal" "$db-shm" "$db.spool"
export PIANO_DB=$db
one() {   # one LABEL ENV... : prints LABEL, ms CPU, ms wall, faults per run
    local label=$1; shift
    if command -v perf >/dev/null; then
        env "$@" perf stat -x, -e task-clock,page-faults -r "$runs" "$jq" '.a|add' "$work/in.json" 2>"$work/stat" >/dev/null
        awk -F, -v l="$label" '/task-clock/{c=$1} /page-faults/{f=$1} END{printf "%-12s cpu %7.2f ms  faults %5d", l, c, f}' "$work/stat"
    else printf "%-12s" "$label"; fi
    local s e
    s=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do env "$@" "$jq" '.a|add' "$work/in.json" >/dev/null; done
    e=$(date +%s%N)
    printf "  wall %7.2f ms\n" "$(echo "($e - $s) / $runs / 1000000" | bc -l)"
}
jq=$work/plain/jq one plain X=1
jq=$work/piano/jq one disabled PIANO_DISABLE=1 LD_LIBRARY_PATH="$build/lib"   # this build's runtime, whichever built jq
rm -rf "$db" "$db-wal" "$db-shm" "$db.spool"
jq=$work/piano/jq one recording LD_LIBRARY_PATH="$build/lib"
n=$(sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE); SELECT count(*) FROM runs' | tail -1)
echo "database: $(stat -c %s "$db") bytes, $n runs, $(( $(stat -c %s "$db") / n )) bytes per run"
sqlite3 "$db" "SELECT printf('  %-22s %8d bytes per run', name, sum(pgsize) / $n) FROM dbstat GROUP BY name ORDER BY sum(pgsize) DESC LIMIT 6"
"$build/bin/piano-db" --db "$db" sql "SELECT printf('  per run: %d functions, %d contexts, %d calls', (SELECT count(*) FROM stats) / $n, (SELECT count(*) FROM contexts) / $n, (SELECT sum(calls) FROM stats) / $n)"
# PIANO_STORE=later: the runs stay in the spool; the next piano-db command stores them
rm -rf "$db" "$db-wal" "$db-shm" "$db.spool"
jq=$work/piano/jq one later PIANO_STORE=later LD_LIBRARY_PATH="$build/lib"
left=$(find "$db.spool" -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "spool left by PIANO_STORE=later: $(du -s --block-size=1 "$db.spool" | cut -f1) bytes (du), $left runs, $(( $(du -s --block-size=1 "$db.spool" | cut -f1) / left )) bytes per run"
if command -v perf >/dev/null; then
    perf stat -x, -e task-clock,page-faults "$build/bin/piano-db" --db "$db" runs 2>"$work/stat" >/dev/null
    awk -F, -v n="$left" '/task-clock/{c=$1} /page-faults/{f=$1} END{printf "piano-db runs storing them: cpu %.1f ms (%.2f ms a run), faults %d\n", c, c/n, f}' "$work/stat"
fi
if [ "${STORE_ROUNDS:-3}" -gt 0 ] && command -v perf >/dev/null; then
    echo "side by side, $runs runs a round, ${STORE_ROUNDS:-3} rounds (task-clock ms, page faults); load: $(cut -d' ' -f1-3 /proc/loadavg)"
    for ((r = 0; r < ${STORE_ROUNDS:-3}; r++)); do
        for mode in plain exit later; do
            rm -rf "$db" "$db-wal" "$db-shm" "$db.spool"
            if [ $mode = plain ]; then bin=$work/plain/jq; else bin=$work/piano/jq; fi
            env LD_LIBRARY_PATH="$build/lib" PIANO_STORE=$mode perf stat -x, -e task-clock,page-faults -r "$runs" \
                "$bin" '.a|add' "$work/in.json" 2>"$work/stat" >/dev/null
            awk -F, -v l="$mode" '/task-clock/{c=$1} /page-faults/{f=$1} END{printf "  %-6s cpu %7.2f ms  faults %5d\n", l, c, f}' "$work/stat"
        done
    done | awk '{print} {c[$1]+=$3; f[$1]+=$6; n[$1]++; if (!($1 in o)) o[$1]=++k} END{for (l in o) printf "mean %-6s cpu %7.2f ms  faults %5d\n", l, c[l]/n[l], f[l]/n[l]}'
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ -n "${COMPARE_LIB:-}" ] && command -v perf >/dev/null; then
    other=$(cd "$COMPARE_LIB" && pwd)
    echo "side by side, $runs runs a round, ${ROUNDS:-5} rounds (task-clock ms, page faults); load: $(cut -d' ' -f1-3 /proc/loadavg)"
    for ((r = 0; r < ${ROUNDS:-5}; r++)); do
        for mode in recording disabled; do
            for lib in "$other" "$build/lib"; do
                rm -rf "$db" "$db-wal" "$db-shm" "$db.spool"
                env LD_LIBRARY_PATH="$lib" $([ $mode = disabled ] && echo PIANO_DISABLE=1) \
                    perf stat -x, -e task-clock,page-faults -r "$runs" "$work/piano/jq" '.a|add' "$work/in.json" 2>"$work/stat" >/dev/null
                awk -F, -v l="$mode:$lib" '/task-clock/{c=$1} /page-faults/{f=$1} END{printf "  %-50s cpu %7.2f ms  faults %5d\n", l, c, f}' "$work/stat"
            done
        done
    done | awk '{print} {c[$1]+=$3; f[$1]+=$6; n[$1]++; if (!($1 in o)) o[$1]=++k} END{for (l in o) printf "mean %-45s cpu %7.2f ms  faults %5d\n", l, c[l]/n[l], f[l]/n[l]}'
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
