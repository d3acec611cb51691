// A function's first 31 samples wait as bucket pairs in one page of the histogram pool
// (spool version 21, spool.h PIANO_TABLE_FEW); its 32nd makes its page table and counts
// them there (rt/hooks.c hist_first). Functions called across that edge, each call's
// time a few octaves from the one before: every histogram holds every call.
#include <stdio.h>
static volatile unsigned sink;
static void spin(unsigned i) { for (unsigned k = 0, n = 1u << (i % 12); k < n; k++) sink += k; }
#define FN(n) __attribute__((noinline)) void f##n(unsigned i) { spin(i); }
FN(1) FN(2) FN(30) FN(31) FN(32) FN(33) FN(64) FN(200)
int main(void) {
    for (unsigned i = 0; i < 200; i++) {
        if (i < 1) f1(i);
        if (i < 2) f2(i * 11);   /* 1 then 2048 iterations: never one bucket */
        if (i < 30) f30(i);
        if (i < 31) f31(i);
        if (i < 32) f32(i);
        if (i < 33) f33(i);
        if (i < 64) f64(i);
        f200(i);
    }
    printf("done\n");
    return 0;
}
// PIANO_FNS: f
