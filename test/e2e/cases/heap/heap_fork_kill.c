// ENV: PIANO_HEAP=1
// EXIT: 137
// heap in use in a forked child and after SIGKILL. The parent keeps 10 x 100
// bytes, forks; the child (a run of its own) keeps 5 x 200 and frees the
// parent's blocks: those are not its run's (not in use there, nor freed from
// the parent's). The parent then makes 4 x 1 MiB, frees 2 elsewhere (the
// heap's peak is copied at that free) and is killed: the recovered run keeps
// its figures.
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
static void *parent_blocks[10], *big[4];

__attribute__((noinline)) void parent_keep(void)
{
    for (int i = 0; i < 10; i++)
        sink = parent_blocks[i] = malloc(100);
}

__attribute__((noinline)) void child_keep(void)
{
    for (int i = 0; i < 5; i++)
        sink = malloc(200);
}

__attribute__((noinline)) void child_frees_parents(void)
{
    for (int i = 0; i < 10; i++)
        free(parent_blocks[i]);
}

__attribute__((noinline)) void big_alloc(void)
{
    for (int i = 0; i < 4; i++)
        sink = big[i] = malloc(1 << 20);
}

__attribute__((noinline)) void big_free_half(void)
{
    free(big[0]);
    free(big[1]);
}

int main(void)
{
    parent_keep();
    pid_t pid = fork();
    if (pid == 0) {
        child_keep();
        child_frees_parents();
        return 0;
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
        return 1;
    big_alloc();
    big_free_half();
    kill(getpid(), SIGKILL);
    return 0;
}
