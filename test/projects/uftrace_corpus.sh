#!/usr/bin/env bash
# uftrace_corpus.sh BINDIR UFTRACE_TESTS [WORK] - uftrace's own test programs (its tests/s-*.c and
# s-*.cpp: signals, fork, vfork, daemon, exceptions, longjmp, threads, malloc replacements), by
# hand (doc/testing.md "Real programs"): each built plainly with clang-14 and with BINDIR's
# piano-cc/piano-c++ (PIANO_FNS='*', PIANO_MIN_SIZE=0) at -O0 and -O2, both run, and their
# stdout, exit status and stderr compared. Programs that need uftrace's other files (its
# libraries, s-dlopen's modules, SDT headers) are left out; a program that does not build plainly
# is said and skipped. Prints one line per difference, then the runs piano stored that are not
# `complete`.
set -u
BINDIR=$(cd "$1" && pwd) TESTS=$(cd "$2" && pwd) WORK=${3:-/tmp/uftrace-corpus}
mkdir -p "$WORK" && chmod 700 "$WORK" && cd "$TESTS" || exit 1
export PIANO_DB=$WORK/piano.db
for f in s-*.c s-*.cpp; do
  n=${f%.*}
  case $n in s-lib*|s-dynmain|s-dlopen*|s-agent|s-sdt|s-patchable-abc|s-dynamic) continue ;; esac
  cc=clang-14 pc=$BINDIR/piano-cc
  [[ $f == *.cpp ]] && cc=clang++-14 pc=$BINDIR/piano-c++
  for o in -O0 -O2; do
    b=$WORK/$n$o
    $cc $o -g -pthread -o "$b.plain" "$f" -ldl -lm 2> /dev/null || { echo "$n $o: does not build plainly (skipped)"; continue; }
    PIANO_FNS='*' PIANO_MIN_SIZE=0 $pc $o -g -pthread -o "$b.piano" "$f" -ldl -lm 2> "$b.build.err" ||
      { echo "$n $o: PIANO BUILD FAILED: $(head -c 300 "$b.build.err")"; continue; }
    for v in plain piano; do
      (cd "$WORK" && timeout 20 "$b.$v" > "$b.$v.out" 2> "$b.$v.err"; echo "exit $?" >> "$b.$v.out")
    done
    cmp -s "$b.plain.out" "$b.piano.out" || echo "$n $o: output or status differ: $(tail -1 "$b.plain.out") / $(tail -1 "$b.piano.out")"
    cmp -s "$b.plain.err" "$b.piano.err" || echo "$n $o: stderr differs: $(head -c 200 "$b.piano.err")"
  done
done
echo "runs stored: $("$BINDIR/piano-db" runs --json | jq length); not complete:"
"$BINDIR/piano-db" runs --json | jq -r '.[] | select(.status != "complete") | "  \(.status) \(.command)"'
