// Exact enter/exit counts with C++ exceptions thrown through instrumented
// functions and caught above, at -O0 and -O2, through stub_rt.c.
// RUN: %clang -O0 -c %stub -o %t.stub.o
// RUN: %clangxx -O0 -g %plugin %s %t.stub.o -o %t.O0 && %t.O0 | %FileCheck %s
// RUN: %clangxx -O2 %plugin %s %t.stub.o -o %t.O2 && %t.O2 | %FileCheck %s
// RUN: %clangxx -O2 -flto=thin -fuse-ld=lld %plugin %s %t.stub.o -o %t.thin && %t.thin | %FileCheck %s
// CHECK: caught 5 rethrown 1 kept 5
// CHECK-NEXT: piano-stub: registered 7 site(s), abi 3
// CHECK-NEXT: piano-stub: Guard::~Guard() enter=3 exit=3
// CHECK-NEXT: piano-stub: catcher(int) enter=10 exit=10
// CHECK-NEXT: piano-stub: inner(int) enter=13 exit=13
// CHECK-NEXT: piano-stub: keeps(int) enter=3 exit=3
// CHECK-NEXT: piano-stub: main enter=1 exit=1
// CHECK-NEXT: piano-stub: middle(int) enter=13 exit=13
// CHECK-NEXT: piano-stub: rethrows() enter=1 exit=1
// CHECK-NEXT: piano-stub: depth=0 mismatched=0
#include <cstdio>
#include <stdexcept>

struct Guard {
  int *p;
  ~Guard() { ++*p; }
};

__attribute__((noinline)) int inner(int x) {
  if (x % 2 == 0)
    throw std::runtime_error("even");
  return x;
}

// No try/catch here: the exception unwinds through it.
__attribute__((noinline)) int middle(int x) { return inner(x) + 1; }

__attribute__((noinline)) int catcher(int x) {
  try {
    return middle(x);
  } catch (const std::exception &) {
    return -1;
  }
}

static int dtors;
// A cleanup that already exists (Guard's destructor) and resumes.
__attribute__((noinline)) int keeps(int x) {
  Guard g{&dtors};
  return middle(x);
}

__attribute__((noinline)) void rethrows() {
  try {
    keeps(2);
  } catch (...) {
    throw;
  }
}

int main(int argc, char **) {
  int caught = 0, rethrown = 0, kept = 0;
  for (int i = 0; i < 10; i++)
    if (catcher(i + argc) < 0)
      caught++;
  for (int i = 0; i < 2; i++) {
    try {
      kept += keeps(2 * i + argc) > 0;
    } catch (...) {
    }
  }
  try {
    rethrows();
  } catch (const std::runtime_error &) {
    rethrown++;
  }
  kept += dtors;
  std::printf("caught %d rethrown %d kept %d\n", caught, rethrown, kept);
  return 0;
}
