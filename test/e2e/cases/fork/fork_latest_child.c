// PIANO_FNS: work,save
// A server that forks a short child now and then (redis' BGSAVE): the child's
// run is the latest started, so `piano-db report` without a run shows it. The
// report says so and names the parent's run, which the user most likely meant.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
void save(void) { sink++; }
int main(void)
{
    for (int i = 0; i < 100; i++)
        work(i);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        save();
        _exit(0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    for (int i = 0; i < 100; i++)
        work(i);
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
