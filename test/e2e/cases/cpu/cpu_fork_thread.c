// PIANO_FNS: spin,nap,after_fork_nap
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// A thread goes on measuring CPU time after another thread forks (the child
// unmaps the parent's other threads' states and writes nothing into them: they
// are shared mappings of the parent's file; it once cleared their perf page
// fields there). A thread naps 60 ms after main forked: its CPU time stays
// near 0.
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
static volatile int forked;
void spin(void) { for (int i = 0; i < 100000; i++) sink += (unsigned)i; }
void nap(int ms) { struct timespec t = { 0, ms * 1000000L }; nanosleep(&t, NULL); }
void after_fork_nap(void) { nap(60); }
static void *worker(void *arg) {
    (void)arg;
    spin();
    while (!__atomic_load_n(&forked, __ATOMIC_ACQUIRE))
        nap(1);
    after_fork_nap();
    spin();
    return NULL;
}
int main(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    nap(20);
    spin();
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    int status;
    if (p < 0 || waitpid(p, &status, 0) != p)
        return 1;
    __atomic_store_n(&forked, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
