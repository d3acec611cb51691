#!/bin/bash
# run-test.sh - tiny lit-like runner for test/pass (registered by
# test/pass/CMakeLists.txt). Runs every "// RUN: ..." line of a test file with
# bash -o pipefail after substituting:
#   %clangxx %clang %opt %llvm-dis %FileCheck %plugin (= -fpass-plugin=PATH)
#   %pluginpath %stub (stub_rt.c) %pianocc %pianocxx %s (the file) %S (its folder)
#   %t (temp prefix) %pianosummary (the piano-summary tool)
#   %llvmmajor (the LLVM major the plugin is built for)
# Usage: CLANG=... CLANGXX=... OPT=... LLVM_DIS=... FILECHECK=... PLUGIN=...
#        PIANO_CC=... PIANO_CXX=... LLVM_MAJOR=... run-test.sh TESTFILE TMPDIR
set -u
file=$1
tmpdir=$2
mkdir -p "$tmpdir"
t="$tmpdir/$(basename "$file")"
stub="$(cd "$(dirname "$0")" && pwd)/stub_rt.c"
unset PIANO_FNS PIANO_VERBOSE PIANO_AFTER_INLINING PIANO_SYSTEM_DIRS
# The tests' functions are tiny: no size threshold unless a RUN line sets one
# (min_size.c tests the default with env -u PIANO_MIN_SIZE).
export PIANO_MIN_SIZE=0
# The tests check what each function's instrumentation does: before inlining,
# also where PIANO_FNS is unset (which instruments after inlining by default;
# min_size.c tests that with env -u PIANO_AFTER_INLINING).
export PIANO_AFTER_INLINING=0
n=0
while IFS= read -r line; do
  case "$line" in
    *"RUN: "*) cmd=${line#*RUN: } ;;
    *) continue ;;
  esac
  cmd=${cmd//\%llvmmajor/$LLVM_MAJOR}
  cmd=${cmd//\%clangxx/$CLANGXX}
  cmd=${cmd//\%clang/$CLANG}
  cmd=${cmd//\%opt/$OPT}
  cmd=${cmd//\%llvm-dis/$LLVM_DIS}
  cmd=${cmd//\%FileCheck/$FILECHECK}
  cmd=${cmd//\%pluginpath/$PLUGIN}
  cmd=${cmd//\%plugin/-fpass-plugin=$PLUGIN}
  cmd=${cmd//\%stub/$stub}
  cmd=${cmd//\%pianocxx/$PIANO_CXX}
  cmd=${cmd//\%pianocc/$PIANO_CC}
  cmd=${cmd//\%pianosummary/${PIANO_SUMMARY_TOOL:-piano-summary}}
  cmd=${cmd//\%S/$(dirname "$file")}
  cmd=${cmd//\%s/$file}
  cmd=${cmd//\%t/$t}
  n=$((n + 1))
  echo "RUN[$n]: $cmd"
  if ! bash -o pipefail -c "$cmd"; then
    echo "FAILED: RUN line $n of $file" >&2
    exit 1
  fi
done < "$file"
if [ "$n" = 0 ]; then
  echo "no RUN lines in $file" >&2
  exit 1
fi
echo "PASS: $file ($n RUN lines)"
