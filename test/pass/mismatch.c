// PianoPass.so loaded by the clang or opt of another LLVM major refuses with
// one line naming both majors (pass/Plugin.cpp, llvmGetPassPluginInfo):
// clang fails with "unable to load plugin", opt fails or ignores the plugin;
// neither crashes nor compiles with it. Tried with every other
// /usr/lib/llvm-*/bin/clang installed here (none: nothing to try).
// RUN: for d in /usr/lib/llvm-*/bin; do m=${d#/usr/lib/llvm-}; m=${m%/bin}; [ "$m" != %llvmmajor ] && [ -x "$d/clang" ] || continue; echo "clang $m"; ! "$d/clang" -c %plugin %s -o %t.o 2> %t.err || exit 1; %FileCheck %s --check-prefix=CLANG -DMAJOR=%llvmmajor -DHOST=$m < %t.err || exit 1; done
// CLANG: piano: {{.*}}PianoPass.so is built for LLVM [[MAJOR]], not for the LLVM [[HOST]] that loads it: use lib/piano/llvm-[[HOST]]/PianoPass.so (or piano-cc) of a piano built with -DLLVM_DIR=/usr/lib/llvm-[[HOST]]/lib/cmake/llvm
// CLANG-NEXT: error: unable to load plugin '{{.*}}PianoPass.so': 'Wrong API version on plugin '{{.*}}'. Got version 0
// CLANG-NOT: Stack dump
// RUN: for d in /usr/lib/llvm-*/bin; do m=${d#/usr/lib/llvm-}; m=${m%/bin}; [ "$m" != %llvmmajor ] && [ -x "$d/opt" ] || continue; echo "opt $m"; ! "$d/opt" -load-pass-plugin=%pluginpath -passes=piano -disable-output /dev/null 2> %t.err || exit 1; %FileCheck %s --check-prefix=OPT -DMAJOR=%llvmmajor -DHOST=$m < %t.err || exit 1; done
// OPT: piano: {{.*}}PianoPass.so is built for LLVM [[MAJOR]], not for the LLVM [[HOST]] that loads it
// OPT-NOT: Stack dump
// The matching clang loads it.
// RUN: %clang -c %plugin %s -o %t.o 2> %t.err && ! grep piano: %t.err

int f(int x) { return x + 1; }
