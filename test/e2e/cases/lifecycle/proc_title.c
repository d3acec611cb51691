// PIANO_FNS: =work
// proc_title: runs named as ps shows them. The program forks a master, which
// renames itself "master process" the way nginx's setproctitle does (over
// argv[0], the environment moved away to make room) and forks a worker that
// renames itself "worker process". With an argument (a file), the master and
// the worker call nothing instrumented until that file exists (at most 20 s;
// "ready" exists once both are renamed): live, each is a run that has
// recorded nothing of its own yet. Then each calls work() and ends.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../lib/proc_title.h"
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
static void wait_for(const char *file) {
    time_t start = time(NULL);
    while (file && access(file, F_OK) != 0 && time(NULL) - start < 20) usleep(10000);
}
int main(int argc, char **argv) {
    const char *stop = argc > 1 ? strdup(argv[1]) : NULL;   /* argv is overwritten by the titles */
    title_init(argc, argv);
    work(1);
    fflush(stdout);
    pid_t m = fork();
    if (m == 0) {
        title_set("master process");
        pid_t w = fork();
        if (w == 0) {
            title_set("worker process");
            if (stop) { FILE *f = fopen("ready", "w"); if (f) fclose(f); }
            wait_for(stop);
            for (int i = 0; i < 3; i++) work(i);
            return 0;
        }
        wait_for(stop);
        for (int i = 0; i < 2; i++) work(i);
        waitpid(w, NULL, 0);
        return 0;
    }
    int st = 0;
    waitpid(m, &st, 0);
    printf("done %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
