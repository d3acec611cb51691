// PIANO_FNS: work,named_later,names_itself
// CFLAGS: -pthread
// Threads named after their first instrumented call, as memcached names its
// threads (pthread_setname_np by the thread that created them, which races
// with their start) and as a thread that names itself: a live read shows the
// names they have now, as top -H does, and the stored run the same. Runs
// until the file given exists (at most 20 s).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
static volatile int started, stop;
void work(int i) { sink += (unsigned)i; }
static void loop(void)
{
    for (int i = 0; !stop; i++) {
        work(i);
        if (i % 100 == 0)
            usleep(1000);
    }
}
void *named_later(void *arg)
{
    (void)arg;
    work(0);   /* its first call, under the name it was created with */
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    loop();
    return NULL;
}
void *names_itself(void *arg)
{
    (void)arg;
    work(0);
    pthread_setname_np(pthread_self(), "self-named");
    loop();
    return NULL;
}
int main(int argc, char **argv)
{
    pthread_t a, b;
    pthread_create(&a, NULL, named_later, NULL);
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        usleep(1000);
    pthread_setname_np(a, "named-later");
    pthread_create(&b, NULL, names_itself, NULL);
    work(0);
    prctl(PR_SET_NAME, "main-renamed");
    time_t start = time(NULL);
    while (argc > 1 && access(argv[1], F_OK) != 0 && time(NULL) - start < 20)
        usleep(10000);
    stop = 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("done\n");
    return 0;
}
