#!/usr/bin/env bash
# run_case.sh - one end-to-end case: build test/e2e/cases/NAME.{c,cpp} with
# piano-cc/piano-c++ at the given optimisation level, run it against a fresh
# database, then run NAME.check (bash) which asserts on what was stored.
#
# Usage: run_case.sh BUILD_DIR CASE_FILE OPT
# Cases live in folders by concern: test/e2e/cases/FOLDER/NAME.{c,cpp} and NAME.check
# (doc/testing.md lists the folders); the ctest name is e2e.NAME.OPT whatever the folder.
# A case file may carry, in its first lines:
#   // PIANO_FNS: pattern            (default: unset, i.e. every function)
#   // CFLAGS: extra flags           (e.g. -pthread)
#   // BUILD_ENV: VAR=value ...      (environment of the compiler, e.g. PIANO_GUARD=1)
#   // ENV: VAR=value ...            (environment of the run)
#   // EXIT: N                       (expected exit status, default 0; a signal N is 128+N)
#   // SO: lib/a.c ...               (shared libraries built with the same wrapper and
#                                     linked: lib/a.c becomes ./liba.so, found at run time)
#   // PLUGIN: lib/b.c ...           (the same, not linked: for dlopen("./libb.so"))
#   // SETUP: shell command          (run in the case's folder before the program)
# PIANO_KEEP=1 keeps the work folder. Paths in SO and PLUGIN are relative to
# the case's folder, else to test/e2e/cases (its shared lib/). A check reaches
# the source tree as $root (e.g. $root/spool, $root/test/db). The case runs in a
# fresh folder that also holds the program (prog) and its outputs (out, err).
set -u
build=$(cd "$1" && pwd) src=$2 opt=$3
name=$(basename "${src%.*}")
dir=$(cd "$(dirname "$src")" && pwd) src=$dir/$(basename "$src")
cases=$(cd "$(dirname "$0")/cases" && pwd) root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/piano-e2e-$name.XXXXXX")
[ -n "${PIANO_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
header() { sed -n "s|^// $1: ||p" "$src" | head -1; }
fns=$(header PIANO_FNS) cflags=$(header CFLAGS) envs=$(header ENV) want_exit=$(header EXIT)
build_envs=$(header BUILD_ENV)
sos=$(header SO) plugins=$(header PLUGIN)
compiler() { case "$1" in *.cpp | *.cc) echo "$build/bin/piano-c++" ;; *) echo "$build/bin/piano-cc" ;; esac; }
cc=$(compiler "$src")
export PIANO_DB=$work/piano.db
# Cases are made of tiny functions: no size threshold (PIANO_MIN_SIZE, README
# "Choosing functions") unless BUILD_ENV says otherwise (-u PIANO_MIN_SIZE: the default).
export PIANO_MIN_SIZE=0
# Cases check each function's counts: instrumented before inlining, also where
# PIANO_FNS is unset (which instruments after inlining by default: the case
# inlined_default checks that with BUILD_ENV: PIANO_AFTER_INLINING=).
export PIANO_AFTER_INLINING=0
fail() { echo "FAIL [$name $opt]: $*" >&2; exit 1; }
ulimit -c 0   # cases that crash on purpose leave no core files

# compile OUT SRC FLAGS...: with the case's PIANO_FNS (unset when it has none)
compile() {
  local out=$1 in=$2; shift 2
  # shellcheck disable=SC2086
  if [ -n "$fns" ]; then
    env $build_envs PIANO_FNS="$fns" "$(compiler "$in")" $opt -g "$in" "$@" -o "$out" -lm 2>>"$work/cc.err"
  else
    env -u PIANO_FNS $build_envs "$(compiler "$in")" $opt -g "$in" "$@" -o "$out" -lm 2>>"$work/cc.err"
  fi
}
links=()
for so in $sos $plugins; do
  base=$(basename "${so%.*}")
  # shellcheck disable=SC2086
  so_src=$dir/$so; [ -e "$so_src" ] || so_src=$cases/$so
  compile "$work/lib$base.so" "$so_src" -shared -fPIC $cflags || { cat "$work/cc.err"; fail "compile $so"; }
done
for so in $sos; do links+=("-L$work" "-l$(basename "${so%.*}")" "-Wl,-rpath,$work"); done

# shellcheck disable=SC2086
compile "$work/prog" "$src" $cflags "${links[@]}" || { cat "$work/cc.err"; fail "compile"; }
cd "$work" || exit 1
setup=$(header SETUP)
if [ -n "$setup" ]; then bash -c "$setup" >"$work/setup.out" 2>&1 || { cat "$work/setup.out"; fail "setup"; }; fi
# shellcheck disable=SC2086
env $envs ./prog >"$work/out" 2>"$work/err"
status=$?
[ "$status" = "${want_exit:-0}" ] || { cat "$work/err"; fail "exit status $status, expected ${want_exit:-0}"; }

# Helpers for NAME.check
# q SQL: rows as `sqlite3 -batch -noheader` prints them, through piano-db sql: the
# views stats and contexts are piano-db's (the stored schema has none since 19)
q() { "$build/bin/piano-db" --db "$PIANO_DB" sql "$1"; }
# the latest run's id
run() { q "SELECT max(id) FROM runs"; }
# figure of one function, summed over threads: fig FUNCTION COLUMN [RUN]
fig() { q "SELECT coalesce(sum(s.$2),0) FROM stats s JOIN functions f ON f.run=s.run AND f.id=s.fn WHERE s.run=${3:-$(run)} AND f.name='$1'"; }
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }
expect_range() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN{exit !(v>=lo && v<=hi)}' || fail "$1: $2 not in [$3, $4]"; }
db() { "$build/bin/piano-db" "$@"; }
# A second user (uid 65534 through setpriv) for a check run as root. other_user: 0 when
# there is one here, else a note on stderr saying why and 1 (the check skips that part,
# never fails for it). It opens the case's folder (mode 0755) and copies piano-db and the
# runtime into other/ there: a build in a private folder (mode 0700 above it, like root's
# home) is closed to that user. as_other CMD...: CMD as that user, programs finding the
# copied runtime (LD_LIBRARY_PATH comes before their RUNPATH); other_db: that piano-db.
other_db=$work/other/piano-db
other_user() {
  if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null; then
    echo "note [$name $opt]: second-user part not run (needs root and setpriv)" >&2
    return 1
  fi
  if [ ! -x "$other_db" ]; then
    chmod 0755 "$work" && mkdir -p -m 0755 "$work/other" &&
      cp "$build/bin/piano-db" "$build/lib/libpiano_rt.so" "$build/lib/libpiano_import.so" "$work/other/" || return 1
  fi
  local why
  if ! why=$(as_other "$other_db" --help 2>&1 > /dev/null); then
    echo "note [$name $opt]: second-user part not run (uid 65534 cannot run $other_db: $why)" >&2
    return 1
  fi
}
as_other() { setpriv --reuid=65534 --regid=65534 --clear-groups env LD_LIBRARY_PATH="$work/other" "$@"; }
# fns_per_frame: "min,max" of the functions named per frame (every one kept) of the latest run, read by piano-db
fns_per_frame() { db report --frames --json --all | jq -r '[.[].functions | length] | "\(min),\(max)"'; }
# callers FUNCTION [RUN]: the callers of FUNCTION's contexts, by name, sorted, one per
# context, space-separated ('-': an outermost call)
callers() { q "SELECT coalesce(p.name, '-') FROM contexts c JOIN functions f ON f.run=c.run AND f.id=c.fn
  LEFT JOIN contexts pc ON pc.run=c.run AND pc.thread=c.thread AND pc.id=c.parent
  LEFT JOIN functions p ON p.run=c.run AND p.id=pc.fn WHERE c.run=${2:-$(run)} AND f.name='$1' ORDER BY 1" | tr '\n' ' ' | sed 's/ $//'; }
# under FUNCTION CALLER [RUN]: inclusive ms of FUNCTION's calls made by CALLER (its contexts there)
under() { q "SELECT coalesce(sum(c.total_ns), 0) / 1000000 FROM contexts c JOIN functions f ON f.run=c.run AND f.id=c.fn
  JOIN contexts pc ON pc.run=c.run AND pc.thread=c.thread AND pc.id=c.parent
  JOIN functions p ON p.run=c.run AND p.id=pc.fn WHERE c.run=${3:-$(run)} AND f.name='$1' AND p.name='$2'"; }
# ms FUNCTION [RUN]: inclusive ms of FUNCTION, summed over threads
ms() { q "SELECT coalesce(sum(s.total_ns), 0) / 1000000 FROM stats s JOIN functions f ON f.run=s.run AND f.id=s.fn
  WHERE s.run=${2:-$(run)} AND f.name='$1'"; }
# sane_times [RUN]: no time is negative or longer than the run; self within inclusive
# (SANE_CONTEXTS=0: not for the contexts table)
sane_times() {
  local r=${1:-$(run)} stats_long="s.total_ns > r.duration_ns" ctx_long="c.total_ns > r.duration_ns + 1"
  expect "run $r has a duration" "$(q "SELECT duration_ns > 0 FROM runs WHERE id=$r")" 1
  expect "run $r: stats times within the run" "$(q "SELECT count(*) FROM stats s JOIN runs r ON r.id=s.run
    WHERE s.run=$r AND (s.self_ns < 0 OR s.total_ns < 0 OR s.self_ns > s.total_ns OR $stats_long)")" 0
  [ "${SANE_CONTEXTS:-1}" = 0 ] || expect "run $r: context times within the run" "$(q "SELECT count(*) FROM contexts c JOIN runs r ON r.id=c.run
    WHERE c.run=$r AND (c.self_ns < 0 OR c.total_ns < 0 OR c.self_ns > c.total_ns OR $ctx_long)")" 0
  expect "run $r: frames within the run" "$(q "SELECT count(*) FROM frames f JOIN runs r ON r.id=f.run
    WHERE f.run=$r AND (f.start_ns < 0 OR f.total_ns < 0 OR f.start_ns + f.total_ns > r.duration_ns)")" 0
  expect "run $r: unfinished within the run" "$(q "SELECT count(*) FROM unfinished u JOIN runs r ON r.id=u.run
    WHERE u.run=$r AND (u.start_ns < 0 OR u.elapsed_ns < 0 OR u.start_ns + u.elapsed_ns > r.duration_ns + 1)")" 0
}
# unfinished [RUN]: the names of the calls in flight at the end, by thread and depth
unfinished() { q "SELECT f.name FROM unfinished u JOIN functions f ON f.run=u.run AND f.id=u.fn
  WHERE u.run=${1:-$(run)} ORDER BY u.thread, u.depth" | tr '\n' ' ' | sed 's/ $//'; }
export -f q run fig expect expect_range fail db callers under ms sane_times unfinished 2>/dev/null
[ -f "$dir/$name.check" ] || fail "no $name.check"
# shellcheck source=/dev/null
. "$dir/$name.check"
echo "ok [$name $opt]"
