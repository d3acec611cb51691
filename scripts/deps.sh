#!/usr/bin/env bash
# deps.sh - installs the Debian 12 packages piano needs, if any is missing.
# Runs apt-get as root (directly, or through sudo).
# Usage: deps.sh [--tests] [MAJOR...]
#   default   what building piano and running it need: cmake, make, gcc, g++,
#             libc6-dev, pkg-config, libsqlite3-dev, zlib1g-dev, libcurl4-openssl-dev
#             (piano-db push), and clang-N
#             and llvm-N-dev for each LLVM major N (default 14)
#   --tests   also what the test suite needs (scripts/test.sh): llvm-N-tools
#             (FileCheck, opt), lld-N, libomp-N-dev (e2e omp_regions) and libclang-rt-N-dev (e2e
#             sanitized_*) for each N, libcmocka-dev, sqlite3,
#             protobuf-compiler, valgrind, chromium, jq, libxml2-utils, python3, tmux (top on a terminal),
#             libnss-wrapper (a passwd entry of its own: e2e empty_env), ccache (projects.ccache),
#             libclang-rt-14-dev (sanitizer and libFuzzer runtimes)
set -eu
tests=0
if [ "${1:-}" = --tests ]; then
  tests=1
  shift
fi
majors=${*:-14}
pkgs="cmake make gcc g++ libc6-dev pkg-config libsqlite3-dev zlib1g-dev libcurl4-openssl-dev"
for m in $majors; do
  pkgs="$pkgs clang-$m llvm-$m-dev"
done
if [ "$tests" = 1 ]; then
  pkgs="$pkgs libcmocka-dev sqlite3 protobuf-compiler valgrind chromium jq libxml2-utils python3 tmux libnss-wrapper"
  pkgs="$pkgs ccache"   # projects.ccache
  pkgs="$pkgs libclang-rt-14-dev"   # test.sh's build-asan and build-tsan use clang-14
  for m in $majors; do   # libclang-rt: e2e sanitized_* build programs with each LLVM's sanitizers
    pkgs="$pkgs llvm-$m-tools lld-$m libomp-$m-dev libclang-rt-$m-dev"
  done
fi
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "piano: installing$missing"
as_root=""
[ "$(id -u)" = 0 ] || as_root=sudo
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -qq
# shellcheck disable=SC2086
$as_root apt-get install -y -qq $missing >/dev/null
