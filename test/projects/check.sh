#!/bin/sh
# check.sh BINDIR PROJECT_DIR - build a small project with piano's compiler
# wrappers (BINDIR/piano-cc, BINDIR/piano-c++) the way a user would, run it,
# and compare what it stored with PROJECT_DIR/expected.txt.
#
# PROJECT_DIR holds the project's sources and build.sh, which is sourced from
# a temporary copy of the project ($SRC) with $WORK (a scratch folder),
# $PIANO_CC, $PIANO_CXX and $BINDIR set; it builds and sets PROG (the program
# to run, absolute). PIANO_FNS and PIANO_SUMMARY are exported around it.
# expected.txt: "name|calls" lines (calls summed over threads, latest run),
# then a line "--" and what piano-summary printed (stdout then stderr).
set -eu
BINDIR=$(cd "$1" && pwd)
PROJ=$(cd "$2" && pwd)
NAME=$(basename "$PROJ")
PIANO_CC=$BINDIR/piano-cc
PIANO_CXX=$BINDIR/piano-c++
WORK=$(mktemp -d "${TMPDIR:-/tmp}/piano-proj-$NAME.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/src
cp -R "$PROJ" "$SRC"
rm -f "$SRC/expected.txt"

command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not installed"; exit 0; }

# Programs run while building (configure checks) store into a database of
# their own, never the user's ~/.piano.
export PIANO_DB="$WORK/build.db"
export PIANO_SUMMARY="$WORK/summary.txt"
# The projects are made of tiny functions: no size threshold (PIANO_MIN_SIZE).
export PIANO_MIN_SIZE=0
PROG=
cd "$SRC"
. ./build.sh > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; echo "FAIL: build of $NAME"; exit 1; }
unset PIANO_SUMMARY PIANO_FNS
[ -x "$PROG" ] || { cat "$WORK/build.log"; echo "FAIL: build.sh left no program ($PROG)"; exit 1; }

export PIANO_DB="$WORK/run.db"
cd "$WORK"
"$PROG" > "$WORK/out.txt" 2>&1 || { cat "$WORK/out.txt"; echo "FAIL: $PROG exited $?"; exit 1; }

{
  "$BINDIR/piano-db" --db "$PIANO_DB" sql "SELECT f.name, SUM(s.calls) FROM stats s JOIN functions f
                        ON f.run = s.run AND f.id = s.fn
                        WHERE s.run = (SELECT MAX(id) FROM runs)
                        GROUP BY f.name ORDER BY f.name;"
  echo "--"
  "$BINDIR/piano-summary" "$WORK/summary.txt" 2>&1
} > "$WORK/actual.txt"

if ! diff -u "$PROJ/expected.txt" "$WORK/actual.txt"; then
  echo "--- build log"; cat "$WORK/build.log"
  echo "FAIL: $NAME"
  exit 1
fi
echo "PASS: $NAME"
