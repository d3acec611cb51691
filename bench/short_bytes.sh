#!/usr/bin/env bash
# short_bytes.sh - issue 23's bytes per run, two runtimes side by side: jq's trivial run (the jq
# built by bench/short_run.sh, reused) N times with BASE_LIB's libpiano_rt.so and with this
# build's, interleaved (their histograms, whose sizes follow the machine's load, see the same
# load), each into its own database; prints each database's bytes per run and its largest tables
# per run (dbstat: pages, and payload).
# Usage: BASE_LIB=/path/to/other/build/lib bench/short_bytes.sh BUILD_DIR [N]
#   WORK=dir  where short_run.sh built jq (default /tmp/piano-short-run); the databases go in
#             $OUT (default: a new folder under /tmp)
set -euo pipefail
build=$(cd "${1:?usage: BASE_LIB=dir short_bytes.sh BUILD_DIR [N]}" && pwd)
n=${2:-30}
work=${WORK:-/tmp/piano-short-run}
base=$(cd "${BASE_LIB:?BASE_LIB: the lib folder of the other build}" && pwd)
out=${OUT:-$(mktemp -d /tmp/short-bytes.XXXXXX)}
[ -x "$work/piano/jq" ] || { echo "short_bytes.sh: no $work/piano/jq: run bench/short_run.sh first" >&2; exit 1; }
echo '{"a":[1,2]}' >"$out/in.json"
for ((i = 0; i < n; i++)); do
    LD_LIBRARY_PATH=$base PIANO_DB=$out/base.db "$work/piano/jq" '.a|add' "$out/in.json" >/dev/null
    LD_LIBRARY_PATH=$build/lib PIANO_DB=$out/this.db "$work/piano/jq" '.a|add' "$out/in.json" >/dev/null
done
for d in base this; do
    sqlite3 "$out/$d.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
    size=$(stat -c %s "$out/$d.db")
    echo "$d: $((size / n)) bytes per run"
    sqlite3 "$out/$d.db" "SELECT printf('  %-24s %7d bytes per run (payload %d)', name, sum(pgsize) / $n, sum(payload) / $n)
        FROM dbstat GROUP BY name ORDER BY sum(pgsize) DESC LIMIT 5"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
