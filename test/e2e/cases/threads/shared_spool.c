// PIANO_FNS: tick
// EXIT: 137
// 1,000 frames, then SIGKILL: a spool for piano-db to recover, on a machine
// where another user (nobody, through setpriv) plants folders, links and fifos
// where piano looks (the check; skipped when not run as root).
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void tick(int i) { sink += (unsigned)i; }
int main(void) {
    for (int i = 0; i < 1000; i++) tick(i);
    printf("before\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
