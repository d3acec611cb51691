// Every hook call (entry, each return, the cleanup landing pad of unwinding)
// sits behind its own atomic load of its function's byte (in the module's
// __piano_on_bytes, where the site's `on` points), always
// (PIANO_GUARD=1 is no longer needed); nothing refers to ABI 2's __piano_on.
// At -O2 the optimizer may load the byte once for exits on both sides of a
// branch (only one of them runs).
// Counts are exact with the bytes set, and no hook runs once the runtime
// cleared them at registration (the stub runtime's PIANO_STUB_OFF=1).
// RUN: %clangxx -O0 %plugin -S -emit-llvm %s -o %t.O0.ll
// RUN: %FileCheck %s --check-prefix=IR < %t.O0.ll
// RUN: %opt -passes=verify -disable-output %t.O0.ll
// RUN: %clangxx -O2 %plugin -S -emit-llvm %s -o %t.O2.ll
// RUN: %FileCheck %s --check-prefix=IR2 < %t.O2.ll
// RUN: %opt -passes=verify -disable-output %t.O2.ll
// RUN: %FileCheck %s --check-prefix=NOGUARD < %t.O2.ll
// RUN: %clang -O0 -c %stub -o %t.stub.o
// RUN: %clangxx -O0 %plugin %s %t.stub.o -o %t.run0 && %t.run0 | %FileCheck %s
// RUN: %clangxx -O2 %plugin %s %t.stub.o -o %t.run2 && %t.run2 | %FileCheck %s
// RUN: PIANO_STUB_OFF=1 %t.run0 | %FileCheck %s --check-prefix=OFF
// RUN: PIANO_STUB_OFF=1 %t.run2 | %FileCheck %s --check-prefix=OFF

// IR-LABEL: define {{.*}}@_Z5checki(
// IR: load atomic volatile i8, {{.*}}@__piano_on_bytes{{.*}} monotonic, align 1
// IR-NEXT: icmp ne i8
// IR-NEXT: br i1 {{.*}}, !prof
// IR: call void @__piano_enter(
// IR: load atomic volatile i8, {{.*}}@__piano_on_bytes{{.*}} monotonic, align 1
// IR: call void @__piano_exit(
// IR-NEXT: br label
// IR: landingpad
// IR-NEXT: cleanup
// IR-NEXT: load atomic volatile i8, {{.*}}@__piano_on_bytes{{.*}} monotonic, align 1
// IR: call void @__piano_exit(
// IR2: load atomic volatile i8, {{.*}}@__piano_on_bytes{{.*}} monotonic
// IR2: call void @__piano_enter(
// NOGUARD-NOT: @__piano_on{{$|[^_]}}

// CHECK: piano-stub: check(int) enter=6 exit=6
// CHECK: piano-stub: leaf(int) enter=5 exit=5
// CHECK: piano-stub: main enter=1 exit=1
// CHECK: piano-stub: depth=0 mismatched=0
// OFF: piano-stub: no hook called
// OFF-NOT: enter=
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) int leaf(int x) {
  if (x == 3)
    throw std::runtime_error("three");
  return x * 2;
}

// Two returns, and unwinding through it when leaf throws.
__attribute__((noinline)) int check(int x) {
  if (x < 0)
    return -1;
  return leaf(x) + 1;
}

int main() {
  int sum = check(-5);
  for (int i = 0; i < 5; i++) {
    try {
      sum += check(i);
    } catch (const std::exception &) {
      sum += 100;
    }
  }
  std::printf("sum %d\n", sum);
  return 0;
}
