// piano-cc / piano-c++: the plugin when compiling, the runtime link flags
// (with an rpath) when linking, everything else passed through in order.
// A real compile: the object calls the hooks.
// RUN: %pianocc -O1 -c %s -o %t.o && nm %t.o | %FileCheck %s --check-prefix=NM
// NM: U __piano_enter
// NM: U __piano_exit
// NM: U __piano_register
// RUN: %pianocc -### -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=COMPILE
// COMPILE: "-fpass-plugin={{/.*}}/lib/piano/llvm-[[MAJOR:[0-9]+]]/PianoPass.so"
// COMPILE-SAME: "-pg" "-mfentry"
// COMPILE-NOT: piano_rt
// cc1's -pg -mfentry (no_instrument_function's marks, test/pass/noinstr.cpp):
// not over the program's own -pg, nor for LLVM IR, nor when no LLVM pass
// runs, nor at a link (the driver's -pg alone links gcrt1.o: never added).
// RUN: %pianocc -### -pg -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=OWNPG
// OWNPG: "-pg"
// OWNPG-NOT: "-mfentry"
// RUN: %clang -O1 -c -emit-llvm %s -o %t.bc
// RUN: %pianocc -### -c %t.bc -o %t.o 2>&1 | %FileCheck %s --check-prefix=NOPG
// RUN: %pianocc -### -c -x ir %t.bc -o %t.o 2>&1 | %FileCheck %s --check-prefix=NOPG
// RUN: %pianocc -### -c -Xclang -disable-llvm-passes %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=NOPG
// RUN: %pianocc -### -c -Xclang -disable-llvm-optzns %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=NOPG
// RUN: %pianocc -### %t.o -o %t.exe 2>&1 | %FileCheck %s --check-prefix=NOPG
// A PIANO_FENTRY_MARKS exported for the build does not reach the plugin
// when the wrapper adds no marks: the IR's functions are instrumented.
// RUN: env PIANO_FENTRY_MARKS=1 %pianocc -O1 -c %t.bc -o %t.bc.o && nm %t.bc.o | %FileCheck %s --check-prefix=NM
// NOPG-NOT: "-pg"
// NOPG-NOT: "-mfentry"
// RUN: %pianocc -### %s -o %t.exe 2>&1 | %FileCheck %s --check-prefix=PGLINK
// PGLINK: "-pg" "-mfentry"
// PGLINK-NOT: gcrt1.o
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
// A fully static link: one line naming the flag, no link attempted; -c is fine.
// RUN: ! %pianocc -static %s -o %t.static 2> %t.err
// RUN: %FileCheck %s --check-prefix=STATIC < %t.err
// RUN: ! %pianocc -static-pie %s -o %t.static 2> %t.err
// RUN: %FileCheck %s --check-prefix=STATICPIE < %t.err
// RUN: %pianocc -static -c %s -o %t.static.o
// STATIC: piano-cc: -static: piano's runtime is a shared library (libpiano_rt.so), which a fully static program cannot load; link without -static
// STATIC-NOT: cannot find
// STATICPIE: piano-cc: -static-pie: piano's runtime is a shared library
// Another ABI than the runtime's: one line at the link, none at -c; -m64 after it undoes it.
// RUN: ! %pianocc -m32 %s -o %t.m32 2> %t.err
// RUN: %FileCheck %s --check-prefix=M32 < %t.err
// RUN: ! %pianocc -mx32 %s -o %t.m32 2>&1 | %FileCheck %s --check-prefix=MX32
// RUN: %pianocc -### -m32 -c %s -o %t.m32.o 2>&1 | %FileCheck %s --check-prefix=M32C
// RUN: %pianocc -m32 -m64 %s -o %t.m64
// M32: piano-cc: -m32: piano's runtime (libpiano_rt.so) is built for this machine's 64-bit ABI, which a program built with -m32 cannot load; build without it
// M32-NOT: cannot find
// MX32: piano-cc: -mx32: piano's runtime
// M32C: "-fpass-plugin=
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
// Plugins for several LLVMs side by side: lib/piano/llvm-N/ wins over lib/.
// RUN: rm -rf %t.m && mkdir -p %t.m/bin %t.m/lib/piano/llvm-%llvmmajor && cp %pianocc %t.m/bin/piano-cc
// RUN: cp %pluginpath %t.m/lib/piano/llvm-%llvmmajor/ && echo piano-built-for-llvm=9 > %t.m/lib/PianoPass.so
// RUN: %t.m/bin/piano-cc -### -c %s -o %t.3.o 2>&1 | %FileCheck %s --check-prefix=SIDE -DMAJOR=%llvmmajor
// SIDE: "-fpass-plugin={{.*}}/lib/piano/llvm-[[MAJOR]]/PianoPass.so"
// A plugin built for another LLVM is refused before clang runs.
// RUN: rm -r %t.m/lib/piano && cp %pianocc %t.m/bin/piano-cc-%llvmmajor
// RUN: ! %t.m/bin/piano-cc-%llvmmajor -c %s -o %t.3.o 2> %t.err
// RUN: %FileCheck %s --check-prefix=OTHER -DMAJOR=%llvmmajor < %t.err
// OTHER: piano-cc-[[MAJOR]]: {{.*}}/lib/PianoPass.so is built for LLVM 9, but piano-cc-[[MAJOR]] runs clang [[MAJOR]] ({{.*}}clang): install piano built with LLVM [[MAJOR]] (it adds lib/piano/llvm-[[MAJOR]]/), or use piano-cc-9
// RUN: echo no marker > %t.m/lib/PianoPass.so && ! %t.m/bin/piano-cc -c %s -o %t.3.o 2> %t.err
// RUN: %FileCheck %s --check-prefix=UNKNOWN < %t.err
// UNKNOWN: is built for an unknown LLVM, but piano-cc runs clang

int wrapped(int x) { return x; }
int main(void) { return wrapped(0); }
