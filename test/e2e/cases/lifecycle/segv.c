// PIANO_FNS: tick,slow,deep1,deep2
// EXIT: 139
// the program's own crash (SIGSEGV) deep in the stack: recovered.
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
int *volatile nowhere;
void die(void) { *nowhere = 1; }
