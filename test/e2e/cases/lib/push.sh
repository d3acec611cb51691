# Helpers of the push cases' checks (push_follow.check, push_resume.check source it).
for t in python3 protoc; do command -v $t > /dev/null || { echo "SKIP: $t missing"; exit 0; }; done
STUBS=$root/test/db
# the interpreter itself: a launcher in front of it (pyenv's shim) costs seconds a start on a loaded machine
PY=$(python3 -c 'import sys; print(sys.executable)') && [ -x "$PY" ] || PY=python3
# stub DIR [--port N]: the Pyroscope stand-in on 127.0.0.1; sets PORT, SPID
stub() {
  d=$1; shift
  mkdir -p "$d" && rm -f "$d/port"
  "$PY" "$STUBS/pyroscope_stub.py" "$d" "$@" 2> "$d/stderr" &
  SPID=$!
  for _ in $(seq 200); do [ -f "$d/port" ] && break; sleep 0.1; done
  [ -f "$d/port" ] || fail "the stub did not start: $(cat "$d/stderr")"
  PORT=$(cat "$d/port")
}
# on exit: the stub and the program stopped, the case's folder removed (run_case.sh's trap, replaced here)
trap '[ -n "${SPID:-}" ] && kill $SPID 2> /dev/null; [ -n "${PROG:-}" ] && kill $PROG 2> /dev/null
  cd / && { [ -n "${PIANO_KEEP:-}" ] || rm -rf "$work"; }' EXIT
# reqs DIR: how many requests the stub received; reqs_ge DIR N: N or more
reqs() { ls "$1" | grep -c '^req-.*\.json$'; }
reqs_ge() { [ "$(reqs "$1")" -ge "$2" ]; }
# kept_ge N: N or more profiles kept for the next push
kept_ge() { [ "$(q 'SELECT count(*) FROM pushes' 2> /dev/null)" -ge "$1" ] 2> /dev/null; }
# wait_for WHAT CMD...: until CMD succeeds (0.1 s apart, 30 s at most)
wait_for() {
  what=$1; shift
  for _ in $(seq 300); do "$@" && return 0; sleep 0.1; done
  fail "waited 30 s for $what"
}
# long ENV...: the program's long run in the background (pid in PROG), with ENV;
# it runs until stop_long. Returns once its run is live (piano-db runs shows it
# running): a --follow started before follows the latest run, an ended one (the
# previous part's: under load, part 3 of push_follow pushed part 2's run, without
# CPU time, and stopped the program after 0.35 s on its requests)
long() {
  rm -f stop; env "$@" ./prog long > long.out 2> long.err & PROG=$!
  wait_for "the program's run, live" running "$PROG"
}
# running PID: piano-db runs shows PID's run running
running() { db runs --json 2> /dev/null | jq -e --argjson p "$1" 'any(.[]; .pid == $p and .status == "running")' > /dev/null; }
stop_long() { touch stop; wait $PROG || fail "the program: exit $?"; PROG=; }
# sums_all DIR: DIR/req-N.sums for every request, a line "function type=value ..." per
# sample (protoc-decoded), and DIR/req-N.time its time_nanos query parameter (one
# python for all: the check stays quick under load)
sums_all() {
  for f in "$1"/req-*.pb.gz; do
    gzip -dc "$f" | protoc -I"$STUBS" --decode=perftools.profiles.Profile profile.proto > "${f%.pb.gz}.txt" || fail "protoc: $f"
  done
  "$PY" - "$1"/req-*.txt <<'PY'
import json, re, sys
for name in sys.argv[1:]:
    text = open(name).read()
    strings = [json.loads(s) for s in re.findall(r'^string_table: (".*")$', text, re.M)]
    types = [strings[int(t)] for t in re.findall(r'^sample_type \{\n  type: (\d+)', text, re.M)]
    names = {int(i): strings[int(n)] for i, n in re.findall(r'^function \{\n  id: (\d+)\n  name: (\d+)', text, re.M)}
    with open(name[:-4] + ".time", "w") as out:
        print(json.load(open(name[:-4] + ".json")).get("time_nanos", ""), file=out)
    with open(name[:-4] + ".sums", "w") as out:
        for block in re.findall(r'^sample \{\n(.*?)^\}', text, re.M | re.S):
            loc = int(re.findall(r'location_id: (\d+)', block)[0])
            vals = dict(zip(types, [int(x) for x in re.findall(r'value: (\d+)', block)]))
            print(names[loc], " ".join(f"{k}={v}" for k, v in sorted(vals.items())), file=out)
PY
}
# total KEY FILE...: the sum of KEY's values in the .sums FILEs
total() { k=$1; shift; cat "$@" | awk -v k="$k" '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) s += kv[2] } } END { print s + 0 }'; }
# of FUNCTION KEY FILE: FUNCTION's KEY in a .sums FILE (empty: none)
of() { awk -v f="$1" -v k="$2" '$1 == f { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$3"; }
