// A short run's bytes in the database (issue 23): 128 leaf functions, each called
// once from each of two callers (256 calling contexts under them), and a hot
// function called 20,000 times. The check bounds the bytes of the histogram blobs
// per function and the pages of stats and contexts per row (spool/hist.h's format).
#include <stdio.h>
static volatile unsigned sink;
#define LEAF(n) __attribute__((noinline)) void leaf_##n(void) { sink += n; }
#define L8(n) LEAF(n##0) LEAF(n##1) LEAF(n##2) LEAF(n##3) LEAF(n##4) LEAF(n##5) LEAF(n##6) LEAF(n##7)
L8(1) L8(2) L8(3) L8(4) L8(5) L8(6) L8(7) L8(8) L8(9) L8(10) L8(11) L8(12) L8(13) L8(14) L8(15) L8(16)
#define C(n) leaf_##n();
#define C8(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7)
#define ALL C8(1) C8(2) C8(3) C8(4) C8(5) C8(6) C8(7) C8(8) C8(9) C8(10) C8(11) C8(12) C8(13) C8(14) C8(15) C8(16)
__attribute__((noinline)) void caller_a(void) { ALL }
__attribute__((noinline)) void caller_b(void) { ALL }
__attribute__((noinline)) void hot(int i) { sink ^= (unsigned)i; }
int main(void) {
    caller_a();
    caller_b();
    for (int i = 0; i < 20000; i++)
        hot(i);
    printf("%u\n", sink);
    return 0;
}
