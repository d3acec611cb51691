// PIANO_FNS: waits
// ENV: PIANO_CPU=1
// CPU time changes nothing the program sees: no signal handler, no timer, no
// EINTR in its nanosleep and poll, no descriptor (fd 0, closed before the
// thread's first instrumented call opens its perf event, is the next open's).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static int interrupted;
void waits(void) {
    for (int i = 0; i < 100; i++) {
        struct timespec t = { 0, 1000000 };
        if (nanosleep(&t, NULL) != 0) interrupted++;
        if (poll(NULL, 0, 1) != 0) interrupted++;
    }
}
int main(void) {
    close(0);
    waits();
    int fd = open("/dev/null", O_RDONLY);
    int handlers = 0;
    for (int s = 1; s < NSIG; s++) {
        struct sigaction sa;
        if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL) handlers++;
    }
    int timers = 0;
    for (int w = ITIMER_REAL; w <= ITIMER_PROF; w++) {
        struct itimerval v;
        getitimer(w, &v);
        timers += v.it_interval.tv_sec || v.it_interval.tv_usec || v.it_value.tv_sec || v.it_value.tv_usec;
    }
    FILE *f = fopen("/proc/self/timers", "r");   /* POSIX timers, where the kernel lists them */
    char line[256];
    while (f && fgets(line, sizeof line, f)) timers += strncmp(line, "ID:", 3) == 0;
    if (f) fclose(f);
    printf("interrupted=%d fd=%d handlers=%d timers=%d\n", interrupted, fd, handlers, timers);
    return 0;
}
