// PIANO_FNS: =main,jumper,deep_a,deep_b,deep_c,after,on_usr1,handler_leaf
// longjmp and siglongjmp out of nested instrumented frames (also from a
// signal handler): the frames left are closed once, at the next entry or exit
// higher on the stack; counts exact, times sane.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
static jmp_buf env;
static sigjmp_buf senv;
static volatile int sink;
void deep_c(int how) {
    sink++;
    if (how == 0) longjmp(env, 1);
    raise(SIGUSR1);
}
void deep_b(int how) { deep_c(how); sink++; }
void deep_a(int how) { deep_b(how); sink++; }
void handler_leaf(void) { sink++; }
void on_usr1(int sig) { (void)sig; handler_leaf(); siglongjmp(senv, 1); }
void after(void) { sink++; }
/* the jump lands inside an instrumented function, which then returns */
int jumper(void) {
    if (setjmp(env) == 0) { deep_a(0); return 0; }
    return 1;
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    int n = 0;
    for (int i = 0; i < 10; i++) n += jumper();
    for (int i = 0; i < 10; i++) {
        if (setjmp(env) == 0) deep_a(0);
        after();
    }
    for (int i = 0; i < 10; i++) {
        if (sigsetjmp(senv, 1) == 0) deep_a(1);
        after();
    }
    printf("%d\n", n);
    return 0;
}
