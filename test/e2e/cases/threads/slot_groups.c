// PIANO_FNS: task,frame,leaf,in_child
// CFLAGS: -pthread
// EXIT: 137
// ENV: PIANO_FRAMES=all
// Thread slots are mapped 16 at a time and unmapped once all 16 have ended
// (rt/slots.c): 20 short threads end while their groups stay mapped; one
// thread writes 20,000 frames (its buffer grows past 256 KiB, so its end gives
// its pages back at once); a thread whose slot is in the second group forks,
// and the child records on threads of its own; 40 threads start at once (the
// first of a group may race to map it); then the process kills itself while a
// thread still runs. The recovered run holds every thread's records.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
void task(int i) { sink ^= (unsigned)i; }
void in_child(void) { sink++; }
static void *short_task(void *arg) { task((int)(long)arg); return NULL; }
static void *big(void *arg) {
    (void)arg;
    for (int k = 0; k < 20000; k++) frame(k);
    return NULL;
}
static void *forker(void *arg) {
    (void)arg;
    task(100);
    pid_t pid = fork();
    if (pid == 0) {
        in_child();
        for (int i = 0; i < 3; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, short_task, (void *)(long)(200 + i)) != 0 || pthread_join(t, NULL) != 0)
                _exit(3);
        }
        printf("child\n");
        fflush(stdout);
        exit(0);   /* its run is stored */
    }
    int st;
    return (void *)(long)(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 9);
}
static pthread_barrier_t all_at_once;
static void *burst(void *arg) {
    pthread_barrier_wait(&all_at_once);
    task((int)(long)arg);
    return NULL;
}
static int ready[2], hold[2];
static void *sleeper(void *arg) {
    (void)arg;
    task(300);
    char c;
    if (write(ready[1], "", 1) != 1 || read(hold[0], &c, 1) < 0)   /* hold is never written: until the kill */
        return NULL;
    return NULL;
}
int main(void) {
    task(-1);
    for (int i = 0; i < 20; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_task, (void *)(long)i) != 0 || pthread_join(t, NULL) != 0) return 1;
    }
    pthread_t t;
    void *r;
    if (pthread_create(&t, NULL, big, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
    if (pthread_create(&t, NULL, forker, NULL) != 0 || pthread_join(t, &r) != 0 || r) return 2;
    pthread_t many[40];
    pthread_barrier_init(&all_at_once, NULL, 40);
    for (int i = 0; i < 40; i++)
        if (pthread_create(&many[i], NULL, burst, (void *)(long)(400 + i)) != 0) return 1;
    for (int i = 0; i < 40; i++)
        if (pthread_join(many[i], NULL) != 0) return 1;
    if (pipe(ready) != 0 || pipe(hold) != 0 || pthread_create(&t, NULL, sleeper, NULL) != 0) return 1;
    char c;
    if (read(ready[0], &c, 1) != 1) return 1;
    printf("parent\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
