// What the pass adds besides the hooks, kept cheap for the code generator
// (bench/README.md, "Where a compile with piano spends its time").
// RUN: %clang -O2 %plugin -S -emit-llvm %s -o %t.ll
// RUN: %FileCheck %s < %t.ll
// RUN: %FileCheck %s --check-prefix=NAMES < %t.ll
// RUN: %opt -passes=verify -disable-output %t.ll
// RUN: %clang -O0 -fno-omit-frame-pointer %plugin -S -emit-llvm %s -o %t.fp.ll
// RUN: %FileCheck %s < %t.fp.ll
// RUN: %FileCheck %s --check-prefix=FP < %t.fp.ll
//
// The module constructor has the functions' target attributes: without them
// LLVM builds a second subtarget for it (~1.4M instructions of the compiler
// per object), and it has the frame pointer the user asked for.
// CHECK-LABEL: define {{.*}}@first(
// CHECK: ){{.*}} [[F:#[0-9]+]] {
// CHECK: define internal void @__piano_module_ctor() [[CTOR:#[0-9]+]]
// CHECK: attributes [[F]] = { {{.*}}"target-cpu"="[[CPU:[^"]+]]" "target-features"="[[FEATURES:[^"]*]]"
// CHECK: attributes [[CTOR]] = { {{.*}}"target-cpu"="[[CPU]]" "target-features"="[[FEATURES]]"
// (LLVM 22 writes no "frame-pointer"="none", the default.)
// FP: define internal void @__piano_module_ctor() [[FPCTOR:#[0-9]+]]
// FP: attributes [[FPCTOR]] = { {{.*}}"frame-pointer"="all"
//
// The names, "display\0match\0system\0" each, in one private constant per
// module (one global where there was one per function); each site points at
// its own (the same text once).
// NAMES: @__piano_names = private unnamed_addr constant [{{[0-9]+}} x i8] c"first\00first\000\00second\00second\000\00third\00third\000\00"
// NAMES-NOT: @__piano_name.
// NAMES-NOT: @__piano_name =

int first(int x) { return x * 3 + 1; }
int second(int x) { return x ^ 5; }
int third(int x) { return first(x) + second(x); }
