// PIANO_FNS: =main,drive,resume,yield,gen_light,gen_heavy,light_step,heavy_step,spin,thrower
// A generator pattern on swapcontext: main resumes three coroutines in turn,
// each on its own stack, with instrumented calls in flight on every context
// at each switch (nested on both sides). The light one runs 1 ms per resume,
// the two heavy ones 20 ms: a suspended call is not charged the time the
// other contexts run (doc/architecture.md "Execution contexts"). The light one also
// longjmps, after a switch, out of a call that yielded. Counts exact.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#define STEPS 10
#define N 3
static ucontext_t main_ctx, co_ctx[N];
static volatile int sink;
#include "../lib/spin.h"
static int current;
void yield(void) { swapcontext(&co_ctx[current], &main_ctx); }
static jmp_buf jb;
void thrower(void) {
    yield();             /* suspended with this call in flight, then resumed */
    longjmp(jb, 1);
}
void light_step(void) {
    spin(1);
    if (!setjmp(jb)) thrower();
}
void heavy_step(void) { spin(20); yield(); }
void gen_light(void) {
    for (int i = 0; i < STEPS; i++) light_step();   /* each step yields once, inside thrower */
}
void gen_heavy(void) {
    for (int i = 0; i < STEPS; i++) heavy_step();
}
void resume(int i) {
    current = i;
    swapcontext(&main_ctx, &co_ctx[i]);
}
void drive(void) {
    for (int step = 0; step <= STEPS; step++)   /* the last round lets each generator return */
        for (int i = 0; i < N; i++) resume(i);
}
int main(void) {
    size_t size = 256 << 10;
    for (int i = 0; i < N; i++) {
        getcontext(&co_ctx[i]);
        co_ctx[i].uc_stack.ss_sp = malloc(size);
        co_ctx[i].uc_stack.ss_size = size;
        co_ctx[i].uc_link = &main_ctx;   /* a generator that returns resumes main */
        makecontext(&co_ctx[i], i ? gen_heavy : gen_light, 0);
    }
    drive();
    printf("%d\n", sink > 0);
    return 0;
}
