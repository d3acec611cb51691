// PIANO_FNS: main,setup,wait_here
// A live run's calls in flight are timed to now (doc/piano-db.md "Live runs"),
// like a daemon's master waiting in sigsuspend: found with nginx, whose master
// showed ngx_master_process_cycle 27 us and a duration of 184 ms after a minute
// (both were timed to the last tick a thread was seen at, the call's entry).
// With an argument: writes ARG.in once waiting, waits until ARG exists (20 s at most).
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void setup(int i) { sink += (unsigned)i; }
void wait_here(const char *stop) {
    char in[4096];
    snprintf(in, sizeof in, "%s.in", stop);
    FILE *f = fopen(in, "w");
    if (f) fclose(f);
    time_t start = time(NULL);
    while (access(stop, F_OK) != 0 && time(NULL) - start < 20)
        usleep(10000);
}
int main(int argc, char **argv) {
    for (int i = 0; i < 10; i++) setup(i);
    if (argc > 1) wait_here(argv[1]);
    printf("done\n");
    return 0;
}
