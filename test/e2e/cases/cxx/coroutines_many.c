// PIANO_FNS: =main,gen,step,inner,finish_some
// 300 coroutines, each suspended with calls in flight: more than a thread
// parks (256, doc/architecture.md "Jumps"). The oldest ones' calls end when
// the limit is passed, timed to where they were suspended; resumed later,
// they go on without them. 100 are resumed to their end, the others are left
// (their stacks freed): in flight at the exit. Counts exact, nothing leaks.
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#define N 300
static ucontext_t main_ctx, co[N];
static volatile int sink;
static int current;
void inner(void) { swapcontext(&co[current], &main_ctx); }
void step(void) { inner(); sink++; }
void gen(void) { step(); sink++; }
static void resume(int i) { current = i; swapcontext(&main_ctx, &co[i]); }
void finish_some(void) {
    for (int i = 0; i < 100; i++) resume(i);   /* the oldest: their calls ended already */
}
int main(void) {
    for (int i = 0; i < N; i++) {
        getcontext(&co[i]);
        co[i].uc_stack.ss_sp = malloc(64 << 10);
        co[i].uc_stack.ss_size = 64 << 10;
        co[i].uc_link = &main_ctx;
        makecontext(&co[i], gen, 0);
        resume(i);
    }
    finish_some();
    for (int i = 100; i < N; i++) free(co[i].uc_stack.ss_sp);
    printf("%d\n", sink);
    return 0;
}
