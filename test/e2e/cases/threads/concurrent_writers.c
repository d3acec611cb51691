// PIANO_FNS: child_work,parent_work
// 16 instrumented child processes end at the same moment (released together
// through a pipe) and store their runs into one new database at once, with
// their parent: 17 complete runs, no "database is locked".
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int sink;
void child_work(int i) { sink += i; }
void parent_work(int i) { sink += i; }
int main(void) {
    int go[2];
    if (pipe(go) != 0) return 1;
    pid_t kids[16];
    for (int k = 0; k < 16; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            close(go[1]);
            for (int i = 0; i <= k; i++) child_work(i);
            char c;
            while (read(go[0], &c, 1) > 0) {}   /* EOF: all released together */
            exit(0);
        }
    }
    close(go[0]);
    parent_work(1);
    close(go[1]);
    int bad = 0;
    for (int k = 0; k < 16; k++) {
        int st;
        waitpid(kids[k], &st, 0);
        bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    printf("children failed: %d\n", bad);
    return 0;
}
