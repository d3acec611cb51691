// PIANO_FNS: fn_
// A program registers every instrumented function it has, but a run stores
// the names of only those its rows name (what was called): 64 registered,
// 2 called.
#include <stdio.h>
static volatile unsigned sink;
#define F(n) void fn_##n(int i) { sink += (unsigned)i * n; }
#define F8(a) F(a##0) F(a##1) F(a##2) F(a##3) F(a##4) F(a##5) F(a##6) F(a##7)
F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7) F8(8)
int main(void) {
    for (int i = 0; i < 10; i++) fn_13(i);
    fn_77(1);
    printf("%u\n", sink);
    return 0;
}
