#!/usr/bin/env bash
# test-llvm.sh - builds and tests piano with another LLVM in build-llvmN, and
# checks that it installs beside the default (LLVM 14) build in one prefix.
# Usage: test-llvm.sh [MAJOR]   default: the newest of 22 19 16 15 that apt
#                               can install. Expects the default build
#                               done (test.sh): $PIANO_BUILD_DIR, or build/.
set -eu
cd "$(dirname "$0")/.."
major=${1:-}
if [ -z "$major" ]; then
  for m in 22 19 16 15; do
    if [ -d "/usr/lib/llvm-$m/lib/cmake/llvm" ] ||
       apt-cache policy "llvm-$m-dev" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
      major=$m
      break
    fi
  done
  if [ -z "$major" ]; then
    # apt's lists may be missing on a fresh machine
    [ "$(id -u)" = 0 ] && apt-get update -qq || sudo apt-get update -qq
    for m in 22 19 16 15; do
      apt-cache policy "llvm-$m-dev" 2>/dev/null | grep -q 'Candidate: [0-9]' && { major=$m; break; }
    done
  fi
fi
[ -n "$major" ] || { echo "piano: no LLVM newer than 14 is installable here" >&2; exit 1; }
echo "piano: building and testing with LLVM $major"
bash scripts/deps.sh --tests "$major"
b=build-llvm$major
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_WERROR=ON -DLLVM_DIR="/usr/lib/llvm-$major/lib/cmake/llvm" >/dev/null
cmake --build "$b" -j"$(nproc)"

# Both builds installed into one prefix: one plugin per LLVM, and each
# piano-cc-N compiles with its own.
prefix=$(mktemp -d "${TMPDIR:-/tmp}/piano-prefix.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "${PIANO_BUILD_DIR:-build}" --prefix "$prefix" >/dev/null
cmake --install "$b" --prefix "$prefix" >/dev/null
src=$prefix/t.c
echo 'int f(int x) { return x + 1; } int main(void) { return f(-1); }' > "$src"
for m in 14 "$major"; do
  [ -f "$prefix/lib/piano/llvm-$m/PianoPass.so" ] || { echo "FAIL: no lib/piano/llvm-$m/PianoPass.so in the prefix" >&2; exit 1; }
  "$prefix/bin/piano-cc-$m" -### -c "$src" 2>&1 | grep -q "lib/piano/llvm-$m/PianoPass.so" ||
    { echo "FAIL: piano-cc-$m does not use lib/piano/llvm-$m/PianoPass.so" >&2; exit 1; }
  "$prefix/bin/piano-cc-$m" -O2 "$src" -o "$prefix/t$m" && PIANO_DISABLE=1 "$prefix/t$m" ||
    { echo "FAIL: piano-cc-$m could not build and run a program" >&2; exit 1; }
done
# the last install (LLVM $major) is the default piano-cc
"$prefix/bin/piano-cc" -### -c "$src" 2>&1 | grep -q "lib/piano/llvm-$major/PianoPass.so" ||
  { echo "FAIL: piano-cc does not use lib/piano/llvm-$major/PianoPass.so" >&2; exit 1; }
echo "piano: LLVM 14 and $major install side by side"
(cd "$b" && ctest --output-on-failure -j"$(nproc)")
