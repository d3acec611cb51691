#!/bin/sh
# push_test.sh SECTION PIANO_DB MAKE_FIXTURE WORKDIR
# piano-db push against pyroscope_stub.py (Pyroscope's Push API and /ingest on
# 127.0.0.1, a free port, checking what the server checks), on the 'tree'
# fixture (make_fixture.c). Each profile the stub saved is decoded by protoc
# with profile.proto and its per-function sums compared with `report --json
# --uncorrected` of the run.
# Sections:
#   accepted  profiles, labels, tags, tenant, sums, times; bad input
#   failures  a server down then up, slow (timeout), 500 then 200, 400, a
#             backend down (503), a run never sent twice
#   follow    --follow-all with --count, with runs added meanwhile; SIGTERM
#   server    the stub's /ingest as Pyroscope's (multipart with format=pprof
#             refused); a row kept for /ingest sent; Pyroscope's limits
#             checked before sending, contexts folded past 16,000 samples
#   auth      credentials used, never stored nor shown
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
# check_req DIR N RUN KIND: request N of DIR is RUN's KIND profile (wall, cpu,
# memory, or memory+inuse: the memory group of a run with heap in use), its
# sums per function those of `report --json --uncorrected RUN`.
check_req() {
    gzip -dc "$1/req-$2.pb.gz" | protoc -I"$HERE" --decode=perftools.profiles.Profile profile.proto \
        > "$1/req-$2.txt" || { fail "protoc cannot decode $1/req-$2"; return; }
    "$P" report --db "$T" --json --uncorrected "$3" > "$1/report-$3.json" || fail "report $3"
    python3 - "$1/req-$2.txt" "$1/report-$3.json" "$4" <<'EOF' || fail "request $2 of $1: sums differ from report $3"
import json, re, sys
text, report, kind = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
strings = [json.loads(s) for s in re.findall(r'^string_table: (".*")$', text, re.M)]
types = [(strings[int(t)], strings[int(u)]) for t, u in re.findall(r'^sample_type \{\n  type: (\d+)\n  unit: (\d+)', text, re.M)]
kinds = {"wall": [("wall", "nanoseconds", "self_ns"), ("calls", "count", "calls")],
         "cpu": [("cpu", "nanoseconds", "cpu_ns")],
         "memory": [("alloc_objects", "count", "allocs"), ("alloc_space", "bytes", "alloc_bytes")],
         "memory+inuse": [("alloc_objects", "count", "allocs"), ("alloc_space", "bytes", "alloc_bytes"),
                          ("inuse_objects", "count", "inuse_objects"), ("inuse_space", "bytes", "inuse_bytes")]}[kind]
assert types == [k[:2] for k in kinds], types
# the period type as Go's profiles of that kind have it (Pyroscope's profile type id holds it)
period = re.findall(r'^period_type \{\n  type: (\d+)\n  unit: (\d+)', text, re.M)
want_period = {"wall": ("wall", "nanoseconds"), "cpu": ("cpu", "nanoseconds")}.get(kind, ("space", "bytes"))
assert [(strings[int(t)], strings[int(u)]) for t, u in period] == [want_period], period
names = {int(i): strings[int(n)] for i, n in re.findall(r'^function \{\n  id: (\d+)\n  name: (\d+)', text, re.M)}
zero = [0] * len(kinds)
got = {}
for block in re.findall(r'^sample \{\n(.*?)^\}', text, re.M | re.S):
    locs = [int(x) for x in re.findall(r'location_id: (\d+)', block)]
    vals = [int(x) for x in re.findall(r'value: (\d+)', block)]
    s = got.setdefault(names[locs[0]], list(zero))   # location id = function id; leaf first
    for i, v in enumerate(vals):
        s[i] += v
want = {}
for row in report:
    w = want.setdefault(row["function"], list(zero))
    for i, k in enumerate(kinds):
        w[i] += row[k[2]]
want = {k: v for k, v in want.items() if v != zero}
got = {k: v for k, v in got.items() if v != zero}
if got != want:
    print("pprof", got, "\nreport", want)
    sys.exit(1)
EOF
}
# label_of DIR N NAME: a label of the series request N was stored in
label_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["labels"].get(sys.argv[2]))' "$1/req-$2.json" "$3"; }
# labels_of DIR N: its labels, "k=v,..." sorted
labels_of() { python3 -c 'import json, sys; print(",".join("%s=%s" % kv for kv in sorted(json.load(open(sys.argv[1]))["labels"].items())))' "$1/req-$2.json"; }
meta_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1/req-$2.json" "$3"; }

now_ns() { python3 -c 'import time; print(time.time_ns())'; }
case $SECTION in
accepted)
stub "$W/s1"
# run 2 started 10 minutes ago (in Pyroscope's 1-hour window): its profiles carry its start
recent=$(( $(now_ns) - 600000000000 ))
sqlite3 "$T" "UPDATE runs SET started_ns = $recent WHERE id = 2"
"$P" push --db "$T" "http://127.0.0.1:$PORT" > "$W/out" 2> "$W/err"
eq "push exit" $? 0
# run 2 measured CPU (the fixture's cpu_mode 'perf'): a cpu group beside wall and memory
has "push says" "pushed run 2 to http://127.0.0.1:$PORT as tree{tag=tree_new}: wall, cpu, memory" "$W/out"
eq "requests" "$(saved "$W/s1")" 3
check_req "$W/s1" 1 2 wall
check_req "$W/s1" 2 2 cpu
check_req "$W/s1" 3 2 memory
eq "the Push API" "$(meta_of "$W/s1" 1 api) $(meta_of "$W/s1" 1 path)" "push /push.v1.PusherService/Push"
eq "wall labels" "$(labels_of "$W/s1" 1)" "__delta__=false,__name__=wall,service_name=tree,tag=tree_new"
eq "cpu: process_cpu" "$(labels_of "$W/s1" 2)" "__delta__=false,__name__=process_cpu,service_name=tree,tag=tree_new"
eq "memory" "$(label_of "$W/s1" 3 __name__)" memory
eq "time: the run's start" "$(meta_of "$W/s1" 1 time_nanos)" "$recent"
# --app, labels in order, then the tag; a tag, --tenant; run 1 by its tag; /ingest in the URL is the same server.
# Run 1 measured no CPU: no cpu group. It started in 2023: out of Pyroscope's window, its
# profiles go with the time they are sent.
before=$(now_ns)
"$P" push --db "$T" "http://127.0.0.1:$PORT/ingest" tree_base --app my.app-1/x --label env=ci --label host=h_1 \
    --label k8s.pod=p1 --tenant team-a > "$W/out" 2> "$W/err" || fail "push tree_base: $(cat "$W/err")"
has "without CPU: no cpu group" "as my.app-1/x{env=ci,host=h_1,k8s.pod=p1,tag=tree_base}: wall, memory$" "$W/out"
has "restamped: said" "^2 profiles older than Pyroscope's 1-hour window went with the time they were sent$" "$W/out"
eq "labels" "$(labels_of "$W/s1" 4)" "__delta__=false,__name__=wall,env=ci,host=h_1,k8s.pod=p1,service_name=my.app-1/x,tag=tree_base"
eq "tenant" "$(meta_of "$W/s1" 4 tenant)" team-a
t=$(meta_of "$W/s1" 4 time_nanos)
[ "$t" -ge "$before" ] && [ "$t" -le "$(now_ns)" ] || fail "an old run's profile: time $t, not the time it was sent"
check_req "$W/s1" 4 1 wall
check_req "$W/s1" 5 1 memory
# never twice: run 2 went to this server (no tenant) already
"$P" push --db "$T" "http://127.0.0.1:$PORT" --label tag=mine 2 > "$W/out" 2>&1 || fail "push 2 again"
has "again: nothing sent" "^run 2 went to http://127.0.0.1:$PORT before (sent, or kept for the next push): not sent again (--again sends it anew)$" "$W/out"
eq "again: no request" "$(saved "$W/s1")" 5
"$P" push --db "$T" "http://127.0.0.1:$PORT" --label tag=mine --again 2 > /dev/null || fail "push --label tag --again"
eq "--label tag replaces the tags" "$(label_of "$W/s1" 6 tag)" "mine"
# a run without allocations has no memory profile
"$P" --db "$T" sql "UPDATE contexts SET allocs = 0, alloc_bytes = 0 WHERE run = 1"
"$P" push --db "$T" "http://127.0.0.1:$PORT" 1 > "$W/out" 2>&1 || fail "push without allocations"
has "push without allocations" "as tree{tag=tree_base}: wall$" "$W/out"
eq "without allocations: one profile" "$(saved "$W/s1")" 9
eq "nothing kept" "$(queued)" 0
# heap in use (as PIANO_HEAP=1 stores it: runs.heap_peak_bytes, contexts' and
# stats' inuse_*, stats the sums of the contexts): the memory group carries
# inuse_objects and inuse_space beside alloc_* (Go's heap profile)
"$P" --db "$T" sql "UPDATE runs SET heap_peak_bytes = 1000000 WHERE id = 2;
  UPDATE contexts SET inuse_objects = allocs / 2, inuse_bytes = alloc_bytes / 3, peak_inuse_bytes = 0 WHERE run = 2;
  UPDATE stats SET peak_inuse_bytes = 0, (inuse_objects, inuse_bytes) = (SELECT sum(c.inuse_objects), sum(c.inuse_bytes)
    FROM contexts c WHERE c.run = stats.run AND c.thread = stats.thread AND c.fn = stats.fn) WHERE run = 2"
[ "$("$P" --db "$T" sql 'SELECT sum(inuse_bytes) > 0 FROM stats WHERE run = 2')" = 1 ] || fail "the fixture's heap in use"
"$P" push --db "$T" "http://127.0.0.1:$PORT" 2 --again > "$W/out" 2>&1 || fail "push with heap in use"
has "with heap in use: the groups" "as tree{tag=tree_new}: wall, cpu, memory$" "$W/out"
eq "with heap in use: three profiles" "$(saved "$W/s1")" 12
check_req "$W/s1" 12 2 memory+inuse
# bad input: one line, exit 2, nothing sent
for bad in "nonsense" "ftp://127.0.0.1/" "http://127.0.0.1:$PORT/?x=1" "http://" "http://127.0.0.1:$PORT --label a" \
           "http://127.0.0.1:$PORT --label 1a=b" "http://127.0.0.1:$PORT --label a=b,c" \
           "http://127.0.0.1:$PORT --label a=b --label a=c" "http://127.0.0.1:$PORT --app a:b" \
           "http://127.0.0.1:$PORT --label a-b=c" "http://127.0.0.1:$PORT --label __x=c" \
           "http://127.0.0.1:$PORT --label service_name=c" "http://127.0.0.1:$PORT --tenant a/b" \
           "http://127.0.0.1:$PORT --tenant .." "http://127.0.0.1:$PORT --tenant $(printf 't%.0s' $(seq 151))" \
           "http://127.0.0.1:$PORT $(for i in $(seq 27); do printf -- '--label l%d=v ' $i; done)" \
           "http://127.0.0.1:$PORT --label a=$(printf '\377')" "http://127.0.0.1:$PORT --auth nocolon" \
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
eq "no request from bad input" "$(saved "$W/s1")" 12
"$P" push --help | grep -q '^usage: piano-db push URL' || fail "push --help"
;;

failures)
# down, then up: the first push keeps its three profiles (exit 4, one line),
# the next one (--kept) sends them and the queue empties.
stub "$W/s1"
stop_stub
DOWN=$PORT
start=$(date +%s)
"$P" push --db "$T" "http://127.0.0.1:$DOWN" > "$W/out" 2> "$W/err"
eq "down: exit" $? 4
eq "down: one line" "$(wc -l < "$W/err")" 1
has "down: says" "piano-db: push: http://127.0.0.1:$DOWN: .*(3 tries); 3 profiles kept in $T for the next push" "$W/err"
[ $(($(date +%s) - start)) -lt 20 ] || fail "down: took over 20 s"
eq "down: kept" "$(queued)" 3
eq "down: kept kinds" "$(sqlite3 "$T" "SELECT group_concat(kind, ',') FROM (SELECT kind FROM pushes ORDER BY id)")" "wall,cpu,memory"
stub "$W/s2" --port "$DOWN"
"$P" push --db "$T" "http://127.0.0.1:$DOWN" --kept > "$W/out" 2> "$W/err"
eq "up: exit" $? 0
has "up: says" "sent 3 kept profiles to http://127.0.0.1:$DOWN" "$W/out"
eq "up: queue empty" "$(queued)" 0
eq "up: requests" "$(saved "$W/s2")" 3
check_req "$W/s2" 1 2 wall
check_req "$W/s2" 2 2 cpu
check_req "$W/s2" 3 2 memory
stop_stub

# a push to another server does not send what was kept for this one; the
# next push to it sends them first, then its run
stub "$W/s3"
"$P" push --db "$T" "http://127.0.0.1:$DOWN" --again > /dev/null 2>&1
eq "down again: kept" "$(queued)" 3
"$P" push --db "$T" "http://127.0.0.1:$PORT" tree_base > /dev/null 2>&1 || fail "push to another server"
eq "other server: still kept" "$(queued)" 3
eq "other server: its run only" "$(saved "$W/s3")" 2
stop_stub
stub "$W/s4" --port "$DOWN"
"$P" push --db "$T" "http://127.0.0.1:$DOWN" tree_base > "$W/out" 2> "$W/err" || fail "kept first: $(cat "$W/err")"
eq "kept first: requests" "$(saved "$W/s4")" 5
eq "kept first: the kept one first" "$(label_of "$W/s4" 1 tag)" "tree_new"
eq "kept first: then the run" "$(label_of "$W/s4" 4 tag)" "tree_base"
eq "kept first: queue empty" "$(queued)" 0
stop_stub

# slow: each try times out (--timeout 1), bounded; the profile is kept
stub "$W/s5" --mode slow
start=$(date +%s)
"$P" push --db "$T" "http://127.0.0.1:$PORT" --again --timeout 1 > "$W/out" 2> "$W/err"
eq "slow: exit" $? 4
[ $(($(date +%s) - start)) -lt 15 ] || fail "slow: took over 15 s"
has "slow: says" "imed out.*(3 tries); 3 profiles kept" "$W/err"
eq "slow: kept" "$(queued)" 3
eq "slow: the reason kept" "$(sqlite3 "$T" "SELECT count(*) FROM pushes WHERE error LIKE '%imed out%'")" 1
echo ok > "$W/s5/mode"
"$P" push --db "$T" "http://127.0.0.1:$PORT" --kept > /dev/null 2>&1 || fail "slow then ok: --kept"
eq "slow then ok: queue empty" "$(queued)" 0
stop_stub

# 500, then 200: retried, sent, nothing kept
stub "$W/s6" --mode 500-1
"$P" push --db "$T" "http://127.0.0.1:$PORT" --again > "$W/out" 2> "$W/err"
eq "500 then 200: exit" $? 0
eq "500 then 200: failed once" "$(cat "$W/s6/failed")" 1
eq "500 then 200: all sent" "$(saved "$W/s6")" 3
eq "500 then 200: nothing kept" "$(queued)" 0
check_req "$W/s6" 1 2 wall
stop_stub

# 400: the server's message, one line per profile, not retried, not kept, exit 1
stub "$W/s7" --mode 400
"$P" push --db "$T" "http://127.0.0.1:$PORT" --again > "$W/out" 2> "$W/err"
eq "400: exit" $? 1
has "400: message" "^piano-db: push: http://127.0.0.1:$PORT refused run 2's wall profile: HTTP 400: invalid profile: piano test refusal; not kept$" "$W/err"
eq "400: one line per profile" "$(wc -l < "$W/err")" 3
eq "400: not retried" "$(cat "$W/s7/failed")" 3
eq "400: not kept" "$(queued)" 0
stop_stub

# the backend down behind the server (Push: 503; /ingest said 422 for it, as for
# a refusal): kept, sent when it is back
stub "$W/s8" --mode backend-down
"$P" push --db "$T" "http://127.0.0.1:$PORT" --again > "$W/out" 2> "$W/err"
eq "backend down: exit" $? 4
has "backend down: says" "HTTP 503: ingester unavailable: piano test backend failure (3 tries); 3 profiles kept" "$W/err"
echo ok > "$W/s8/mode"
"$P" push --db "$T" "http://127.0.0.1:$PORT" --kept > /dev/null 2>&1 || fail "backend back: --kept"
eq "backend back: sent" "$(saved "$W/s8")" 3
eq "backend back: queue empty" "$(queued)" 0
stop_stub

# never twice: a run kept (the server down), pushed again once the server is
# up: its kept profiles go, the run is not sent a second time; the server
# counts it once
stub "$W/s9"
stop_stub
D=$PORT
"$P" push --db "$T" "http://127.0.0.1:$D" 1 > /dev/null 2>&1
eq "twice: kept" "$(queued)" 2
stub "$W/s10" --port "$D"
"$P" push --db "$T" "http://127.0.0.1:$D" 1 > "$W/out" 2> "$W/err"
eq "twice: exit" $? 0
has "twice: kept sent" "^sent 2 kept profiles to http://127.0.0.1:$D$" "$W/out"
has "twice: the run not again" "^run 1 went to http://127.0.0.1:$D before" "$W/out"
eq "twice: requests" "$(saved "$W/s10")" 2
check_req "$W/s10" 1 1 wall
check_req "$W/s10" 2 1 memory
# another tenant is another store: the run goes there
"$P" push --db "$T" "http://127.0.0.1:$D" 1 --tenant other > /dev/null 2>&1 || fail "twice: another tenant"
eq "twice: another tenant" "$(saved "$W/s10")" 4
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
    for t in ("run_functions", "fn_lists", "threads", "stat_rows", "stat_trees", "context_rows", "context_trees", "frame_rows", "frame_blocks",
              "unfinished"):
        cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t)]
        sel = ",".join("?" if c == "run" else c for c in cols)
        db.execute("INSERT INTO %s(%s) SELECT %s FROM s.%s WHERE run = ?" % (t, ",".join(cols), sel, t), (new, run))
db.commit()
EOF
}
cp "$T" "$W/src.db"
stub "$W/s1"
rm -f "$W/out"
"$P" push --db "$T" "http://127.0.0.1:$PORT" --follow-all --count 3 --label env=follow > "$W/out" 2> "$W/err" &
F=$!
i=0
while ! grep -q '^following' "$W/out" 2> /dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
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
eq "follow: requests (wall, cpu and memory of runs 3 and 5, wall and memory of 4)" "$(saved "$W/s1")" 8
eq "follow: old runs not pushed" "$(grep -c '^pushed run [12] ' "$W/out")" 0
has "follow: run 3" "^pushed run 3 to http://127.0.0.1:$PORT as tree{env=follow}: wall, cpu, memory$" "$W/out"
has "follow: run 4" "^pushed run 4 to http://127.0.0.1:$PORT as tree{env=follow}: wall, memory$" "$W/out"
check_req "$W/s1" 1 3 wall
check_req "$W/s1" 2 3 cpu
check_req "$W/s1" 8 5 memory

# SIGTERM ends it cleanly (exit 0), at once. A fresh file: the background
# shell truncates "out" only once it runs, and the last section's "following"
# line in it would send the signal before piano-db is there to catch it.
rm -f "$W/out"
"$P" push --db "$T" "http://127.0.0.1:$PORT" --follow-all > "$W/out" 2> "$W/err" &
F=$!
i=0
while ! grep -q '^following' "$W/out" 2> /dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $F
i=0
while kill -0 $F 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $F 2> /dev/null && { fail "follow: SIGTERM did not end it within 5 s"; kill -KILL $F; }
wait $F
eq "follow SIGTERM: exit" $? 0
has "follow SIGTERM: says" "^pushed 0 new runs (stopped)$" "$W/out"
;;
server)
# post URL FILE [multipart]: FILE as the body (or a form's 'profile' field); prints
# the status and the answer
post() {
    python3 - "$@" <<'EOF'
import sys, urllib.request, urllib.error
url, data = sys.argv[1], open(sys.argv[2], "rb").read()
ctype = "application/octet-stream"
if len(sys.argv) > 3:
    b = "pianotestboundary"
    data = (b"--" + b.encode() + b'\r\nContent-Disposition: form-data; name="profile"; filename="p.pprof"\r\n'
            b"Content-Type: application/octet-stream\r\n\r\n" + data + b"\r\n--" + b.encode() + b"--\r\n")
    ctype = "multipart/form-data; boundary=" + b
try:
    r = urllib.request.urlopen(urllib.request.Request(url, data, {"Content-Type": ctype}), timeout=20)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
EOF
}
stub "$W/s1"
recent=$(( $(now_ns) - 300000000000 ))
sqlite3 "$T" "UPDATE runs SET started_ns = $recent WHERE id = 2"
"$P" push --db "$T" "http://127.0.0.1:$PORT" 2 > /dev/null 2>&1 || fail "push 2"
eq "push 2" "$(saved "$W/s1")" 3
# The stub's /ingest dispatches as Pyroscope's handler: format=pprof takes the
# body as the pprof; a multipart body without format, its 'profile' field; a
# multipart body with format=pprof fails to decode (422), as piano sent before.
I="http://127.0.0.1:$PORT/ingest?name=tree%7Benv%3Dx%7D&from=1&until=2"
eq "ingest raw + format=pprof" "$(post "$I&format=pprof" "$W/s1/req-1.pb.gz")" "200 "
eq "ingest multipart" "$(post "$I" "$W/s1/req-1.pb.gz" multipart)" "200 "
eq "ingest: its labels" "$(labels_of "$W/s1" 5)" "__delta__=false,__name__=wall,env=x,pyroscope_spy=unknown,service_name=tree"
post "$I&format=pprof" "$W/s1/req-1.pb.gz" multipart > "$W/r"
has "ingest multipart + format=pprof: 422" "^422 .*wrong wireType" "$W/r"
post "http://127.0.0.1:$PORT/ingest?name=a%3Ab%7B%7D&format=pprof" "$W/s1/req-1.pb.gz" > "$W/r"
has "ingest: an app name Pyroscope refuses: 400" "^400 .*invalid service name" "$W/r"
eq "stub: 2 accepted" "$(saved "$W/s1")" 5
# A row kept before piano used the Push API (an /ingest query with
# format=pprof): sent through the Push API, its series from the query's name.
sqlite3 "$T" "INSERT INTO pushes(url, tenant, run, query, profile, kind, tries, error)
  VALUES('http://127.0.0.1:$PORT', NULL, 2, 'name=tree%7Benv%3Dold%2Ctag%3Dtree_new%7D&from=1700000100&until=1700000101&format=pprof',
         readfile('$W/s1/req-1.pb.gz'), 'wall', 3, 'HTTP 422: an old refusal')"
"$P" push --db "$T" "http://127.0.0.1:$PORT" --kept > "$W/out" 2> "$W/err"
eq "old row: exit" $? 0
has "old row: sent" "^sent 1 kept profile to http://127.0.0.1:$PORT$" "$W/out"
eq "old row: its series" "$(labels_of "$W/s1" 6)" "__delta__=false,__name__=wall,env=old,service_name=tree,tag=tree_new"
check_req "$W/s1" 6 2 wall
eq "old row: gone" "$(queued)" 0
# A tag that is not UTF-8: its bytes '_' (Pyroscope refuses such a value)
sqlite3 "$T" "INSERT INTO tags(name, run) VALUES(CAST(X'61FF62' AS TEXT), 1)"
"$P" push --db "$T" "http://127.0.0.1:$PORT" 1 > "$W/out" 2> "$W/err" || fail "a tag not UTF-8: $(cat "$W/err")"
eq "a tag not UTF-8" "$(label_of "$W/s1" 7 tag)" "a_b+tree_base"
# Past 16,000 samples Pyroscope refuses a profile: run 1 given 150 more
# functions, each calling the 150 (22,650 more calling contexts): its lightest
# contexts folded into their callers, every total kept.
# (the contexts as piano-db reads them: its view; the new ones go in rows, as
# an insert through the view puts them)
python3 - "$T" $("$P" --db "$T" sql "SELECT thread, id FROM contexts WHERE run = 1 AND parent IS NULL ORDER BY id LIMIT 1;
    SELECT max(id) FROM contexts WHERE run = 1" | tr '|' ' ') <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
thread, root = int(sys.argv[2]), int(sys.argv[3])
# (the fixture's functions are rows of run_functions; the view functions is piano-db's)
fn0 = db.execute("SELECT max(id) FROM run_functions WHERE run = 1").fetchone()[0] + 1
for k in range(150):
    db.execute("INSERT INTO names(name, file, line) VALUES(?, 'wide.c', ?)", ("wide_%d" % k, k + 1))
    db.execute("INSERT INTO run_functions(run, id, name) VALUES(1, ?, last_insert_rowid())", (fn0 + k,))
cid = int(sys.argv[4]) + 1
rows = []
for a in range(150):
    top = cid; cid += 1
    rows.append((thread, top, root, fn0 + a, 1, 1000 + a, 0))
    for b in range(150):
        rows.append((thread, cid, top, fn0 + b, 2, 1 + (a * 150 + b) % 977, 1)); cid += 1
db.executemany("INSERT INTO context_rows(run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes)"
               " VALUES(1, ?, ?, ?, ?, ?, ?, 0, ?, 8, 0, 0)", rows)
db.commit()
EOF
"$P" push --db "$T" "http://127.0.0.1:$PORT" 1 --again > "$W/out" 2> "$W/err"
eq "folded: exit" $? 0
has "folded: said" "^run 1's wall profile: its [0-9]* lightest calling contexts folded into their callers" "$W/out"
eq "folded: sent" "$(saved "$W/s1")" 10
for k in 9 10; do
    gzip -dc "$W/s1/req-$k.pb.gz" | protoc -I"$HERE" --decode=perftools.profiles.Profile profile.proto > "$W/f$k.txt" || fail "protoc $k"
    n=$(grep -c '^sample {' "$W/f$k.txt")
    [ "$n" -le 16000 ] && [ "$n" -ge 15000 ] || fail "folded: request $k has $n samples"
done
# totals: the profile's sums, the run's contexts' sums
tot() { python3 -c '
import re, sys
t = open(sys.argv[1]).read()
s = [0] * int(sys.argv[2])
for blk in re.findall(r"^sample \{\n(.*?)^\}", t, re.M | re.S):
    for i, v in enumerate(re.findall(r"value: (\d+)", blk)):
        s[i] += int(v)
print(" ".join(map(str, s)))' "$1" "$2"; }
eq "folded: wall totals" "$(tot "$W/f9.txt" 2)" "$("$P" --db "$T" sql 'SELECT sum(self_ns), sum(calls) FROM contexts WHERE run = 1' | tr '|' ' ')"
eq "folded: memory totals" "$(tot "$W/f10.txt" 2)" "$("$P" --db "$T" sql 'SELECT sum(allocs), sum(alloc_bytes) FROM contexts WHERE run = 1' | tr '|' ' ')"
stop_stub
;;

auth)
stub "$W/s1" --auth u:s3cret
# credentials in the URL: used, not shown
"$P" push --db "$T" "http://u:s3cret@127.0.0.1:$PORT" 2 > "$W/out" 2> "$W/err"
eq "in the URL: exit" $? 0
has "in the URL: shown without" "^pushed run 2 to http://127.0.0.1:$PORT as " "$W/out"
eq "in the URL: the server had them" "$(meta_of "$W/s1" 1 auth)" "u:s3cret"
# none: 401, kept (not lost) with a hint, at once (no retries)
"$P" push --db "$T" "http://127.0.0.1:$PORT" 2 --again > "$W/out" 2> "$W/err"
eq "none: exit" $? 4
has "none: says" "HTTP 401: authentication required (credentials: --auth, PIANO_PUSH_AUTH or ~/.netrc" "$W/err"
eq "none: one try" "$(cat "$W/s1/failed")" 1
eq "none: kept" "$(queued)" 3
PIANO_PUSH_AUTH=u:s3cret "$P" push --db "$T" "http://127.0.0.1:$PORT" --kept > "$W/out" 2> "$W/err" || fail "PIANO_PUSH_AUTH: $(cat "$W/err")"
eq "PIANO_PUSH_AUTH: sent" "$(saved "$W/s1")" 6
"$P" push --db "$T" "http://127.0.0.1:$PORT" 1 --auth u:s3cret > /dev/null 2>&1 || fail "--auth"
eq "--auth: sent" "$(meta_of "$W/s1" 7 auth)" "u:s3cret"
stop_stub
# the server down: the password neither on stderr nor in the database
"$P" push --db "$T" "http://u:s3cret@127.0.0.1:$PORT" 2 --again > "$W/out" 2> "$W/err"
eq "down: exit" $? 4
eq "down: not shown" "$(cat "$W/out" "$W/err" | grep -c s3cret)" 0
eq "down: not stored" "$(sqlite3 "$T" "SELECT count(*) FROM pushes WHERE url LIKE '%s3cret%'")" 0
eq "down: kept for the server" "$(sqlite3 "$T" "SELECT DISTINCT url FROM pushes")" "http://127.0.0.1:$PORT"
"$P" push --db "$T" "http://u:s3cret@127.0.0.1:$PORT/?x=1" > "$W/out" 2> "$W/err"
eq "bad URL: exit" $? 2
has "bad URL: the password hidden" "'http://u:\*\*\*@127.0.0.1:$PORT/?x=1'" "$W/err"
eq "bad URL: not shown" "$(grep -c s3cret "$W/err")" 0
# rows stored with credentials in their URL (before): stripped, sent with the server's
sqlite3 "$T" "UPDATE pushes SET url = 'http://u:s3cret@127.0.0.1:$PORT'"
stub "$W/s2" --port "$PORT" --auth u:s3cret
PIANO_PUSH_AUTH=u:s3cret "$P" push --db "$T" "http://127.0.0.1:$PORT" --kept > "$W/out" 2> "$W/err" || fail "old rows: $(cat "$W/err")"
eq "old rows: sent" "$(saved "$W/s2")" 3
eq "old rows: none left" "$(queued)" 0
stop_stub
;;
*) echo "unknown section $SECTION"; exit 2 ;;
esac

[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "push $SECTION: ok"
