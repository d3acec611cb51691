// CFLAGS: -pthread
// ENV: PIANO_INTERVAL=0.01 PIANO_FRAME=no_such_function
// A child chroots into a jail without /proc, then main calls pthread_exit.
// The snapshot thread could no longer see that the program's last thread had
// ended: the process lived on forever, every signal blocked (SIGTERM too),
// and its store would have made a database inside the jail. The child must
// end by itself; its run is not stored in the jail (a note says where it
// is), and the next piano-db command stores it (no frames: none to store from the jail). The parent bounds the wait
// (20 s), then kills the child. Needs root (chroot): skipped otherwise.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { for (int k = 0; k < 100; k++) sink += (unsigned)(i + k); }
int main(void) {
    work(0);
    if (mkdir("jail", 0755) != 0)
        return 2;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        work(1);
        dlopen("libgcc_s.so.1", RTLD_NOW);   /* pthread_exit unwinds with it: not in the jail */
        if (chroot("jail") != 0) {
            printf("skip: chroot: %s\n", strerror(errno));
            return 0;
        }
        if (chdir("/") != 0)
            return 3;
        work(2);
        pthread_exit(NULL);
    }
    int st = 0;
    for (int i = 0; i < 2000 && waitpid(pid, &st, WNOHANG) == 0; i++) {
        struct timespec d = { 0, 10000000 };
        nanosleep(&d, NULL);
    }
    if (waitpid(pid, &st, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        printf("child hung\n");
    } else {
        printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    return 0;
}
