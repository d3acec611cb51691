#!/bin/sh
# check_package.sh BUILD_DIR - install piano from BUILD_DIR into a temporary
# prefix, then use it the two ways a project outside piano's tree would:
#  1. CMake: find_package(Piano) + piano_instrument(<target> FUNCTIONS ...)
#     (consumer/: per-target selections, one target left alone); exact call
#     counts, the build summary, and a clear error for a compiler that is not
#     the matching clang.
#  2. pkg-config: clang $(pkg-config --cflags --libs piano).
set -eu
# The test programs are made of tiny functions: no size threshold (PIANO_MIN_SIZE).
export PIANO_MIN_SIZE=0
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/piano-package.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not installed"; exit 0; }
fail() { echo "FAIL: $*"; exit 1; }

P=$WORK/prefix
cmake --install "$BUILD" --prefix "$P" > "$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "install"; }
for f in lib/cmake/Piano/PianoConfig.cmake lib/cmake/Piano/PianoConfigVersion.cmake lib/pkgconfig/piano.pc; do
  [ -f "$P/$f" ] || fail "$f not installed"
done
# The clang piano was built for (what piano-cc runs).
CLANG=$(sed -n 's/^set(PIANO_CLANG "\(.*\)")$/\1/p' "$P/lib/cmake/Piano/PianoConfig.cmake")
CLANGXX=$(sed -n 's/^set(PIANO_CLANGXX "\(.*\)")$/\1/p' "$P/lib/cmake/Piano/PianoConfig.cmake")
[ -x "$CLANG" ] && [ -x "$CLANGXX" ] || fail "no clang in PianoConfig.cmake ($CLANG, $CLANGXX)"

counts() {
  "$P/bin/piano-db" --db "$1" sql "SELECT f.name, SUM(s.calls) FROM stats s JOIN functions f
                ON f.run = s.run AND f.id = s.fn
                WHERE s.run = (SELECT MAX(id) FROM runs)
                GROUP BY f.name ORDER BY f.name;"
}

# 1. CMake package.
export PIANO_DB="$WORK/build.db"
PIANO_SUMMARY="$WORK/summary.txt" cmake -S "$HERE/consumer" -B "$WORK/consumer" \
  -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CLANG" -DCMAKE_CXX_COMPILER="$CLANGXX" \
  > "$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; fail "configure consumer"; }
PIANO_SUMMARY="$WORK/summary.txt" cmake --build "$WORK/consumer" -j4 \
  >> "$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; fail "build consumer"; }
PIANO_DB="$WORK/run.db" "$WORK/consumer/app" > "$WORK/out.txt" || fail "consumer app failed"
{ counts "$WORK/run.db"; echo "--"; "$P/bin/piano-summary" "$WORK/summary.txt" 2>&1; } > "$WORK/actual.txt"
cat > "$WORK/expected.txt" <<'EOT'
geo::Shape::area() const|4
parse|6
resolve|4
util_clamp|6
--
found 4 function(s) across 3 file(s)
EOT
diff -u "$WORK/expected.txt" "$WORK/actual.txt" || fail "cmake package: counts"
grep -q 'INTERFACE_COMPILE_DEFINITIONS "PIANO_SPANS=1"' "$P/lib/cmake/Piano/PianoConfig.cmake" &&
  grep -q 'INTERFACE_INCLUDE_DIRECTORIES "${PACKAGE_PREFIX_DIR}/include"' "$P/lib/cmake/Piano/PianoConfig.cmake" ||
  fail "cmake package: Piano::runtime does not give <piano/span.h> and PIANO_SPANS"

# A changed selection recompiles the target (also with the Makefile
# generator, which does not compare compiler launchers).
cmake -DAPP_FNS="=resolve;nothing_like_this" "$WORK/consumer" >> "$WORK/cmake.log" 2>&1 || fail "reconfigure"
rm -f "$WORK/summary.txt"
PIANO_SUMMARY="$WORK/summary.txt" cmake --build "$WORK/consumer" >> "$WORK/cmake.log" 2>&1 || fail "rebuild"
PIANO_DB="$WORK/run2.db" "$WORK/consumer/app" > "$WORK/out.txt" || fail "rebuilt app failed"
{ counts "$WORK/run2.db"; echo "--"; "$P/bin/piano-summary" "$WORK/summary.txt" 2>&1; } > "$WORK/actual.txt"
cat > "$WORK/expected.txt" <<'EOT'
geo::Shape::area() const|4
resolve|4
util_clamp|6
--
found 1 function(s) across 1 file(s)
piano: pattern 'nothing_like_this' matched nothing
EOT
diff -u "$WORK/expected.txt" "$WORK/actual.txt" || fail "cmake package: changed FUNCTIONS"

# Another compiler than clang of piano's LLVM: a clear configure error.
for cc in gcc cc; do
  if command -v $cc >/dev/null && $cc --version 2>/dev/null | grep -q "Free Software Foundation"; then
    if cmake -S "$HERE/consumer" -B "$WORK/gcc" -DCMAKE_PREFIX_PATH="$P" \
         -DCMAKE_C_COMPILER=$cc -DCMAKE_CXX_COMPILER="$CLANGXX" > "$WORK/gcc.log" 2>&1; then
      fail "piano_instrument accepted $cc"
    fi
    grep -q "piano_instrument(app): the C compiler .* is GNU" "$WORK/gcc.log" || { cat "$WORK/gcc.log"; fail "no clear message for $cc"; }
    grep -q -- "-DCMAKE_C_COMPILER=$CLANG" "$WORK/gcc.log" || { cat "$WORK/gcc.log"; fail "no fix suggested for $cc"; }
    break
  fi
done

# 2. pkg-config.
if command -v pkg-config >/dev/null; then
  FLAGS=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs piano) || fail "pkg-config piano"
  case "$FLAGS" in
    *"-fpass-plugin=$P/lib/"*"PianoPass.so"*"-L$P/lib"*"-lpiano_rt"*"-Wl,-rpath,$P/lib"*) ;;
    *) fail "pkg-config flags: $FLAGS" ;;
  esac
  # shellcheck disable=SC2086
  PIANO_FNS=parse,resolve "$CLANG" -O2 -g $FLAGS -o "$WORK/pc_app" \
    "$HERE/consumer/main.c" "$HERE/consumer/util.c" "$HERE/consumer/plain.c" \
    "$WORK/consumer/libshapes.so" -Wl,-rpath,"$WORK/consumer" || fail "pkg-config build"
  PIANO_DB="$WORK/run3.db" "$WORK/pc_app" > "$WORK/out.txt" || fail "pkg-config app failed"
  counts "$WORK/run3.db" > "$WORK/actual.txt"
  # One selection for every file now: helper_parse and plain_parse too.
  printf 'geo::Shape::area() const|4\nhelper_parse|6\nparse|6\nplain_parse|4\nresolve|4\n' > "$WORK/expected.txt"
  diff -u "$WORK/expected.txt" "$WORK/actual.txt" || fail "pkg-config: counts"
  # Spans: <piano/span.h> installed and found through the flags, its calls real.
  [ -f "$P/include/piano/span.h" ] || fail "include/piano/span.h not installed"
  printf '#include <piano/span.h>\nint main(void) { piano_span *s = piano_span_open("job"); piano_span_enter(s);\n  piano_span_exit(s); piano_span_close(s); return 0; }\n' > "$WORK/span.c"
  # shellcheck disable=SC2086
  "$CLANG" -O2 $FLAGS -o "$WORK/span_app" "$WORK/span.c" || fail "pkg-config span build"
  PIANO_DB="$WORK/run4.db" "$WORK/span_app" || fail "span app failed"
  [ "$(sqlite3 "$WORK/run4.db" "SELECT name || '=' || count FROM spans")" = "job=1" ] || fail "pkg-config: the span not recorded"
else
  echo "pkg-config not installed: its part skipped"
fi
echo "PASS: package"
