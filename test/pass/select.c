// PIANO_FNS selection, observed through PIANO_VERBOSE=1.
// RUN: env PIANO_VERBOSE=1 %clang -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// RUN: env PIANO_VERBOSE=1 PIANO_FNS= %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='*' %clang -O2 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=file:pass/select.c %clang -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ALL
// ALL: piano: {{.*}}select.c: instrumented 4 function(s): parse_item, parse, main, resolve
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=parse %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SUB
// SUB: instrumented 2 function(s): parse_item, parse{{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS==parse %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=EXACT
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=parse,!parse_item %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=EXACT
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='!parse_item,parse' %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=EXACT
// EXACT: instrumented 1 function(s): parse{{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='!parse' %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=EXCL
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='!parse,!=nothing' %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=EXCL
// EXCL: instrumented 2 function(s): main, resolve{{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS==main,resolve %clang -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=TWO
// TWO: instrumented 2 function(s): main, resolve{{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=file:other.c %clang -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NONE
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='!*' %clang -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NONE
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='*,!file:select.c' %clang -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NONE
// NONE: instrumented 0 function(s)
// Nothing selected: no sites, no ctor.
// RUN: env PIANO_FNS=nomatch %clang -O0 %plugin -S -emit-llvm %s -o - | %FileCheck %s --check-prefix=NOIR
// NOIR-NOT: __piano
// Without PIANO_VERBOSE the pass is silent.
// RUN: test -z "$(%clang -O0 %plugin -c %s -o %t.o 2>&1)"

int parse_item(int x) { return x + 1; }
int parse(int x) { return parse_item(x) * 2; }
static int resolve(int x) { return parse(x) - 1; }
int main(void) { return resolve(1) != 3; }
