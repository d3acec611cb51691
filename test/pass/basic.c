// Entry/exit hooks, the site array and the registering ctor, at every -O
// level and for the compile step of -flto / -flto=thin.
// RUN: %clang -O0 -g %plugin -S -emit-llvm %s -o %t.O0.ll
// RUN: %FileCheck %s --check-prefixes=CHECK,O0 < %t.O0.ll
// RUN: %FileCheck %s --check-prefix=G < %t.O0.ll
// RUN: %opt -passes=verify -disable-output %t.O0.ll
// RUN: %clang -O2 -g %plugin -S -emit-llvm %s -o %t.O2.ll
// RUN: %FileCheck %s --check-prefixes=CHECK < %t.O2.ll
// RUN: %FileCheck %s --check-prefix=G < %t.O2.ll
// RUN: %opt -passes=verify -disable-output %t.O2.ll
// RUN: %clang -O1 %plugin -S -emit-llvm %s -o - | %FileCheck %s
// RUN: %clang -O3 %plugin -S -emit-llvm %s -o - | %FileCheck %s
// RUN: %clang -O2 -flto %plugin -c %s -o %t.lto.o && %llvm-dis %t.lto.o -o - | %FileCheck %s
// RUN: %clang -O2 -flto=thin %plugin -c %s -o %t.thin.o && %llvm-dis %t.thin.o -o - | %FileCheck %s
// RUN: %clang -O0 -flto %plugin -c %s -o %t.lto0.o && %llvm-dis %t.lto0.o -o - | %FileCheck %s
// Without the plugin nothing is added.
// RUN: %clang -O0 -S -emit-llvm %s -o - | %FileCheck %s --check-prefix=NONE
// NONE-NOT: __piano

// One site per function, writable (the runtime stores ids into it) and
// internal, listed in a private array for the constructor.
// Pointers are typed (i8*) with LLVM 14 and opaque (ptr) from 15 on.
// G-DAG: @__piano_site = internal global { i32, i32, {{i8\*|ptr}}, {{i8\*|ptr}}, {{i8\*|ptr}} } { i32 0, i32 {{[0-9]+}},
// G-DAG: @__piano_site.{{[0-9]+}} = internal global { i32, i32, {{i8\*|ptr}}, {{i8\*|ptr}}, {{i8\*|ptr}} }
// G-DAG: @__piano_site.{{[0-9]+}} = internal global { i32, i32, {{i8\*|ptr}}, {{i8\*|ptr}}, {{i8\*|ptr}} }
// The functions' bytes side by side, 1 as compiled; the names side by side
// in one constant, each "display\0match\0system\0".
// G-DAG: @__piano_on_bytes = internal global [3 x i8] c"\01\01\01"
// G-DAG: @__piano_names = private unnamed_addr constant [42 x i8] c"early\00early\000\00main\00main\000\00helper\00helper\000\00"
// G-DAG: @__piano_sites = private constant [3 x {{i8\*|ptr}}]
// G-DAG: @llvm.global_ctors = appending global {{.*}} @__piano_module_ctor
// G-DAG: declare void @__piano_enter({{i8\*|ptr}}){{.*}} [[NU:#[0-9]+]]
// G-DAG: declare void @__piano_exit({{i8\*|ptr}})
// G-DAG: notail call void @__piano_exit(
// G-DAG: attributes [[NU]] = { nounwind nonlazybind }

int early(int x) {
  if (x < 0)
    return -1;
  if (x == 0)
    return 0;
  return x * 3;
}
// CHECK-LABEL: define {{.*}}i32 @early(
// O0-NEXT: alloca
// O0-NEXT: alloca
// CHECK: call void @__piano_enter({{i8\*|ptr}} {{.*}}@__piano_site{{[ )]}}
// CHECK-NOT: call void @__piano_enter
// CHECK: call void @__piano_exit({{i8\*|ptr}} {{.*}}@__piano_site{{[ )]}}
// CHECK: ret i32
// CHECK: {{^}}}

static int helper(int x) { return x + 1; }

int main(int argc, char **argv) {
  (void)argv;
  return early(argc) + helper(argc);
}
// main is site 1 (module order: early, main, helper); at -O2 early (site 0) is inlined into it with its hooks.
// CHECK-LABEL: define {{.*}}i32 @main(
// CHECK: call void @__piano_enter({{.*}}@[[MAIN:__piano_site\.[0-9]+]]{{[ )]}}
// CHECK: call void @__piano_exit({{.*}}@[[MAIN]]{{[ )]}}
// CHECK: ret i32

// clang emits the static helper after its first user.
// O0-LABEL: define internal i32 @helper(
// O0: call void @__piano_enter(
// O0: call void @__piano_exit(
// O0: ret i32

// CHECK-LABEL: define internal void @__piano_module_ctor()
// CHECK-NEXT: call i32 @__piano_register({{i8\* bitcast \(\[3 x i8\*\]\* @__piano_sites to i8\*\)|ptr (nonnull )?@__piano_sites}}, i32 3, i32 3)
// CHECK-NEXT: ret void
