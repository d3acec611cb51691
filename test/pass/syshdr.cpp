// With PIANO_FNS unset, functions from system headers are left alone: by
// their DISubprogram file with -g, by their names (std::, __gnu_cxx::, __*)
// without debug info. An explicit '*' takes everything.
// RUN: env PIANO_VERBOSE=1 %clangxx -O0 -g %plugin -S -emit-llvm %s -o %t.g.ll 2>&1 | %FileCheck %s
// RUN: env PIANO_VERBOSE=1 %clangxx -O0 %plugin -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=NOG
// CHECK: instrumented 3 function(s): sum(std::vector<int, std::allocator<int>{{ ?}}> const&), __user_reserved(), main{{$}}
// NOG: instrumented 2 function(s): sum(std::vector<int, std::allocator<int>{{ ?}}> const&), main{{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='*' %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=STAR
// STAR: std::vector<int, std::allocator<int>{{ ?}}>::push_back(int&&)
// The -g site carries the file and line of the definition.
// RUN: %FileCheck %s --check-prefix=LINE < %t.g.ll
// LINE: c"{{.*}}syshdr.cpp\00"
// LINE: @__piano_site = internal global {{.*}} { i32 0, i32 [[@LINE+2]],
#include <vector>
int sum(const std::vector<int> &v) {
  int s = 0;
  for (int x : v)
    s += x;
  return s;
}
// A user function whose name starts with "__" is kept when -g says where it
// is defined; without -g the name rule drops it (so the no-debug count differs).
int __user_reserved() { return 1; }
int main() {
  std::vector<int> v;
  v.push_back(1);
  return sum(v) + __user_reserved() - 2;
}
