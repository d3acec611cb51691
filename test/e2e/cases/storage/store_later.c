// PIANO_FNS: =main,a_call,b_call,c_call,d_call,in_fork,forker,work,blocked
// CFLAGS: -pthread
// ENV: PIANO_STORE=later
// PIANO_STORE=later: the exit stores nothing; each process's run (the parent,
// two forked children, one of them forked by a thread) stays in the spool,
// complete, and the next piano-db command stores it, with the figures the
// same program stores at exit (PIANO_STORE=exit).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
static pthread_barrier_t forked;
void a_call(int i) { sink += (unsigned)i; }
void b_call(int i) { sink ^= (unsigned)i; }
void c_call(int i) { sink -= (unsigned)i; }
void d_call(int i) { sink += (unsigned)i * 7u; }
void work(int i) { sink += (unsigned)i; }
void blocked(void) { pthread_barrier_wait(&forked); }
pid_t in_fork(void) {
    pid_t p = fork();
    if (p == 0)
        for (int i = 0; i < 7; i++) b_call(i);
    return p;
}
pid_t forker(void) {
    pid_t p = fork();
    if (p == 0)
        for (int i = 0; i < 4; i++) d_call(i);
    return p;
}
static void *waiter(void *arg) { (void)arg; for (int i = 0; i < 100; i++) work(i); blocked(); return NULL; }
static void *forking(void *arg) {
    (void)arg;
    for (int i = 0; i < 100; i++) work(i);
    pid_t p = forker();
    if (p == 0) exit(0);            /* the child: its only thread ends the process */
    waitpid(p, NULL, 0);
    pthread_barrier_wait(&forked);
    return NULL;
}
int main(void) {
    for (int i = 0; i < 5; i++) a_call(i);
    pid_t p = in_fork();
    if (p == 0) { printf("child\n"); return 0; }
    int st;
    waitpid(p, &st, 0);
    for (int i = 0; i < 3000; i++) c_call(i);
    pthread_barrier_init(&forked, NULL, 2);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, waiter, NULL);
    pthread_create(&t2, NULL, forking, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("parent %d\n", WEXITSTATUS(st));
    return 0;
}
