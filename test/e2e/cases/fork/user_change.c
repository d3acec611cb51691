// PIANO_FNS: work,worker
// CFLAGS: -pthread
// A daemon started as root that drops to another user (setgid/setuid, as
// memcached -u does) can no longer open its spool by path: piano opens what the
// run needs before the switch (rt/user.c), so the 40 threads made after it are
// recorded like the others, nothing is said, and the run, left in root's spool
// (the database is root's), is stored complete by root's next piano-db.
// Not root: prints "skipped" (nothing to check).
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int x) { sink += (unsigned)x; }
void *worker(void *p) {
    for (int i = 0; i < 100; i++) work(i);
    return p;
}
int main(void) {
    work(1);
    if (getuid() != 0) {
        printf("skipped\n");
        return 0;
    }
    if (setgid(65534) != 0 || setuid(65534) != 0) return 2;
    pthread_t t[40];
    for (int i = 0; i < 40; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) return 3;
    for (int i = 0; i < 40; i++) pthread_join(t[i], NULL);
    struct timespec d = { 0, 60 * 1000 * 1000 };
    nanosleep(&d, NULL);
    printf("uid=%d\n", (int)getuid());
    return 0;
}
