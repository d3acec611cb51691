#!/usr/bin/env bash
# quickstart.sh - from a fresh Debian 12: install what building and running
# piano need (scripts/deps.sh), build it, instrument the bundled example, run
# it and show its report. The test suite is scripts/test.sh.
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The tests need cmocka (deps.sh --tests): leave them out of the build until then.
tests=""
pkg-config --exists cmocka 2>/dev/null || tests=-DPIANO_TESTS=OFF
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo $tests >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
PIANO_FNS=fib,parse,resolve,frame build/bin/piano-cc -O2 -g examples/workload.c -o build/workload
export PIANO_DB=$PWD/build/example.db
build/workload
build/bin/piano-db report
echo
echo "Stored in build/example.db. More: build/bin/piano-db --db build/example.db report --frames (or runs, flamegraph -o flame.svg)"
