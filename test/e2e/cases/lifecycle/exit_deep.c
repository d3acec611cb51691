// PIANO_FNS: tick,slow,deep1,deep2
// EXIT: 3
// exit() deep in the stack: the run is stored at exit (complete); the calls in flight are unfinished; atexit handlers are counted.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void tick(int i) { sink += (unsigned)i; }
void slow(void) { struct timespec t = { 0, 20000000 }; nanosleep(&t, 0); }
void die(void);
void deep2(void) { slow(); die(); }
void deep1(void) { deep2(); }
int main(void) {
    for (int i = 0; i < 3; i++) tick(i);
    printf("before\n");
    fflush(stdout);
    deep1();
    printf("not reached\n");
    return 0;
}
void at_end(void) { tick(100); }
void die(void) { atexit(at_end); exit(3); }
