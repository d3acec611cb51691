// Issue 15, item 4: broad selections (unset, '*', substrings) leave out
// functions smaller than PIANO_MIN_SIZE IR instructions (default 30); a
// pattern that names a function (=name, its whole name, file:) keeps it.
// tiny is 5 instructions at -O0 and -O2 alike (counted before optimisation).
// RUN: env -u PIANO_MIN_SIZE PIANO_VERBOSE=1 %clang -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=DEF
// RUN: env -u PIANO_MIN_SIZE PIANO_VERBOSE=1 %clang -O2 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=DEF
// RUN: env -u PIANO_MIN_SIZE PIANO_VERBOSE=1 PIANO_FNS='*' %clang -O2 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=DEF
// RUN: env PIANO_MIN_SIZE=30 PIANO_VERBOSE=1 PIANO_FNS='!nothing' %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=DEF
// DEF: left out 2 function(s) smaller than PIANO_MIN_SIZE=30: tiny, tiny_too{{$}}
// DEF: instrumented 2 function(s): big, main{{$}}
// RUN: env PIANO_MIN_SIZE=30 PIANO_VERBOSE=1 PIANO_FNS=tiny %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SUB
// SUB: left out 1 function(s) smaller than PIANO_MIN_SIZE=30: tiny_too{{$}}
// SUB: instrumented 1 function(s): tiny{{$}}
// RUN: env PIANO_MIN_SIZE=30 PIANO_VERBOSE=1 PIANO_FNS='=tiny,=tiny_too' %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NAMED
// RUN: env PIANO_MIN_SIZE=30 PIANO_VERBOSE=1 PIANO_FNS='tiny,tiny_too' %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NAMED
// NAMED-NOT: left out
// NAMED: instrumented 2 function(s): tiny, tiny_too{{$}}
// RUN: env PIANO_MIN_SIZE=30 PIANO_VERBOSE=1 PIANO_FNS=file:min_size.c %clang -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// RUN: env PIANO_MIN_SIZE=0 PIANO_VERBOSE=1 %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// RUN: env PIANO_MIN_SIZE=5 PIANO_VERBOSE=1 %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// ALL-NOT: left out
// ALL: instrumented 4 function(s): big, tiny, tiny_too, main{{$}}
// RUN: env PIANO_MIN_SIZE=6 PIANO_VERBOSE=1 %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SIX
// SIX: left out 2 function(s) smaller than PIANO_MIN_SIZE=6: tiny, tiny_too{{$}}
// A malformed PIANO_MIN_SIZE fails the compilation with one line.
// RUN: env PIANO_MIN_SIZE=ten %clang -O0 %plugin -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=BAD; test ! -e %t.o
// BAD: error: piano: PIANO_MIN_SIZE: expected a number of IR instructions (0 keeps every function), got 'ten'
// The build summary counts what was left out.
// RUN: rm -f %t.sum && env -u PIANO_MIN_SIZE PIANO_SUMMARY=%t.sum %clang -O0 %plugin -c %s -o %t.o && %pianosummary %t.sum 2>&1 | %FileCheck %s --check-prefix=SUM
// SUM: found 2 function(s) across 1 file(s)
// SUM-NEXT: left out 2 small function(s) (below PIANO_MIN_SIZE=30 IR instructions; =NAME selects one anyway, PIANO_MIN_SIZE=0 keeps them all)
// The object carries its selection (.piano.sel, read by piano-cc at link).
// RUN: env PIANO_FNS='tiny,big' PIANO_MIN_SIZE=30 %clang -O0 %plugin -S -emit-llvm %s -o - | %FileCheck %s --check-prefix=SEL
// SEL: module asm ".pushsection .piano.sel,\22\22,@progbits"
// SEL: module asm ".asciz \22piano-sel 2\\011tiny,big\\01130\\011before inlining\\011{{.*}}min_size.c\22"
// PIANO_AFTER_INLINING=1: what survives inlining is instrumented (tiny and
// tiny_too are inlined into big at -O2); at -O0 nothing is inlined.
// RUN: env PIANO_AFTER_INLINING=1 PIANO_VERBOSE=1 %clang -O2 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=LATE
// LATE: instrumented 2 function(s): big, main{{$}}
// RUN: env PIANO_AFTER_INLINING=1 PIANO_VERBOSE=1 %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// The default: unset PIANO_FNS instruments after inlining, a pattern before it.
// RUN: env -u PIANO_AFTER_INLINING -u PIANO_FNS PIANO_VERBOSE=1 %clang -O2 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=LATE
// RUN: env -u PIANO_AFTER_INLINING -u PIANO_FNS PIANO_VERBOSE=1 %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// RUN: env -u PIANO_AFTER_INLINING PIANO_FNS=tiny,big PIANO_VERBOSE=1 %clang -O2 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=EARLY
// EARLY: instrumented 3 function(s): big, tiny, tiny_too{{$}}

static int tiny(int x) { return x + 1; }
static int tiny_too(int x) { return x * 2; }
__attribute__((noinline)) int big(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) {
    if (i % 3 == 0)
      s += tiny(i);
    else if (i % 3 == 1)
      s -= tiny_too(i);
    else
      s ^= i * 7;
  }
  return s;
}
int main(int argc, char **argv) {
  (void)argv;
  return big(argc * 100) == 12345;
}
