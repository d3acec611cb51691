// C++: functions that may unwind get a cleanup landing pad that calls
// __piano_exit and resumes; existing resumes get an exit too; nounwind
// (noexcept) functions get none. Names are full demangled signatures.
// RUN: %clangxx -O0 -g %plugin -S -emit-llvm %s -o %t.O0.ll
// RUN: %FileCheck %s < %t.O0.ll
// RUN: %opt -passes=verify -disable-output %t.O0.ll
// RUN: %clangxx -O2 -g %plugin -S -emit-llvm %s -o %t.O2.ll
// RUN: %FileCheck %s < %t.O2.ll
// RUN: %opt -passes=verify -disable-output %t.O2.ll
// Without exceptions nothing unwinds: no landing pads are added.
// RUN: %clangxx -O0 -fno-exceptions %plugin -S -emit-llvm %s -o - -DNOEXC | %FileCheck %s --check-prefix=NOEXC
// NOEXC-NOT: piano_cleanup
// NOEXC-NOT: landingpad

// CHECK-DAG: @__piano_names = {{.*}}c"app::Parser::parse(int)\00app::Parser::parse\000\00

int mayThrow(int x);
namespace app {
struct Parser {
  int parse(int x);
};
} // namespace app

struct Guard {
  ~Guard();
};

int app::Parser::parse(int x) { return mayThrow(x) + 1; }
// CHECK-LABEL: define {{.*}}@_ZN3app6Parser5parseEi(
// CHECK-SAME: personality {{.*}}@__gxx_personality_v0
// CHECK: call void @__piano_enter(
// CHECK: invoke {{.*}}@_Z8mayThrowi(
// CHECK-NEXT: to label {{.*}} unwind label %[[LP:[a-z_.0-9]+]]
// CHECK: call void @__piano_exit(
// CHECK: ret i32
// CHECK: [[LP]]:
// CHECK-NEXT: landingpad
// CHECK-NEXT: cleanup
// CHECK-NEXT: load atomic volatile i8
// CHECK: call void @__piano_exit(
// CHECK: resume

#ifndef NOEXC
int withGuard(int x) {
  Guard g;
  return mayThrow(x);
}
// An existing cleanup (the Guard destructor) ends in resume: exit before it.
// CHECK-LABEL: define {{.*}}@_Z9withGuardi(
// CHECK: call void @__piano_enter(
// CHECK: call void @__piano_exit(
// CHECK: ret i32
// CHECK: call void @__piano_exit(
// CHECK: resume
#endif

int quiet(int x) noexcept { return x * 2; }
// CHECK-LABEL: define {{.*}}@_Z5quieti(
// CHECK-NOT: landingpad
// CHECK: call void @__piano_exit(
// CHECK: ret i32
// CHECK-NEXT: }
