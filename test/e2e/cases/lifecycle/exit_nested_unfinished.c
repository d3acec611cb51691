// PIANO_FNS: =main,run,step,leaf
// EXIT: 3
// main -> run -> step -> exit(3), after 3 leaf calls and a 20 ms sleep in
// step: the three calls in flight at the exit count as calls, timed to the
// end of the run, and are marked unfinished (in stats, the report's JSON and
// table). With KILL=1 in the environment, step kills the process instead:
// the same calls, timed to the last moment the run was seen alive.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void step(void) {
    for (int i = 0; i < 3; i++) leaf(i);
    struct timespec t = { 0, 20000000 };
    nanosleep(&t, 0);
    if (getenv("KILL")) kill(getpid(), SIGKILL);
    exit(3);
}
void run(void) { step(); }
int main(void) {
    printf("before\n");
    fflush(stdout);
    run();
    return 0;
}
