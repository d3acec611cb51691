#!/bin/sh
# viz_test.sh SECTION PIANO_DB MAKE_FIXTURE WORKDIR
# flamegraph, plot frames, plot timeline and export against the 'tree' fixture (make_fixture.c),
# checked exactly and, where Debian has one, with an independent reader:
# protoc (pprof), callgrind_annotate (callgrind), jq or python3 (chrome JSON),
# xmllint or python3 (SVG well-formedness). A section whose reader is missing
# exits 77 (ctest: skipped). Sections: export flamegraph plot.
set -u
SECTION=$1 P=$2 FX=$3 W=$4
HERE=$(cd "$(dirname "$0")" && pwd)
export TZ=UTC NO_COLOR=1 LC_ALL=C
unset PIANO_DB
rm -rf "$W" && mkdir -p "$W" || exit 1
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
have() { command -v "$1" > /dev/null 2>&1; }
# expect NAME CMD... : stdout of CMD must equal stdin, exit status 0.
expect() {
    name=$1; shift
    cat > "$W/expected"
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    if [ $rc -ne 0 ]; then fail "$name: exit $rc: $(cat "$W/err")"; return; fi
    cmp -s "$W/expected" "$W/out" || { fail "$name: output differs"; diff -u "$W/expected" "$W/out"; }
}
# eq NAME GOT WANT
eq() { [ "$2" = "$3" ] || fail "$1: got '$2', wanted '$3'"; }
# error NAME RC 'MESSAGE' CMD...
error() {
    name=$1 want=$2 msg=$3; shift 3
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    [ $rc -eq "$want" ] || fail "$name: exit $rc, wanted $want"
    [ "$(cat "$W/err")" = "piano-db: $msg" ] || fail "$name: stderr '$(cat "$W/err")', wanted 'piano-db: $msg'"
}
wellformed() { # FILE
    if have xmllint; then xmllint --noout "$1" || fail "$1 is not well-formed XML"
    else python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$1" || fail "$1 is not well-formed XML"; fi
}
q() { "$P" --db "$T" sql "$1"; }

T=$W/tree.db
"$FX" tree "$T" || exit 1
PARSE='ns::Parser<std::vector<int>>::parse(int&)'

case $SECTION in
export)
have sqlite3 || { echo "SKIP: sqlite3 missing"; exit 77; }
# folded: one line per merged context path with self time, threads merged.
expect folded "$P" export --db "$T" --format folded <<EOF
main 1500
main;$PARSE 6000
main;$PARSE;leaf 2000
main;resolve<A&B> 3000
leaf 50
EOF
"$P" export --db "$T" tree_base --format folded -o "$W/base.folded" || fail "folded -o"
grep -q '^main;old_fn 700$' "$W/base.folded" || fail "folded of run 1 lacks main;old_fn 700"
# the values add up to the stored contexts' self time, run by run
for r in 1 2; do
    got=$("$P" export --db "$T" "$r" --format folded | awk '{ s += $NF } END { print s + 0 }')
    eq "folded sum run $r" "$got" "$(q "SELECT sum(self_ns) FROM contexts WHERE run = $r")"
done
# --metric: self CPU time (run 2 measured three quarters of each context's self time), off-CPU
expect folded_cpu "$P" export --db "$T" --format folded --metric cpu <<EOF
main 1125
main;$PARSE 4500
main;$PARSE;leaf 1500
main;resolve<A&B> 2250
leaf 37
EOF
expect folded_offcpu "$P" export --db "$T" --format folded --metric offcpu <<EOF
main 375
main;$PARSE 1500
main;$PARSE;leaf 500
main;resolve<A&B> 750
leaf 13
EOF
error metric_not_measured 1 "run 1 has no CPU time (recorded without PIANO_CPU=1, or perf_event_open was refused)" \
    "$P" export --db "$T" 1 --format folded --metric cpu
error metric_bad 2 "export: unknown metric 'heap' (wall|cpu|offcpu)" "$P" export --db "$T" --format folded --metric heap
error metric_pprof 2 "export: --metric goes with --format folded or callgrind (pprof carries every metric)" \
    "$P" export --db "$T" --format pprof --metric cpu
expect folded_thread "$P" export --db "$T" --format folded --thread 1 <<EOF
main 500
main;$PARSE 2000
leaf 50
EOF

# pprof: gunzipped, decoded by protoc against test/db/profile.proto.
"$P" export --db "$T" --format pprof -o "$W/p.pb.gz" || fail "pprof export"
gzip -t "$W/p.pb.gz" || fail "pprof output is not gzip"
if have protoc; then
    gzip -dc "$W/p.pb.gz" | protoc -I"$HERE" --decode=perftools.profiles.Profile profile.proto > "$W/p.txt" ||
        fail "protoc cannot decode the pprof output"
    # sample value sums (calls, self, alloc_space, alloc_objects, cpu) = the stats table's
    got=$(awk '/^sample \{/ { i = 0 } /^  value:/ { v[i % 5] += $2; i++ } END { print v[0], v[1], v[2], v[3], v[4] }' "$W/p.txt")
    eq "pprof sample sums" "$got" "$(q "SELECT sum(calls) || ' ' || sum(self_ns) || ' ' || sum(alloc_bytes) || ' ' || sum(allocs) || ' ' || sum(cpu_ns) FROM stats WHERE run = 2")"
    eq "pprof samples" "$(grep -c '^sample {' "$W/p.txt")" 5
    eq "pprof string 0" "$(grep -m1 '^string_table' "$W/p.txt")" 'string_table: ""'
    # sample types in order, by their strings
    got=$(awk 'BEGIN { n = m = 0 } /^string_table:/ { s[n++] = $2 } /^  type:/ { t[m] = $2 } /^  unit:/ { u[m++] = $2 }
               END { for (i = 0; i < m; i++) printf "%s/%s ", s[t[i]], s[u[i]] }' "$W/p.txt")
    eq "pprof sample types" "$got" '"calls"/"count" "self"/"nanoseconds" "alloc_space"/"bytes" "alloc_objects"/"count" "cpu"/"nanoseconds" '
    # a run that did not measure CPU time has no cpu sample type
    "$P" export --db "$T" 1 --format pprof -o "$W/p1.pb.gz" || fail "pprof export of run 1"
    eq "pprof sample types of run 1" "$(gzip -dc "$W/p1.pb.gz" | protoc -I"$HERE" --decode=perftools.profiles.Profile profile.proto |
        grep -c '^sample_type')" 4
    # main;parse;leaf: locations leaf first; function ids name the functions
    got=$(awk '/^string_table:/ { s[n++] = $0 } /^function \{/ { inf = 1 } inf && /^  id:/ { id = $2 }
               inf && /^  name:/ { name[id] = $2 } /^}/ { inf = 0 }
               /^sample \{/ { path = ""; ins = 1 } ins && /^  location_id:/ { path = path " " $2 }
               ins && /^  value:/ { k++; if (k == 2 && $2 == 2000 && split(path, a, " ") == 3) hit = path }
               /^sample \{/ { k = 0 }
               END { split(hit, a, " "); for (i = 1; i <= 3; i++) { sub(/^string_table: /, "", s[name[a[i]]]); printf "%s ", s[name[a[i]]] } }' "$W/p.txt")
    eq "pprof leaf-first path" "$got" '"leaf" "ns::Parser<std::vector<int>>::parse(int&)" "main" '
    grep -q '^default_sample_type: 3$' "$W/p.txt" || fail "pprof default sample type is not 'self'"
else
    echo "note: protoc missing (apt-get install protobuf-compiler): pprof decoding not checked"
fi
"$P" export --db "$T" --format pprof > "$W/stdout.pb.gz" 2> "$W/err" && gzip -t "$W/stdout.pb.gz" ||
    fail "pprof to a pipe: $(cat "$W/err")"

# chrome: one X event per frame, thread names, microseconds.
"$P" export --db "$T" --format chrome -o "$W/c.json" || fail "chrome export"
if have jq; then
    eq "chrome X events" "$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$W/c.json")" "$(q 'SELECT count(*) FROM frames WHERE run = 2')"
    eq "chrome first frame" "$(jq -c '[.traceEvents[] | select(.ph == "X")][0] | [.name, .pid, .tid, .ts, .dur, .args.allocs, .args.self_ns.leaf]' "$W/c.json")" \
        "[\"$PARSE\",4000,4000,0,3,1,500]"
    eq "chrome spike frame" "$(jq -c '[.traceEvents[] | select(.ph == "X")][2] | [.name, .ts, .dur, .args.frame]' "$W/c.json")" \
        '["resolve<A&B>",4,9,3]'
    eq "chrome thread names" "$(jq -c '[.traceEvents[] | select(.name == "thread_name") | [.tid, .args.name]]' "$W/c.json")" \
        '[[4000,"main"],[4001,"worker<1>"]]'
    eq "chrome thread 1 only" "$("$P" export --db "$T" --format chrome --thread 1 | jq -c '[.traceEvents[] | select(.ph == "X") | .tid]')" '[4001]'
elif have python3; then
    python3 -m json.tool "$W/c.json" > /dev/null || fail "chrome output is not JSON"
    eq "chrome X events" "$(grep -c '"ph": "X"' "$W/c.json")" 4
else
    echo "note: neither jq nor python3: chrome JSON not checked"
fi

# callgrind: callgrind_annotate reads it; totals and per-function self costs.
"$P" export --db "$T" --format callgrind -o "$W/cg.out" || fail "callgrind export"
if have callgrind_annotate; then
    callgrind_annotate "$W/cg.out" > "$W/cg.txt" 2>&1 || fail "callgrind_annotate: $(head -3 "$W/cg.txt")"
    grep -q '^12,550 (100.0%) 42 (100.0%) 8 (100.0%)  PROGRAM TOTALS' "$W/cg.txt" || fail "callgrind totals: $(grep TOTALS "$W/cg.txt")"
    grep -q '^ *6,000 ([ 0-9.]*%) *12 ([ 0-9.]*%) *5 ([ 0-9.]*%)  parse.cpp:ns::Parser<std::vector<int>>::parse(int&)$' "$W/cg.txt" ||
        fail "callgrind parse row: $(grep parse "$W/cg.txt")"
    "$P" export --db "$T" --format callgrind --metric cpu -o "$W/cgc.out" || fail "callgrind --metric cpu"
    callgrind_annotate "$W/cgc.out" 2>&1 | grep -q '^9,412 (100.0%) 42 (100.0%) 8 (100.0%)  PROGRAM TOTALS' ||
        fail "callgrind --metric cpu totals: $(callgrind_annotate "$W/cgc.out" 2>&1 | grep TOTALS)"
    callgrind_annotate --inclusive=yes "$W/cg.out" > "$W/cgi.txt" 2>&1 || fail "callgrind_annotate --inclusive"
    grep -q '^ *12,500 ([ 0-9.]*%) .*main.cpp:main$' "$W/cgi.txt" || fail "callgrind inclusive main: $(grep main "$W/cgi.txt")"
else
    echo "note: callgrind_annotate missing (apt-get install valgrind): callgrind not checked"
fi

error format_missing 2 "export: --format wants folded, pprof, chrome or callgrind" "$P" export --db "$T"
error format_bad 2 "export: unknown format 'svg' (folded|pprof|chrome|callgrind)" "$P" export --db "$T" --format svg
error export_unwritable 1 "cannot write $W/nope/x: No such file or directory" "$P" export --db "$T" --format folded -o "$W/nope/x"
"$P" export --help | grep -q '^usage: piano-db export' || fail "export --help"
;;

flamegraph)
"$P" flamegraph --db "$T" -o "$W/f.svg" || fail "flamegraph"
wellformed "$W/f.svg"
eq "frames drawn" "$(grep -c '^<g class="f"' "$W/f.svg")" 6
grep -q 'data-n="ns::Parser&lt;std::vector&lt;int&gt;&gt;::parse(int&amp;)"' "$W/f.svg" || fail "escaped C++ name missing"
grep -q '<title>resolve&lt;A&amp;B&gt; | 3.00us (23.90%), 3 calls, self 3.00us, 2 allocs</title>' "$W/f.svg" || fail "resolve title: $(grep -o '<title>resolve[^/]*' "$W/f.svg")"
# widths are inclusive time: main is 12500 of 12550 ns over 1180 px, after leaf's 50 (names in order)
grep -q 'data-n="main"><title>main | 12.50us (99.60%)' "$W/f.svg" || fail "main title"
grep -q '<g class="f" data-x="4.7012" data-w="1175.2988" data-d="1" data-n="main">' "$W/f.svg" || fail "main geometry: $(grep 'data-n="main"' "$W/f.svg" | cut -c1-90)"
grep -Eq '<(script|link|image|use)[^>]* (href|src)=' "$W/f.svg" && fail "flamegraph refers to an external resource"
# --metric offcpu: widths and self figures are off-CPU time (a quarter of each context's self time)
"$P" flamegraph --db "$T" --metric offcpu -o "$W/foff.svg" || fail "flamegraph --metric offcpu"
wellformed "$W/foff.svg"
grep -q '<title>resolve&lt;A&amp;B&gt; | 750.00ns (23.90%), 3 calls, self 750.00ns, 2 allocs</title>' "$W/foff.svg" ||
    fail "offcpu resolve title: $(grep -o '<title>resolve[^/]*' "$W/foff.svg")"
error flame_metric_not_measured 1 "run 1 has no CPU time (recorded without PIANO_CPU=1, or perf_event_open was refused)" \
    "$P" flamegraph --db "$T" 1 --metric cpu
"$P" flamegraph --db "$T" --thread 1 > "$W/f1.svg" || fail "flamegraph --thread 1 to stdout"
eq "thread 1 frames" "$(grep -c '^<g class="f"' "$W/f1.svg")" 4
# --diff: widths from B (run 2), red = slower (resolve), blue = faster (parse)
"$P" flamegraph --db "$T" --diff tree_base tree_new -o "$W/d.svg" || fail "flamegraph --diff"
wellformed "$W/d.svg"
grep -q 'data-n="resolve&lt;A&amp;B&gt;">.*self 1.00us -> 3.00us (+2.00us, +200.0%).*fill="rgb(255,40,40)"' "$W/d.svg" || fail "diff: resolve not the reddest"
grep -q 'data-n="ns::Parser[^"]*">.*self 8.00us -> 6.00us (-2.00us, -25.0%).*fill="rgb(40,40,255)"' "$W/d.svg" || fail "diff: parse not blue: $(grep 'data-n="ns::Parser' "$W/d.svg" | grep -o 'fill="[^"]*"')"
grep -q 'data-d="3" data-n="leaf">.*fill="rgb(220,220,220)"' "$W/d.svg" || fail "diff: leaf unchanged not grey"
# leaf without parent: new in B, +50 ns of a largest change of 2000: faintly red
grep -q 'data-d="1" data-n="leaf">.*new in B (self +50.00ns).*fill="rgb(255,225,225)"' "$W/d.svg" || fail "diff: new path: $(grep 'data-d="1" data-n="leaf"' "$W/d.svg")"
grep -q 'paths only in run 1 (self 700.00ns) not drawn' "$W/d.svg" || fail "diff: removed paths not named"
"$P" flamegraph --db "$T" --diff > "$W/d2.svg" && cmp -s "$W/d.svg" "$W/d2.svg" || fail "diff defaults are not the two latest runs"
error diff_args 2 "flamegraph: too many arguments (flamegraph --diff [A [B]])" "$P" flamegraph --db "$T" --diff 1 2 3
error unknown_run 1 "no run or tag 'nope' in $T" "$P" flamegraph --db "$T" nope
"$P" flamegraph --help | grep -q '^usage: piano-db flamegraph' || fail "flamegraph --help"
;;

plot)
"$P" plot --db "$T" frames -o "$W/p.svg" || fail "plot frames"
wellformed "$W/p.svg"
eq "bars" "$(grep -c '^<rect class="[bs]"' "$W/p.svg")" 4
eq "spike bars" "$(grep -c '^<rect class="s"' "$W/p.svg")" 1
grep -q '<title>frame 3: 9.00us (spike)</title>' "$W/p.svg" || fail "spike title"
grep -q '4 frames, median 2.75us, max 9.00us, 1 spike (&gt; 2x median, red)' "$W/p.svg" || fail "plot subtitle"
grep -q '>10us</text>' "$W/p.svg" || fail "y axis in human units"
# a million frames: at most 2000 bars, each the longest frame of its bucket
B=$W/big.db
"$FX" big "$B" 1000000 || exit 1
"$P" plot --db "$B" frames -o "$W/big.svg" || fail "plot of 1,000,000 frames"
wellformed "$W/big.svg"
eq "bucketed bars" "$(grep -c '^<rect class="[bs]"' "$W/big.svg")" 2000
grep -q '<title>frames 1-500: max 16.00ms (frame 6), 0 spikes</title>' "$W/big.svg" || fail "bucket title: $(grep -m1 -o '<title>frames[^<]*' "$W/big.svg")"
[ "$(wc -c < "$W/big.svg")" -lt 400000 ] || fail "plot of a million frames is $(wc -c < "$W/big.svg") bytes"
error plot_what 2 "plot: what to plot? (plot frames|heap|timeline [RUN|TAG])" "$P" plot --db "$T"
# plot timeline: self time per interval between snapshots, stacked (make_fixture snaps)
S=$W/snaps.db
"$FX" snaps "$S" || exit 1
"$P" plot --db "$S" timeline 1 -o "$W/tl.svg" || fail "plot timeline"
wellformed "$W/tl.svg"
eq "timeline rects" "$(grep -o '<title>[^<]*</title>' "$W/tl.svg" | tr '\n' '|')" "<title>parse: 100.00ms in 0.000-1.000 s</title>|<title>resolve: 50.00ms in 0.000-1.000 s</title>|<title>parse: 200.00ms in 1.000-2.000 s</title>|<title>parse: 100.00ms in 2.500-3.000 s</title>|<title>resolve: 30.00ms in 2.500-3.000 s</title>|"
eq "timeline legend" "$(sed -n '/<g id="legend">/,/<\/g>/p' "$W/tl.svg" | grep -o '>[a-z]*</text>' | tr '\n' ' ')" ">parse</text> >resolve</text> "
grep -q '4 bars over 3 s' "$W/tl.svg" || fail "timeline subtitle: $(grep -o '<text id="sub"[^<]*' "$W/tl.svg")"
error plot_timeline_none 1 "run 2 has no snapshots: plot timeline needs a run made with PIANO_INTERVAL=SECS" "$P" plot --db "$S" timeline 2
error plot_timeline_thread 2 "plot timeline: snapshots sum the threads: no --thread" "$P" plot --db "$S" timeline 1 --thread 0
"$P" plot --help | grep -q '^usage: piano-db plot frames' || fail "plot --help"
;;
*) echo "unknown section $SECTION"; exit 2 ;;
esac

[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "ok: $SECTION"
