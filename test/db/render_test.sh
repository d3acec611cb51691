#!/bin/sh
# render_test.sh PIANO_DB MAKE_FIXTURE WORKDIR
# Renders the SVGs of flamegraph, flamegraph --diff, plot frames, plot heap and plot timeline in headless
# Chromium: the screenshots must not be blank, the DOM after the scripts ran
# must hold the function names, and a click on a frame must zoom into it.
# Exits 77 (ctest: skipped) when chromium or python3 is missing
# (apt-get install chromium; scripts/deps.sh installs it).
set -u
P=$1 FX=$2 W=$3
HERE=$(cd "$(dirname "$0")" && pwd)
export TZ=UTC NO_COLOR=1 LC_ALL=C
unset PIANO_DB
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$CHROME" ] || { echo "SKIP: chromium not installed (apt-get install chromium)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: python3 missing"; exit 77; }
rm -rf "$W" && mkdir -p "$W" || exit 1
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

chrome() { # ARGS... : one headless run with its own profile, 90 s at most
    prof=$(mktemp -d "$W/profile.XXXXXX")
    timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof" --window-size=1200,800 "$@" 2> "$W/chrome.err"
    rc=$?
    rm -rf "$prof"
    return $rc
}

# shot NAME SVG MINCOLOURS MININK: a screenshot with some colours and ink on it
shot() {
    rm -f "$W/$1.png"
    chrome --screenshot="$W/$1.png" "$2" > /dev/null
    [ -s "$W/$1.png" ] || { fail "$1: no screenshot: $(tail -2 "$W/chrome.err")"; return; }
    set -- "$1" "$2" "$3" "$4" $(python3 "$HERE/png_stats.py" "$W/$1.png")
    [ "$5" = 1200 ] && [ "$6" = 800 ] || fail "$1: screenshot is $5x$6"
    [ "$7" -ge "$3" ] || fail "$1: only $7 colours"
    awk -v i="$8" -v m="$4" 'BEGIN { exit !(i >= m) }' || fail "$1: ink $8, wanted at least $4"
}

# dom NAME SVG TEXT...: the DOM after scripts ran holds each TEXT
dom() {
    name=$1 svg=$2; shift 2
    chrome --dump-dom "$svg" > "$W/$name.dom" || { fail "$name: dump-dom: $(tail -2 "$W/chrome.err")"; return; }
    for t in "$@"; do grep -qF -- "$t" "$W/$name.dom" || fail "$name: '$t' not in the rendered DOM"; done
}

T=$W/tree.db
"$FX" tree "$T" || exit 1
"$P" flamegraph --db "$T" -o "$W/flame.svg" || fail "flamegraph"
"$P" flamegraph --db "$T" --diff -o "$W/diff.svg" || fail "flamegraph --diff"
"$P" plot --db "$T" frames -o "$W/plot.svg" || fail "plot frames"
"$FX" snaps "$W/snaps.db" || exit 1
"$P" plot --db "$W/snaps.db" timeline 1 -o "$W/timeline.svg" || fail "plot timeline"

shot flame "$W/flame.svg" 20 0.15
shot diff "$W/diff.svg" 20 0.15
shot plot "$W/plot.svg" 20 0.02
shot timeline "$W/timeline.svg" 8 0.1
dom flame "$W/flame.svg" 'ns::Parser&lt;std::vector&lt;int&gt;&gt;::parse(int&amp;)' 'resolve&lt;A&amp;B&gt;' '>main</text>' 'Hover a frame for details'
dom diff "$W/diff.svg" 'Differential flame graph: run 1 -&gt; run 2' 'resolve&lt;A&amp;B&gt;'
dom plot "$W/plot.svg" 'frame 3: 9.00us (spike)' '>frame time</text>'
dom timeline "$W/timeline.svg" 'parse: 200.00ms in 1.000-2.000 s' '>self time in the interval</text>' '>resolve</text>'

# Zoom: a copy of the flame graph that clicks the parse frame once loaded, then
# hovers resolve. Parse then spans the full width, its ancestor main too (faded),
# resolve (not under parse) hides, and the reset link shows.
sed 's|</svg>|<script>var g=document.querySelector("g.f[data-n^=\\"ns::Parser\\"]");g.dispatchEvent(new MouseEvent("click",{bubbles:true}));document.querySelector("g.f[data-n^=\\"resolve\\"] rect").dispatchEvent(new MouseEvent("mouseover",{bubbles:true}));</script></svg>|' \
    "$W/flame.svg" > "$W/zoom.svg"
dom zoom "$W/zoom.svg"
if [ -s "$W/zoom.dom" ]; then
    line() { tr '\n' ' ' < "$W/zoom.dom" | sed 's|</g>|</g>\n|g' | grep -F "data-n=\"$1\"" | grep -F "data-d=\"$2\""; }
    line 'ns::Parser&lt;std::vector&lt;int&gt;&gt;::parse(int&amp;)' 2 | grep -q 'rect x="10.00" [^>]*width="1180.00"' || fail "zoom: parse is not full width: $(line 'ns::Parser&lt;std::vector&lt;int&gt;&gt;::parse(int&amp;)' 2)"
    line main 1 | grep -q 'class="f up"' || fail "zoom: main is not marked as an ancestor"
    line leaf 3 | grep -q 'width="295.00"' || fail "zoom: leaf under parse not scaled: $(line leaf 3)"
    line 'resolve&lt;A&amp;B&gt;' 2 | grep -q 'display: none' || fail "zoom: resolve still shown"
    grep -q 'id="reset" x="10" y="24" style="">Reset zoom' "$W/zoom.dom" || fail "zoom: no reset link"
    grep -q 'id="info" x="10" y="[0-9]*">resolve&lt;A&amp;B&gt; | 3.00us (23.90%)' "$W/zoom.dom" || fail "hover: info line: $(grep -o 'id="info"[^<]*' "$W/zoom.dom")"
fi

# plot heap: the fixture's run made to look tracked (PIANO_HEAP=1): each
# function held its allocations at the peak and half of them at the end.
if command -v sqlite3 > /dev/null; then
    cp "$T" "$W/heap.db"
    "$P" --db "$W/heap.db" sql "UPDATE stats SET inuse_objects = allocs / 2, inuse_bytes = alloc_bytes / 2,
        peak_inuse_bytes = alloc_bytes; UPDATE runs SET heap_peak_bytes =
        (SELECT sum(alloc_bytes) FROM stats WHERE stats.run = runs.id)" || fail "heap fixture"
    "$P" plot --db "$W/heap.db" heap 2 -o "$W/heap.svg" || fail "plot heap"
    shot heap "$W/heap.svg" 8 0.02
    dom heap "$W/heap.svg" 'Heap in use: run 2' '>peak</text>' '>end</text>' 'at the peak</title>' 'at the end</title>'
    # ... and with three snapshots (PIANO_INTERVAL) holding a quarter, all, then half of it
    "$P" --db "$W/heap.db" sql "INSERT INTO snapshot_times SELECT 2, d * (SELECT duration_ns FROM runs WHERE id = 2) / 4
        FROM (SELECT 1 AS d UNION SELECT 2 UNION SELECT 3);
        INSERT INTO snapshots(run, fn, t_ns, calls, self_ns, child_calls, allocs, alloc_bytes, inuse_objects, inuse_bytes)
        SELECT s.run, s.fn, t.t_ns, 0, 0, 0, s.allocs, s.alloc_bytes, s.allocs, s.alloc_bytes * (CASE t.t_ns * 4 /
        (SELECT duration_ns FROM runs WHERE id = 2) WHEN 1 THEN 1 WHEN 2 THEN 4 ELSE 2 END) / 4
        FROM stats s JOIN snapshot_times t ON t.run = s.run WHERE s.run = 2 AND s.thread = 0" || fail "heap snapshots fixture"
    "$P" plot --db "$W/heap.db" heap 2 -o "$W/heap_snaps.svg" || fail "plot heap (snapshots)"
    shot heap_snaps "$W/heap_snaps.svg" 8 0.02
    dom heap_snaps "$W/heap_snaps.svg" '3 snapshots (PIANO_INTERVAL)' 'at the snapshot at ' '>start</text>' '>peak</text>' '>end</text>'
fi

[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "ok: render"
