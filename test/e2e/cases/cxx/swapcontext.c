// PIANO_FNS: =main,in_main_ctx,in_coroutine,coroutine,leaf
// swapcontext between the main context and a coroutine on its own stack, with
// instrumented calls in flight on both sides at each switch: counts exact,
// times sane.
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
static ucontext_t main_ctx, co_ctx;
static volatile int sink;
void leaf(int i) { sink += i; }
void in_coroutine(int i) {
    leaf(i);
    swapcontext(&co_ctx, &main_ctx);   /* back to main with this call in flight */
    leaf(i);
}
void coroutine(void) {
    for (int i = 0; i < 5; i++) in_coroutine(i);
}
void in_main_ctx(int i) {
    leaf(i);
    swapcontext(&main_ctx, &co_ctx);   /* into the coroutine with this call in flight */
    leaf(i);
}
int main(void) {
    size_t size = 1 << 20;
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = malloc(size);
    co_ctx.uc_stack.ss_size = size;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, coroutine, 0);
    for (int i = 0; i < 6; i++) in_main_ctx(i);   /* the 6th resumes the coroutine to its end */
    printf("%d\n", sink);
    return 0;
}
