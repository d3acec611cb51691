// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01
// A container launcher's pattern: fork, then unshare(CLONE_NEWUSER) in the
// child, which needs a process of one thread. The snapshot thread (started
// in the child by the fork) made it fail with EINVAL: piano stops it for the
// call. A program with a thread of its own still gets its EINVAL. Also
// setns into the user namespace the child made. The .check skips when the
// kernel forbids user namespaces to this user even without piano.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
static void *idle(void *arg) { (void)arg; pause(); return NULL; }
int main(void) {
    for (int i = 0; i < 1000; i++)
        work(i);
    struct timespec d = { 0, 30000000 };
    nanosleep(&d, NULL);   /* a snapshot or two */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        work(1);
        if (unshare(CLONE_NEWUSER) != 0) {
            printf("child unshare: %s\n", strerror(errno));
            return 1;
        }
        work(2);
        nanosleep(&d, NULL);   /* its snapshot thread runs again */
        printf("child unshare ok\n");
        fflush(stdout);
        /* with a thread of the program's: EINVAL as without piano */
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
        int r = unshare(CLONE_NEWUSER);
        printf("child with a thread: %s\n", r == 0 ? "ok" : strerror(errno));
        return 0;
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    for (int i = 0; i < 1000; i++)
        work(i);
    printf("done\n");
    return 0;
}
