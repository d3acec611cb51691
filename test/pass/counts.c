// Exact enter/exit counts at run time, through stub_rt.c: recursion, early
// returns, musttail, at -O0 and -O2 (and -flto linked with lld).
// RUN: %clang -O0 -c %stub -o %t.stub.o
// RUN: %clang -O0 -g %plugin %s %t.stub.o -o %t.O0 && %t.O0 | %FileCheck %s
// RUN: %clang -O2 %plugin %s %t.stub.o -o %t.O2 && %t.O2 | %FileCheck %s
// RUN: %clang -O2 -flto -fuse-ld=lld %plugin %s %t.stub.o -o %t.lto && %t.lto | %FileCheck %s
// CHECK: result 130
// CHECK-NEXT: piano-stub: registered 5 site(s), abi 3
// CHECK-NEXT: piano-stub: early enter=4 exit=4
// CHECK-NEXT: piano-stub: even enter=4 exit=4
// CHECK-NEXT: piano-stub: main enter=1 exit=1
// CHECK-NEXT: piano-stub: odd enter=3 exit=3
// CHECK-NEXT: piano-stub: rec enter=11 exit=11
// CHECK-NEXT: piano-stub: depth=0 mismatched=0
#include <stdio.h>

int rec(int n) { return n <= 0 ? 0 : n + rec(n - 1); }

int early(int x) {
  if (x < 0)
    return -1;
  if (x == 0)
    return 0;
  for (int i = 0; i < x; i++)
    if (i == 3)
      return 3;
  return x;
}

int even(int n);
int odd(int n) {
  if (n == 0)
    return 0;
  __attribute__((musttail)) return even(n - 1);
}
int even(int n) {
  if (n == 0)
    return 1;
  __attribute__((musttail)) return odd(n - 1);
}

int main(int argc, char **argv) {
  (void)argv;
  volatile int six = 6;
  int r = rec(argc * 10);                                      /* 55, 11 calls */
  r += early(-argc) + early(argc - 1) + early(argc * 2) + early(argc * 9); /* -1+0+2+3 */
  r += even(six) * 71;                                         /* even/odd: 4+3 */
  printf("result %d\n", r);
  return 0;
}
