#!/usr/bin/env bash
# bench/run.sh - piano's overhead benchmark (issue 5). See bench/README.md.
#   bash bench/run.sh            full run (~4-5 min on 2 cores)
#   bash bench/run.sh --quick    fewer rounds, smaller workloads
# Builds the workloads into build/bench with clang and build/bin/piano-cc
# (building piano first if build/bin/piano-cc is missing). Not a test: not in ctest.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
if [ ! -x "$root/build/bin/piano-cc" ] || [ ! -x "$root/build/bin/piano-db" ]; then
    echo "bench: building piano into $root/build" >&2
    cmake -S "$root" -B "$root/build" >/dev/null
    cmake --build "$root/build" -j2 >/dev/null
fi
command -v uftrace >/dev/null || echo "bench: uftrace not found (apt-get install -y uftrace); skipping that column" >&2
exec python3 "$here/bench.py" "$@"
