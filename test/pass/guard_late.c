// Compile time (bench/README.md, "Run-time selection"): before inlining, the
// pass places the hook calls at the start of the pipeline but their guards
// (the load of the function's byte and the branch) only at its end, so the
// optimizer works on straight-line calls. The IR the inliner sees has the
// hooks and no guard; the IR that reaches the code generator has both.
// RUN: %clang -O2 %plugin -mllvm -print-before=inline -S -emit-llvm %s -o %t.ll 2> %t.mid
// RUN: %FileCheck %s --check-prefix=MID < %t.mid
// RUN: %FileCheck %s --check-prefix=MIDNOGUARD < %t.mid
// RUN: %FileCheck %s < %t.ll
// RUN: %opt -passes=verify -disable-output %t.ll
// At -O0 (the same two steps) and with opt -passes=piano (both at once).
// RUN: %clang -O0 %plugin -S -emit-llvm %s -o %t.O0.ll
// RUN: %FileCheck %s < %t.O0.ll
// RUN: %clang -O0 -Xclang -disable-O0-optnone -S -emit-llvm %s -o %t.plain.ll
// RUN: %opt -load-pass-plugin=%pluginpath -passes=piano -S %t.plain.ll -o %t.opt.ll
// RUN: %FileCheck %s < %t.opt.ll
// A hook call whose site the optimizer made a phi or select of sites (here
// written so) is guarded by the byte its site's `on` points to, read at run
// time.
// RUN: %FileCheck %s --check-prefix=PICK < %t.ll

// MID: IR Dump Before {{.*}}(twice)
// MID: call void @__piano_enter(
// MID: call void @__piano_exit(
// MIDNOGUARD-NOT: load atomic volatile

// CHECK-LABEL: define {{.*}}@twice(
// CHECK: load atomic volatile i8, {{.*}}@__piano_on_bytes{{.*}} monotonic, align 1
// CHECK-NEXT: icmp ne i8
// CHECK-NEXT: br i1 {{.*}}, !prof
// CHECK: call void @__piano_enter(
// CHECK: load atomic volatile i8, {{.*}}@__piano_on_bytes{{.*}} monotonic, align 1
// CHECK-NEXT: icmp ne i8
// CHECK-NEXT: br i1 {{.*}}, !prof
// CHECK: call void @__piano_exit(

// PICK-LABEL: define {{.*}}@pick(
// PICK: %[[SITE:[0-9]+]] = select i1
// PICK: getelementptr {{.*}}%{{[0-9]+}}
// PICK-NEXT: %[[ON:[0-9]+]] = load
// PICK-NEXT: load atomic volatile i8, {{.*}}%[[ON]] monotonic, align 1
// PICK: call void @__piano_exit({{.*}}%[[SITE]])

struct site {
  unsigned id, line;
  const char *name, *file;
  unsigned char *on;
};
void __piano_exit(struct site *);
static unsigned char bytes[2] = {1, 0};
static struct site a = {0, 0, "a\0a\0" "0", "f", &bytes[0]};
static struct site b = {0, 0, "b\0b\0" "0", "f", &bytes[1]};

int g(int);
__attribute__((noinline)) int twice(int x) { return g(x) * 2; }

__attribute__((noinline)) void pick(int c) { __piano_exit(c ? &a : &b); }
