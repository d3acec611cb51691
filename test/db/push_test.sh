#!/bin/sh
# push_test.sh SECTION PIANO_DB MAKE_FIXTURE WORKDIR
# piano-db push against pyroscope_stub.py (a Pyroscope ingest API on
# 127.0.0.1, a free port), on the 'tree' fixture (make_fixture.c). Each
# profile the stub saved is decoded by protoc with profile.proto and its
# per-function sums compared with `report --json --uncorrected` of the run.
# Sections:
#   accepted  profiles, name, labels, tags, from/until, tenant, sums
#   failures  a server down then up, slow (timeout), 500 then 200, 400
#   follow    --follow-all with --count, with runs added meanwhile; SIGTERM
# Skipped (77) without python3, protoc or sqlite3. Every wait is bounded;
# only loopback addresses.
set -u
SECTION=$1 P=$2 FX=$3 W=$4
HERE=$(cd "$(dirname "$0")" && pwd)
export TZ=UTC NO_COLOR=1 LC_ALL=C
unset PIANO_DB
for t in python3 protoc sqlite3; do
    command -v $t > /dev/null 2>&1 || { echo "SKIP: $t missing"; exit 77; }
done
rm -rf "$W" && mkdir -p "$W" || exit 1
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
eq() { [ "$2" = "$3" ] || fail "$1: got '$2', wanted '$3'"; }
has() { grep -q -- "$2" "$3" || fail "$1: '$2' not in $(cat "$3")"; }
T=$W/tree.db
"$FX" tree "$T" || exit 1
STUB_PID=
# stub DIR [--mode M] [--port N]: starts the stub; sets PORT.
stub() {
    d=$1; shift
    mkdir -p "$d" && rm -f "$d/port"
    python3 "$HERE/pyroscope_stub.py" "$d" "$@" 2> "$d/stderr" &
    STUB_PID=$!
    i=0
    while [ ! -f "$d/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -f "$d/port" ] || { echo "FAIL: the stub did not start: $(cat "$d/stderr")"; exit 1; }
    PORT=$(cat "$d/port")
}
stop_stub() { [ -n "$STUB_PID" ] && kill "$STUB_PID" 2> /dev/null && wait "$STUB_PID" 2> /dev/null; STUB_PID=; }
trap 'stop_stub' EXIT
queued() { sqlite3 "$T" "SELECT count(*) FROM pushes"; }
saved() { ls "$1" | grep -c '^req-.*\.json$'; }
# check_req DIR N RUN KIND: request N of DIR is RUN's KIND profile, its sums
# per function those of `report --json --uncorrected RUN`.
check_req() {
    gzip -dc "$1/req-$2.pb.gz" | protoc -I"$HERE" --decode=perftools.profiles.Profile profile.proto \
        > "$1/req-$2.txt" || { fail "protoc cannot decode $1/req-$2"; return; }
    "$P" report --db "$T" --json --uncorrected "$3" > "$1/report-$3.json" || fail "report $3"
    python3 - "$1/req-$2.txt" "$1/report-$3.json" "$4" <<'EOF' || fail "request $2 of $1: sums differ from report $3"
import json, re, sys
text, report, kind = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
strings = [json.loads(s) for s in re.findall(r'^string_table: (".*")$', text, re.M)]
types = [(strings[int(t)], strings[int(u)]) for t, u in re.findall(r'^sample_type \{\n  type: (\d+)\n  unit: (\d+)', text, re.M)]
want_types = {"wall": [("wall", "nanoseconds"), ("calls", "count")],
              "memory": [("alloc_objects", "count"), ("alloc_space", "bytes")]}[kind]
assert types == want_types, types
names = {int(i): strings[int(n)] for i, n in re.findall(r'^function \{\n  id: (\d+)\n  name: (\d+)', text, re.M)}
got = {}
for block in re.findall(r'^sample \{\n(.*?)^\}', text, re.M | re.S):
    locs = [int(x) for x in re.findall(r'location_id: (\d+)', block)]
    vals = [int(x) for x in re.findall(r'value: (\d+)', block)]
    s = got.setdefault(names[locs[0]], [0, 0])   # location id = function id; leaf first
    s[0] += vals[0]; s[1] += vals[1]
cols = {"wall": ("self_ns", "calls"), "memory": ("allocs", "alloc_bytes")}[kind]
want = {}
for row in report:
    w = want.setdefault(row["function"], [0, 0])
    w[0] += row[cols[0]]; w[1] += row[cols[1]]
want = {k: v for k, v in want.items() if v != [0, 0]}
got = {k: v for k, v in got.items() if v != [0, 0]}
if got != want:
    print("pprof", got, "\nreport", want)
    sys.exit(1)
EOF
}
# query_of DIR N KEY
query_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]].get(sys.argv[3]))' "$1/req-$2.json" query "$3"; }
meta_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1/req-$2.json" "$3"; }

case $SECTION in
accepted)
stub "$W/s1"
"$P" push --db "$T" "http://127.0.0.1:$PORT" > "$W/out" 2> "$W/err"
eq "push exit" $? 0
has "push says" "pushed run 2 to http://127.0.0.1:$PORT as tree{tag=tree_new}: wall, memory" "$W/out"
eq "requests" "$(saved "$W/s1")" 2
check_req "$W/s1" 1 2 wall
check_req "$W/s1" 2 2 memory
eq "name" "$(query_of "$W/s1" 1 name)" "tree{tag=tree_new}"
eq "format" "$(query_of "$W/s1" 1 format)" pprof
eq "body" "$(meta_of "$W/s1" 1 body)" multipart
eq "path" "$(meta_of "$W/s1" 1 path)" /ingest
# from/until: the run's start rounded down, its end rounded up, in seconds
eq "from" "$(query_of "$W/s1" 2 from)" "$(sqlite3 "$T" 'SELECT started_ns / 1000000000 FROM runs WHERE id = 2')"
eq "until" "$(query_of "$W/s1" 2 until)" \
    "$(sqlite3 "$T" 'SELECT (started_ns + duration_ns + 999999999) / 1000000000 FROM runs WHERE id = 2')"
# --app, labels in order, then the tag; a tag, --tenant; run 1 by its tag; /ingest in the URL is the same server
"$P" push --db "$T" "http://127.0.0.1:$PORT/ingest" tree_base --app my.app-1 --label env=ci --label host=h_1 \
    --tenant team-a > "$W/out" 2> "$W/err" || fail "push tree_base: $(cat "$W/err")"
eq "labels" "$(query_of "$W/s1" 3 name)" "my.app-1{env=ci,host=h_1,tag=tree_base}"
eq "tenant" "$(meta_of "$W/s1" 3 tenant)" team-a
check_req "$W/s1" 3 1 wall
check_req "$W/s1" 4 1 memory
"$P" push --db "$T" "http://127.0.0.1:$PORT" --label tag=mine 2 > /dev/null || fail "push --label tag"
eq "--label tag replaces the tags" "$(query_of "$W/s1" 5 name)" "tree{tag=mine}"
# a run without allocations has no memory profile
sqlite3 "$T" "UPDATE contexts SET allocs = 0, alloc_bytes = 0 WHERE run = 1"
"$P" push --db "$T" "http://127.0.0.1:$PORT" 1 > "$W/out" 2>&1 || fail "push without allocations"
has "push without allocations" "as tree{tag=tree_base}: wall$" "$W/out"
eq "without allocations: one profile" "$(saved "$W/s1")" 7
eq "nothing kept" "$(queued)" 0
# bad input: one line, exit 2, nothing sent
for bad in "nonsense" "ftp://127.0.0.1/" "http://127.0.0.1:$PORT/?x=1" "http://" "http://127.0.0.1:$PORT --label a" \
           "http://127.0.0.1:$PORT --label 1a=b" "http://127.0.0.1:$PORT --label a=b,c" \
           "http://127.0.0.1:$PORT --label a=b --label a=c" "http://127.0.0.1:$PORT --app a/b" \
           "http://127.0.0.1:$PORT --timeout 0" "http://127.0.0.1:$PORT --count 1" \
           "http://127.0.0.1:$PORT 1 --follow-all"; do
    # shellcheck disable=SC2086
    "$P" push --db "$T" $bad > "$W/out" 2> "$W/err"
    rc=$?
    [ $rc -eq 2 ] || fail "push $bad: exit $rc, wanted 2"
    [ "$(wc -l < "$W/err")" -eq 1 ] && grep -q '^piano-db: push: ' "$W/err" || fail "push $bad: stderr '$(cat "$W/err")'"
done
"$P" push --db "$T" > /dev/null 2>&1; eq "push without URL" $? 2
"$P" push --db "$T" "http://127.0.0.1:$PORT" nosuchrun > /dev/null 2> "$W/err"; eq "push nosuchrun" $? 1
eq "no request from bad input" "$(saved "$W/s1")" 7
"$P" push --help | grep -q '^usage: piano-db push URL' || fail "push --help"
;;

failures)
# down, then up: the first push keeps both profiles (exit 4, one line), the
# next one (--kept) sends them and the queue empties.
stub "$W/s1"
stop_stub
DOWN=$PORT
start=$(date +%s)
"$P" push --db "$T" "http://127.0.0.1:$DOWN" > "$W/out" 2> "$W/err"
eq "down: exit" $? 4
eq "down: one line" "$(wc -l < "$W/err")" 1
has "down: says" "piano-db: push: http://127.0.0.1:$DOWN: .*(3 tries); 2 profiles kept in $T for the next push" "$W/err"
[ $(($(date +%s) - start)) -lt 20 ] || fail "down: took over 20 s"
eq "down: kept" "$(queued)" 2
stub "$W/s2" --port "$DOWN"
"$P" push --db "$T" "http://127.0.0.1:$DOWN" --kept > "$W/out" 2> "$W/err"
eq "up: exit" $? 0
has "up: says" "sent 2 kept profiles to http://127.0.0.1:$DOWN" "$W/out"
eq "up: queue empty" "$(queued)" 0
eq "up: requests" "$(saved "$W/s2")" 2
check_req "$W/s2" 1 2 wall
check_req "$W/s2" 2 2 memory
stop_stub

# a push to another server does not send what was kept for this one; the
# next push to it sends them first, then its run
stub "$W/s3"
"$P" push --db "$T" "http://127.0.0.1:$DOWN" > /dev/null 2>&1
eq "down again: kept" "$(queued)" 2
"$P" push --db "$T" "http://127.0.0.1:$PORT" tree_base > /dev/null 2>&1 || fail "push to another server"
eq "other server: still kept" "$(queued)" 2
eq "other server: its run only" "$(saved "$W/s3")" 2
stop_stub
stub "$W/s4" --port "$DOWN"
"$P" push --db "$T" "http://127.0.0.1:$DOWN" tree_base > "$W/out" 2> "$W/err" || fail "kept first: $(cat "$W/err")"
eq "kept first: requests" "$(saved "$W/s4")" 4
eq "kept first: the kept one first" "$(query_of "$W/s4" 1 name)" "tree{tag=tree_new}"
eq "kept first: then the run" "$(query_of "$W/s4" 3 name)" "tree{tag=tree_base}"
eq "kept first: queue empty" "$(queued)" 0
stop_stub

# slow: each try times out (--timeout 1), bounded; the profile is kept
stub "$W/s5" --mode slow
start=$(date +%s)
"$P" push --db "$T" "http://127.0.0.1:$PORT" --timeout 1 > "$W/out" 2> "$W/err"
eq "slow: exit" $? 4
[ $(($(date +%s) - start)) -lt 15 ] || fail "slow: took over 15 s"
has "slow: says" "imed out.*(3 tries); 2 profiles kept" "$W/err"
eq "slow: kept" "$(queued)" 2
eq "slow: the reason kept" "$(sqlite3 "$T" "SELECT count(*) FROM pushes WHERE error LIKE '%imed out%'")" 1
echo ok > "$W/s5/mode"
"$P" push --db "$T" "http://127.0.0.1:$PORT" --kept > /dev/null 2>&1 || fail "slow then ok: --kept"
eq "slow then ok: queue empty" "$(queued)" 0
stop_stub

# 500, then 200: retried, sent, nothing kept
stub "$W/s6" --mode 500-1
"$P" push --db "$T" "http://127.0.0.1:$PORT" > "$W/out" 2> "$W/err"
eq "500 then 200: exit" $? 0
eq "500 then 200: failed once" "$(cat "$W/s6/failed")" 1
eq "500 then 200: both sent" "$(saved "$W/s6")" 2
eq "500 then 200: nothing kept" "$(queued)" 0
check_req "$W/s6" 1 2 wall
stop_stub

# 400: the server's message, one line per profile, not retried, not kept, exit 1
stub "$W/s7" --mode 400
"$P" push --db "$T" "http://127.0.0.1:$PORT" > "$W/out" 2> "$W/err"
eq "400: exit" $? 1
has "400: message" "^piano-db: push: http://127.0.0.1:$PORT refused run 2's wall profile: HTTP 400: invalid profile: piano test refusal; not kept$" "$W/err"
eq "400: one line per profile" "$(wc -l < "$W/err")" 2
eq "400: not retried" "$(cat "$W/s7/failed")" 2
eq "400: not kept" "$(queued)" 0
stop_stub
;;

follow)
# add_runs N: copies the fixture's runs into the followed database as new
# runs (ids after the last), N of them (1 or 2), as a finished program would.
add_runs() {
    python3 - "$T" "$W/src.db" "$1" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
db.execute("ATTACH ? AS s", (sys.argv[2],))
off = db.execute("SELECT max(id) FROM runs").fetchone()[0]
for run in (2, 1)[:int(sys.argv[3])]:
    new = off + 1; off += 1
    cols = [r[1] for r in db.execute("PRAGMA table_info(runs)")]
    vals = ["?" if c == "id" else "key || '-' || ?" if c == "key" else c for c in cols]
    db.execute("INSERT INTO runs(%s) SELECT %s FROM s.runs WHERE id = ?" % (",".join(cols), ",".join(vals)),
               (new, new, run))
    for t in ("functions", "threads", "stats", "contexts", "frames", "unfinished"):
        cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t)]
        sel = ",".join("?" if c == "run" else c for c in cols)
        db.execute("INSERT INTO %s(%s) SELECT %s FROM s.%s WHERE run = ?" % (t, ",".join(cols), sel, t), (new, run))
db.commit()
EOF
}
cp "$T" "$W/src.db"
stub "$W/s1"
"$P" push --db "$T" "http://127.0.0.1:$PORT" --follow-all --count 3 --label env=follow > "$W/out" 2> "$W/err" &
F=$!
i=0
while ! grep -q '^following' "$W/out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
has "follow: starts" "^following $T: pushing each new run to http://127.0.0.1:$PORT" "$W/out"
add_runs 2 || fail "add_runs 2"
sleep 0.5
add_runs 1 || fail "add_runs 1"
i=0
while kill -0 $F 2> /dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $F 2> /dev/null && { fail "follow: still running after 20 s"; kill $F; }
wait $F
eq "follow: exit" $? 0
has "follow: count" "^pushed 3 new runs$" "$W/out"
eq "follow: requests (wall and memory of runs 3, 4 and 5)" "$(saved "$W/s1")" 6
eq "follow: old runs not pushed" "$(grep -c '^pushed run [12] ' "$W/out")" 0
has "follow: run 3" "^pushed run 3 to http://127.0.0.1:$PORT as tree{env=follow}: wall, memory$" "$W/out"
check_req "$W/s1" 1 3 wall
check_req "$W/s1" 6 5 memory

# SIGTERM ends it cleanly (exit 0), at once
"$P" push --db "$T" "http://127.0.0.1:$PORT" --follow-all > "$W/out" 2> "$W/err" &
F=$!
i=0
while ! grep -q '^following' "$W/out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $F
i=0
while kill -0 $F 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $F 2> /dev/null && { fail "follow: SIGTERM did not end it within 5 s"; kill -KILL $F; }
wait $F
eq "follow SIGTERM: exit" $? 0
has "follow SIGTERM: says" "^pushed 0 new runs (stopped)$" "$W/out"
;;
*) echo "unknown section $SECTION"; exit 2 ;;
esac

[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "push $SECTION: ok"
