#!/usr/bin/env bash
# test.sh - install what is missing, build piano, run the whole test suite;
# then the same with the newest LLVM Debian ships (scripts/test-llvm.sh; set
# PIANO_TEST_LLVM=0 to skip it, or =N to pick LLVM N).
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh --tests
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_TESTS=ON -DPIANO_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure -j"$(nproc)")

# The runtime's and piano-db's own tests again under sanitizers, built with
# clang-14 (cmake/Sanitize.cmake; e2e programs need an unsanitized runtime):
#   build-asan: ASan+UBSan: unit tests (test_stack and test_threads import
#               their spool at exit), piano-db tests, and the fuzzers (test/fuzz)
#   build-tsan: TSan: hooks called from several threads at once
sanitized() {   # DIR SANITIZERS TEST_REGEX TARGET...
  local dir=$1 san=$2 tests=$3; shift 3
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_WERROR=ON -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DPIANO_SANITIZE="$san" >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target "$@"
  # TSan of clang 14 needs the old address-space layout: run without ASLR when allowed.
  local norand=""
  if [ "$san" = thread ] && setarch "$(uname -m)" -R true 2>/dev/null; then
    norand="setarch $(uname -m) -R"
  fi
  (cd "$dir" && ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TSAN_OPTIONS=halt_on_error=1 $norand ctest --output-on-failure -j"$(nproc)" -R "$tests")
}
sanitized build-asan address,undefined '^(unit\.(hist|schema|stack|threads|threads_reuse)|db_.*|fuzz\..*)$' \
  test_hist test_schema test_stack test_threads test_db_units piano-db make_fixture fuzz_db fuzz_blobs fuzz_frames fuzz_ended
sanitized build-tsan thread '^unit\.(stack|threads|threads_reuse)$' test_stack test_threads

case "${PIANO_TEST_LLVM:-}" in
  0) ;;
  "") bash scripts/test-llvm.sh ;;
  *) bash scripts/test-llvm.sh "$PIANO_TEST_LLVM" ;;
esac
