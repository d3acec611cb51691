#!/usr/bin/env bash
# deps.sh - installs the Debian 12 packages piano needs to build and test,
# if any is missing. Runs apt-get as root (directly, or through sudo).
# Usage: deps.sh [MAJOR...]   LLVM majors to install clang, llvm-dev,
#                             llvm-tools (FileCheck) and lld for; default 14.
set -eu
majors=${*:-14}
pkgs="cmake make libsqlite3-dev sqlite3 libcmocka-dev pkg-config zlib1g-dev protobuf-compiler valgrind chromium jq libxml2-utils python3"
pkgs="$pkgs libclang-rt-14-dev"   # sanitizer and libFuzzer runtimes (test.sh's build-asan, build-tsan)
for m in $majors; do
  pkgs="$pkgs clang-$m llvm-$m-dev llvm-$m-tools lld-$m"
done
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
