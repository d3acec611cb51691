// PIANO_FNS: =main,run_chain,first,second,run_quitter,quitter,abandoned,run_reuser,reuser,spin
// makecontext'd functions that return through uc_link: first returns into a
// fresh context (second), which returns into main's, resumed where its
// swapcontext left it (glibc switches inside, unseen). Then a coroutine that
// leaves for good with setcontext, calls in flight; its stack is made into a
// new context: the calls left there end, timed to where they were left.
// Suspended calls are not charged the other contexts' time.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
static ucontext_t main_ctx, co1, co2, co3;
static volatile int sink;
#include "../lib/spin.h"
void first(void) { spin(50); }     /* returns into co2 */
void second(void) { spin(50); }    /* returns into main_ctx */
void run_chain(void) { swapcontext(&main_ctx, &co1); }
void abandoned(void) {
    spin(5);
    setcontext(&main_ctx);   /* never comes back: this call and quitter's are left */
}
void quitter(void) { spin(5); abandoned(); }
void run_quitter(void) { swapcontext(&main_ctx, &co3); }
void reuser(void) { spin(1); }
void run_reuser(void) { swapcontext(&main_ctx, &co3); }
static void make(ucontext_t *c, void *stack, ucontext_t *link, void (*fn)(void)) {
    getcontext(c);
    c->uc_stack.ss_sp = stack;
    c->uc_stack.ss_size = 256 << 10;
    c->uc_link = link;
    makecontext(c, fn, 0);
}
int main(void) {
    make(&co1, malloc(256 << 10), &co2, first);
    make(&co2, malloc(256 << 10), &main_ctx, second);
    run_chain();
    void *stack3 = malloc(256 << 10);
    make(&co3, stack3, &main_ctx, quitter);
    run_quitter();
    spin(150);   /* while quitter's calls are left */
    make(&co3, stack3, &main_ctx, reuser);   /* the same stack, a new context */
    run_reuser();
    printf("%d\n", sink > 0);
    return 0;
}
