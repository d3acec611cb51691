// piano-cc / piano-c++: the plugin when compiling, the runtime link flags
// (with an rpath) when linking, everything else passed through in order.
// A real compile: the object calls the hooks.
// RUN: %pianocc -O1 -c %s -o %t.o && nm %t.o | %FileCheck %s --check-prefix=NM
// NM: U __piano_enter
// NM: U __piano_exit
// NM: U __piano_register
// RUN: %pianocc -### -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=COMPILE
// COMPILE: "-fpass-plugin={{/.*}}/PianoPass.so"
// COMPILE-NOT: piano_rt
// RUN: %pianocc -### -O2 -DX=1 %s -o %t.exe 2>&1 | %FileCheck %s --check-prefix=BOTH
// BOTH: "-D" "X=1"
// BOTH-SAME: "-fpass-plugin={{/.*}}/PianoPass.so"
// BOTH: "-L{{/[^"]*}}/lib"
// BOTH-SAME: "-lpiano_rt" "-rpath" "{{/[^"]*}}/lib"
// RUN: %pianocc -### %t.o -lm -o %t.exe 2>&1 | %FileCheck %s --check-prefix=LINK
// LINK-NOT: fpass-plugin
// LINK: "-L{{/[^"]*}}/lib"
// LINK-SAME: "-lm" "-lpiano_rt" "-rpath"
// RUN: %pianocc -### -shared -fPIC %s -o %t.so 2>&1 | %FileCheck %s --check-prefix=SHARED
// SHARED: "-fpass-plugin=
// SHARED: "-shared"{{.*}}"-lpiano_rt" "-rpath"
// RUN: %pianocc -E %s | %FileCheck %s --check-prefix=PRE
// PRE: int wrapped
// RUN: %pianocc -### -E %s 2>&1 | %FileCheck %s --check-prefix=PRE2
// RUN: %pianocc -### -fsyntax-only %s 2>&1 | %FileCheck %s --check-prefix=PRE2
// RUN: %pianocc -### -M %s 2>&1 | %FileCheck %s --check-prefix=PRE2
// PRE2-NOT: fpass-plugin
// PRE2-NOT: piano_rt
// RUN: %pianocc --version | %FileCheck %s --check-prefix=VERSION
// VERSION: clang version
// RUN: %pianocc -### -x c - -c -o %t.2.o < %s 2>&1 | %FileCheck %s --check-prefix=COMPILE
// A response file is passed on as is, and read to see what is asked.
// RUN: echo '-c "%s" -o %t.2.o' > %t.rsp
// RUN: %pianocc -### @%t.rsp 2>&1 | %FileCheck %s --check-prefix=COMPILE
// piano-c++ runs clang++ (links libstdc++).
// RUN: %pianocxx -### %t.o -o %t.exe 2>&1 | %FileCheck %s --check-prefix=CXX
// CXX: "-lpiano_rt"
// CXX: "-lstdc++"
// clang's exit status comes through.
// RUN: ! %pianocc -c %t.does-not-exist.c -o %t.3.o 2>/dev/null
// Without PianoPass.so next to it the wrapper says so.
// RUN: rm -rf %t.d && mkdir -p %t.d/bin && cp %pianocc %t.d/bin/piano-cc
// RUN: ! %t.d/bin/piano-cc -c %s -o %t.3.o 2> %t.err
// RUN: %FileCheck %s --check-prefix=MISSING < %t.err
// MISSING: piano-cc: cannot find PianoPass.so next to {{.*}}/bin/piano-cc

int wrapped(int x) { return x; }
int main(void) { return wrapped(0); }
