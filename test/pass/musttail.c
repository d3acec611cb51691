// __piano_exit goes immediately before a musttail call (the ret must follow
// the call), at -O0 and -O2.
// RUN: %clang -O0 -g %plugin -S -emit-llvm %s -o %t.O0.ll
// RUN: %FileCheck %s --check-prefixes=CHECK,O0 < %t.O0.ll
// RUN: %opt -passes=verify -disable-output %t.O0.ll
// At -O2 the mutual recursion is inlined into loops (hooks and all), so keep
// the calls with -fno-inline; stub_counts.c checks -O2 semantics at run time.
// The blocks' order at -O2 is the optimizer's: O2 checks both exits of each
// function, in any order.
// RUN: %clang -O2 -fno-inline %plugin -S -emit-llvm %s -o %t.O2.ll
// RUN: %FileCheck %s --check-prefixes=CHECK < %t.O2.ll
// RUN: %FileCheck %s --check-prefixes=O2 < %t.O2.ll

int even(int n);
int odd(int n) {
  if (n == 0)
    return 0;
  __attribute__((musttail)) return even(n - 1);
}
// CHECK-LABEL: define {{.*}}i32 @odd(
// CHECK: call void @__piano_enter(
// CHECK: call void @__piano_exit(
// CHECK: {{.*}}musttail call i32 @even(
// CHECK-NEXT: ret i32
// O2-LABEL: define {{.*}}i32 @odd(
// O2-COUNT-2: call void @__piano_exit(
// O0: call void @__piano_exit(
// O0: ret i32

int even(int n) {
  if (n == 0)
    return 1;
  __attribute__((musttail)) return odd(n - 1);
}
// CHECK-LABEL: define {{.*}}i32 @even(
// CHECK: call void @__piano_exit(
// CHECK: {{.*}}musttail call i32 @odd(
// CHECK-NEXT: ret i32
// O2-LABEL: define {{.*}}i32 @even(
// O2-COUNT-2: call void @__piano_exit(
// O2-LABEL: declare
