#!/usr/bin/env bash
# deps.sh - installs the Debian 12 packages piano needs to build and test,
# if any is missing. Runs apt-get as root (directly, or through sudo).
set -eu
pkgs="cmake make clang-14 libclang-rt-14-dev llvm-14-dev llvm-14-tools libsqlite3-dev sqlite3 libcmocka-dev pkg-config zlib1g-dev protobuf-compiler valgrind chromium"
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
