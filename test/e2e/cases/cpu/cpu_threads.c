// PIANO_FNS: work,on_alarm,child_work
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// CPU time on threads (three workers and main, more than this machine's CPUs:
// preemption is off-CPU time), with a signal handler that calls an
// instrumented function while work runs, and in a forked child. Each thread
// prints its tid and the CPU its own thread CPU clock measured around its
// calls of work.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static long long ns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static void spin_us(long us) { long long end = ns(CLOCK_MONOTONIC) + us * 1000; while (ns(CLOCK_MONOTONIC) < end) ; }
static volatile sig_atomic_t alarms;
void on_alarm(int sig) { (void)sig; alarms++; spin_us(20); }
void work(int k) { spin_us(400 + 200 * k); struct timespec t = { 0, 300000 }; nanosleep(&t, 0); }
void child_work(void) { spin_us(1000); }
static long long cpu[4];
static int tids[4];
static void *thread(void *arg) {
    int k = (int)(long)arg;
    tids[k] = gettid();
    for (int i = 0; i < 60; i++) { long long t = ns(CLOCK_THREAD_CPUTIME_ID); work(k); cpu[k] += ns(CLOCK_THREAD_CPUTIME_ID) - t; }
    return NULL;
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    /* the signals go to main, which runs work too */
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    pthread_t t[3];
    for (long k = 1; k <= 3; k++) pthread_create(&t[k - 1], NULL, thread, (void *)k);
    pthread_sigmask(SIG_UNBLOCK, &block, NULL);
    struct itimerval every = { { 0, 2000 }, { 0, 2000 } }, off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &every, NULL);
    thread((void *)0);
    setitimer(ITIMER_REAL, &off, NULL);
    for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
    pid_t pid = fork();
    if (pid == 0) {
        long long c = 0;
        for (int i = 0; i < 50; i++) { long long s = ns(CLOCK_THREAD_CPUTIME_ID); child_work(); c += ns(CLOCK_THREAD_CPUTIME_ID) - s; }
        FILE *f = fopen("child.out", "w");
        fprintf(f, "%lld\n", c);
        fclose(f);
        exit(0);
    }
    waitpid(pid, NULL, 0);
    for (int k = 0; k < 4; k++) printf("%d %lld\n", tids[k], cpu[k]);
    printf("%d\n", (int)alarms);
    return 0;
}
