#!/usr/bin/env bash
# test.sh - install what is missing, build piano, run the test suite.
#
#   bash scripts/test.sh          the whole suite in build/ (unit, plugin, piano-db,
#                                 projects, e2e at -O0 and -O2): ~10 min on 2 cores
#   bash scripts/test.sh --full   that, then the runtime's and piano-db's own tests
#                                 under ASan+UBSan and TSan, then the whole suite with
#                                 the newest LLVM Debian ships (CI runs this; ~15 min more)
#
# Every stage runs even when an earlier one failed; the summary at the end says
# which failed, and the exit status is non-zero if any did.
# PIANO_TEST_LLVM=0 skips the second LLVM in --full, =N picks LLVM N.
# PIANO_TEST_JOBS sets ctest's parallelism (default: cores + 1: many cases wait
# on their programs rather than compute).
set -u
cd "$(dirname "$0")/.."
full=0
case "${1:-}" in
  --full) full=1 ;;
  "") ;;
  *) echo "usage: bash scripts/test.sh [--full]" >&2; exit 2 ;;
esac
jobs=${PIANO_TEST_JOBS:-$(($(nproc) + 1))}
start=$(date +%s)
passed=0 failed=0 failed_stages="" stages=""
log=$(mktemp "${TMPDIR:-/tmp}/piano-test.XXXXXX")
trap 'rm -f "$log"' EXIT

# stage NAME CMD...: runs CMD, notes its time and whether it failed, and adds up
# the tests ctest counted in its output ("N tests failed out of M").
stage() {
  local name=$1 t0 rc counts
  shift
  t0=$(date +%s)
  echo "== $name"
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  counts=$(sed -n 's/.* \([0-9][0-9]*\) tests\{0,1\} failed out of \([0-9][0-9]*\).*/\1 \2/p' "$log" | tail -1)
  if [ -n "$counts" ]; then
    set -- $counts
    failed=$((failed + $1)) passed=$((passed + $2 - $1))
  fi
  stages="$stages
  $name: $([ "$rc" = 0 ] && echo ok || echo FAILED), $(($(date +%s) - t0)) s"
  [ "$rc" = 0 ] || failed_stages="$failed_stages $name"
  return 0
}

build() {
  bash scripts/deps.sh --tests &&
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_TESTS=ON -DPIANO_WERROR=ON >/dev/null &&
    cmake --build build -j"$(nproc)"
}
suite() { (cd build && ctest --output-on-failure -j"$jobs"); }

# The runtime's and piano-db's own tests under sanitizers, built with clang-14
# (cmake/Sanitize.cmake; e2e programs need an unsanitized runtime):
#   build-asan: ASan+UBSan: unit tests (test_stack and test_threads import
#               their spool at exit), piano-db tests, and the fuzzers (test/fuzz)
#   build-tsan: TSan: hooks called from several threads at once
# PIANO_TEST_SANITIZED tells tests with time or memory bounds to allow for the
# sanitizers' cost (test/db/cli_test.sh).
sanitized() {   # DIR SANITIZERS TEST_REGEX TARGET...
  local dir=$1 san=$2 tests=$3; shift 3
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_WERROR=ON -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DPIANO_SANITIZE="$san" >/dev/null || return 1
  cmake --build "$dir" -j"$(nproc)" --target "$@" || return 1
  # TSan of clang 14 needs the old address-space layout: run without ASLR when allowed.
  local norand=""
  if [ "$san" = thread ] && setarch "$(uname -m)" -R true 2>/dev/null; then
    norand="setarch $(uname -m) -R"
  fi
  (cd "$dir" && PIANO_TEST_SANITIZED=$san ASAN_OPTIONS=abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 TSAN_OPTIONS=halt_on_error=1 \
    $norand ctest --output-on-failure -j"$(nproc)" -R "$tests")
}
second_llvm() {
  case "${PIANO_TEST_LLVM:-}" in
    "") bash scripts/test-llvm.sh ;;
    *) bash scripts/test-llvm.sh "$PIANO_TEST_LLVM" ;;
  esac
}

stage "build (LLVM 14)" build
if [ -z "$failed_stages" ]; then
  stage "suite (LLVM 14)" suite
  if [ "$full" = 1 ]; then
    stage "ASan+UBSan" sanitized build-asan address,undefined \
      '^(unit\.(hist|schema|stack|threads|threads_reuse)|db_.*|fuzz\..*)$' \
      test_hist test_schema test_stack test_threads test_db_units piano-db make_fixture \
      fuzz_db fuzz_blobs fuzz_frames fuzz_ended
    stage "TSan" sanitized build-tsan thread '^unit\.(stack|threads|threads_reuse)$' test_stack test_threads
    [ "${PIANO_TEST_LLVM:-}" = 0 ] || stage "second LLVM" second_llvm
  fi
fi

echo
echo "piano: test.sh$([ "$full" = 1 ] && echo " --full") in $(($(date +%s) - start)) s:$stages"
echo "tests: $passed passed, $failed failed"
if [ -n "$failed_stages" ]; then
  echo "piano: failed:$failed_stages" >&2
  exit 1
fi
[ "$passed" -gt 0 ] || { echo "piano: no test ran" >&2; exit 1; }
