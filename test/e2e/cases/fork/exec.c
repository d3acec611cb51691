// PIANO_FNS: outer,slow,execs
// exec: the run ends there, complete, stored by the next piano-db command
// (it was left `recovered`, timed to the last moment it was seen alive); the
// call that exec'ed is in flight at its end.
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void outer(int i) { sink += (unsigned)i; }
void slow(void) { struct timespec t = { 0, 20000000 }; nanosleep(&t, 0); }
void execs(void) {
    slow();   /* ends after the last frame: the run lasts at least as long */
    char *argv[] = { "/bin/echo", "after exec", NULL };
    fflush(stdout);
    execv(argv[0], argv);
    perror("execv");
}
int main(void) {
    for (int i = 0; i < 4; i++) outer(i);
    printf("before exec\n");
    execs();
    return 1;
}
