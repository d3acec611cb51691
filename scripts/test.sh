#!/usr/bin/env bash
# test.sh - install what is missing, build piano, run the whole test suite;
# then the same with the newest LLVM Debian ships (scripts/test-llvm.sh; set
# PIANO_TEST_LLVM=0 to skip it, or =N to pick LLVM N).
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure -j"$(nproc)")
case "${PIANO_TEST_LLVM:-}" in
  0) ;;
  "") bash scripts/test-llvm.sh ;;
  *) bash scripts/test-llvm.sh "$PIANO_TEST_LLVM" ;;
esac
