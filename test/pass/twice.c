// Never instrument a function twice: the pass may run again (opt, LTO).
// RUN: %clang -O0 %plugin -S -emit-llvm %s -o %t.once.ll
// RUN: %opt -load-pass-plugin=%pluginpath -passes=piano -S %t.once.ll -o %t.twice.ll
// RUN: %FileCheck %s < %t.twice.ll
// RUN: %clang -O2 -flto %plugin -c %s -o %t.bc
// RUN: %opt -load-pass-plugin=%pluginpath -passes=piano %t.bc -o - | %llvm-dis -o - | %FileCheck %s --check-prefix=LTO
// The pass by name through opt on an uninstrumented module.
// RUN: %clang -O0 -Xclang -disable-O0-optnone -S -emit-llvm %s -o %t.plain.ll
// RUN: %opt -load-pass-plugin=%pluginpath -passes=piano -S %t.plain.ll -o - | %FileCheck %s

int twice(int x) { return x + 2; }

// CHECK: @__piano_site = internal global
// CHECK-NOT: @__piano_site.1 =
// CHECK-LABEL: define {{.*}}@twice(
// CHECK-SAME: [[ATTR:#[0-9]+]]
// CHECK: call void @__piano_enter(
// CHECK-NOT: call void @__piano_enter(
// CHECK: call void @__piano_exit(
// CHECK: ret
// CHECK-NOT: call void @__piano_
// CHECK: @__piano_module_ctor()
// CHECK-NOT: @__piano_module_ctor.
// CHECK: attributes [[ATTR]] = {{{.*}}"piano-instrumented"

// LTO-COUNT-1: call void @__piano_enter(
// LTO-NOT: call void @__piano_enter(
// LTO-NOT: __piano_module_ctor.
