// PIANO_FNS: parent_work,child_work
// ENV: PIANO_INTERVAL=0.1
// A forked child keeps snapshots of its own run: its snapshot thread is
// started again in it (the parent's is not there), and its snapshots hold its
// own calls only, from the fork.
#include <dirent.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
void parent_work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
void child_work(int i) { for (int k = 0; k < 100; k++) sink ^= (unsigned)(i + k); }
/* Descriptors open in this process (the listing's own left out). */
static int fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = -1;   /* the listing's */
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n - 2;   /* . and .. */
}
int main(void) {
    double t0 = now();
    int i = 0;
    while (now() - t0 < 0.35) parent_work(i++);
    int before = fds();
    pid_t p = fork();
    if (p == 0) {
        /* a fork waits for a snapshot being taken: none of its descriptors comes along */
        if (fds() != before)
            return 3;
        t0 = now();
        while (now() - t0 < 0.6) child_work(i++);
        return 0;
    }
    int st;
    waitpid(p, &st, 0);
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
