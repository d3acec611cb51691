// PIANO_FNS: outer,slow,execs
// exec: what was recorded before execve is stored (recovered by the next
// piano-db command); the call that exec'ed is in flight.
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
