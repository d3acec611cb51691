#!/usr/bin/env bash
# run_case.sh - one end-to-end case: build test/e2e/cases/NAME.{c,cpp} with
# piano-cc/piano-c++ at the given optimisation level, run it against a fresh
# database, then run NAME.check (bash) which asserts on what was stored.
#
# Usage: run_case.sh BUILD_DIR CASE_FILE OPT
# A case file may carry, in its first lines:
#   // PIANO_FNS: pattern            (default: unset, i.e. every function)
#   // CFLAGS: extra flags           (e.g. -pthread)
#   // ENV: VAR=value ...            (environment of the run)
#   // EXIT: N                       (expected exit status, default 0)
set -u
build=$1 src=$2 opt=$3
name=$(basename "${src%.*}")
dir=$(dirname "$src")
work=$(mktemp -d "${TMPDIR:-/tmp}/piano-e2e-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
header() { sed -n "s|^// $1: ||p" "$src" | head -1; }
fns=$(header PIANO_FNS) cflags=$(header CFLAGS) envs=$(header ENV) want_exit=$(header EXIT)
case "$src" in *.cpp) cc=$build/bin/piano-c++ ;; *) cc=$build/bin/piano-cc ;; esac
export PIANO_DB=$work/piano.db
fail() { echo "FAIL [$name $opt]: $*" >&2; exit 1; }

# shellcheck disable=SC2086
if [ -n "$fns" ]; then
  PIANO_FNS=$fns $cc $opt -g $cflags "$src" -o "$work/prog" -lm 2>"$work/cc.err" || { cat "$work/cc.err"; fail "compile"; }
else
  env -u PIANO_FNS $cc $opt -g $cflags "$src" -o "$work/prog" -lm 2>"$work/cc.err" || { cat "$work/cc.err"; fail "compile"; }
fi
cd "$work" || exit 1
# shellcheck disable=SC2086
env $envs ./prog >"$work/out" 2>"$work/err"
status=$?
[ "$status" = "${want_exit:-0}" ] || { cat "$work/err"; fail "exit status $status, expected ${want_exit:-0}"; }

# Helpers for NAME.check
q() { sqlite3 -batch -noheader "$PIANO_DB" "$1"; }
# the latest run's id
run() { q "SELECT max(id) FROM runs"; }
# figure of one function, summed over threads: fig FUNCTION COLUMN [RUN]
fig() { q "SELECT coalesce(sum(s.$2),0) FROM stats s JOIN functions f ON f.run=s.run AND f.id=s.fn WHERE s.run=${3:-$(run)} AND f.name='$1'"; }
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }
expect_range() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN{exit !(v>=lo && v<=hi)}' || fail "$1: $2 not in [$3, $4]"; }
db() { "$build/bin/piano-db" "$@"; }
export -f q run fig expect expect_range fail db 2>/dev/null
# shellcheck source=/dev/null
. "$dir/$name.check"
echo "ok [$name $opt]"
