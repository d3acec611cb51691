#!/usr/bin/env bash
# quickstart.sh - from a fresh Debian 12: install what is missing, build piano,
# instrument the bundled example, run it and show its report.
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
PIANO_FNS=fib,parse,resolve,frame build/bin/piano-cc -O2 -g examples/workload.c -o build/workload
export PIANO_DB=$PWD/build/example.db
build/workload
build/bin/piano-db report
