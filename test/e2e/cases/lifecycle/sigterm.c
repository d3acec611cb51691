// PIANO_FNS: tick,on_term,deep1,deep2
// EXIT: 130
// SIGTERM: the program's own handler runs (and calls an instrumented
// function); SIGINT keeps its default action and ends the program.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static volatile unsigned sink;
static volatile sig_atomic_t got;
void tick(int i) { sink += (unsigned)i; }
void on_term(int sig) { got = sig; tick(sig); }
void deep2(void) {
    raise(SIGTERM);
    printf("handled %d\n", (int)got);
    fflush(stdout);
    raise(SIGINT);
}
void deep1(void) { deep2(); }
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    for (int i = 0; i < 3; i++) tick(i);
    deep1();
    printf("not reached\n");
    return 0;
}
