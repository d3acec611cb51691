// PIANO_FNS: =frame,=work
// CFLAGS: -pthread
// ENV: PIANO_FRAMES=all
// setuid_fork: nginx's way. The parent (root) forks a worker, which drops to
// nobody (setgid, setuid 65534) and then makes 120,000 frames (more than two
// full frame buffers: chunks stored after the switch), 40 threads alive at
// once (new slots, mapped after the switch) and 20 short threads one after
// the other (slots reused: the ended file). The parent waits for it and goes
// on. The worker cannot open root's database at its exit: its run, complete,
// stays in root's spool and root's next piano-db command stores it, every
// count exact. Not root: the worker does not switch (the check skips).
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
static pthread_barrier_t all_up;
void work(int i) { sink += (unsigned)i; }
void frame(int i) { work(i); }
static void *together(void *arg) {
    (void)arg;
    pthread_barrier_wait(&all_up);   /* 40 alive at once: 40 slots */
    for (int i = 0; i < 100; i++) work(i);
    return NULL;
}
static void *short_one(void *arg) {
    (void)arg;
    for (int i = 0; i < 50; i++) work(i);
    return NULL;
}
int main(void) {
    for (int i = 0; i < 10; i++) work(i);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        int switched = getuid() == 0 && setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
        for (int i = 0; i < 120000; i++) frame(i);
        pthread_t t[40];
        pthread_barrier_init(&all_up, NULL, 40);
        for (int i = 0; i < 40; i++) pthread_create(&t[i], NULL, together, NULL);
        for (int i = 0; i < 40; i++) pthread_join(t[i], NULL);
        for (int i = 0; i < 20; i++) {
            pthread_t s;
            pthread_create(&s, NULL, short_one, NULL);
            pthread_join(s, NULL);
        }
        printf("worker %s\n", switched ? "switched" : "not switched");
        return 0;
    }
    int st = 0;
    waitpid(p, &st, 0);
    for (int i = 0; i < 5; i++) work(i);
    printf("master %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
