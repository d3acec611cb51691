// PIANO_FNS: task,child_task
// CFLAGS: -pthread
// A forked child of a process whose short threads' slots wait to be reused
// (rt/slots.c slot_reuse): the child does not take its parent's slots (they
// are the parent's states file), it makes its own, and reuses them in turn.
// The parent makes 100 short threads; after every 20th it forks a child that
// makes 30 short threads and exits. Every run counts exactly.
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void task(int i) { sink += (unsigned)i; }
void child_task(int i) { sink ^= (unsigned)i; }
static void *run(void *arg) { task((int)(long)arg); return NULL; }
static void *run_child(void *arg) { child_task((int)(long)arg); return NULL; }
static int threads(void *(*fn)(void *), int n) {
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, fn, (void *)i) != 0 || pthread_join(t, NULL) != 0)
            return -1;
    }
    return 0;
}
int main(void) {
    for (int round = 0; round < 5; round++) {
        if (threads(run, 20))
            return 1;
        pid_t pid = fork();
        if (pid == 0)
            _exit(threads(run_child, 30) ? 1 : 0);
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
            return 1;
    }
    printf("done\n");
    return 0;
}
