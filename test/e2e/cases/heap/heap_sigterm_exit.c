// PIANO_FNS: spin,churn,on_term
// CFLAGS: -pthread
// ENV: PIANO_HEAP=1
// A SIGTERM handler that calls exit(), with PIANO_HEAP=1 (issue 25, item 5):
// four threads and main allocate and free in a loop, a fifth thread sends
// SIGTERM to the process once they all have; the handler runs on whichever
// thread the kernel picks, often inside piano's malloc or free holding a
// lock of the heap's owner map. The run is stored at exit from the handler:
// the store's own frees must not wait for that lock (they spun forever in
// about half the runs). The check runs it 20 times under a timeout.
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static _Atomic int started;
void *volatile sink;
__attribute__((noinline)) void churn(void)
{
    void *p[16];
    for (int i = 0; i < 16; i++)
        p[i] = malloc((size_t)(16 + i * 40));
    sink = p[3];
    for (int i = 0; i < 16; i++)
        free(p[i]);
}
void on_term(int sig)
{
    (void)sig;
    exit(0);
}
/* Never returns: the calls inside it make no frames (a frame is a completed
 * outermost call), so that each run's store is small. */
__attribute__((noinline)) void spin(void)
{
    churn();
    atomic_fetch_add(&started, 1);
    for (;;)
        churn();
}
static void *worker(void *arg)
{
    spin();
    return arg;
}
static void *killer(void *arg)
{
    (void)arg;
    while (atomic_load(&started) < 5)
        usleep(1000);
    usleep(20000);
    kill(getpid(), SIGTERM);
    return NULL;
}
int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    pthread_t t;
    for (int i = 0; i < 4; i++)
        if (pthread_create(&t, NULL, worker, NULL) != 0)
            return 1;
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &old);   /* the killer never takes it */
    if (pthread_create(&t, NULL, killer, NULL) != 0)
        return 1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    worker(NULL);
    return 1;
}
