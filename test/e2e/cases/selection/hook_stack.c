// PIANO_FNS: leaf,inner,step
// PLUGIN: lib/hook_stack_check.c
// ENV: LD_PRELOAD=./libhook_stack_check.so
// The hooks leave the instrumented function's stack alone. inner is inlined
// into leaf with its hooks (instrumented before inlining, at -O0 too:
// always_inline), so leaf calls nothing but the hooks and keeps 28 ints in
// memory across them: a code generator that took leaf for a leaf function
// would keep them in the red zone (the 128 bytes under %rsp), where the hook's
// call writes. step keeps a value across its hooks in two callee-saved
// registers, and needs no frame beyond them: with a hook the code generator
// does not see as a call, its two pushes leave the stack 8 bytes off at the
// hook. The preloaded lib/hook_stack_check.c counts the hooks entered with a
// misaligned stack. (bench/asm_guard.patch with PIANO_ASM_NOALIGN=1 breaks
// leaf at -O0 and -O2, step at -O2.)
#include <stdio.h>

#define WORDS 28
static inline __attribute__((always_inline)) int inner(int x) { return x * 3 + 1; }

__attribute__((noinline)) int leaf(int x) {
    volatile int a[WORDS];
    for (int i = 0; i < WORDS; i++) a[i] = x + i;
    int r = inner(a[3]);
    for (int i = 0; i < WORDS; i++) r += a[i];
    return r;
}

/* The same without hooks (not selected): what leaf must return. */
__attribute__((noinline)) int wanted(int x) {
    int r = (x + 3) * 3 + 1;
    for (int i = 0; i < WORDS; i++) r += x + i;
    return r;
}

static volatile int total;
__attribute__((noinline)) void step(int x) { total += x; }

int main(void) {
    int wrong = 0;
    for (int i = 0; i < 1000; i++)
        if (leaf(i) != wanted(i)) wrong++;
    for (int i = 0; i < 1000; i++) step(i);
    printf("wrong %d total %d\n", wrong, total);
    return 0;
}
