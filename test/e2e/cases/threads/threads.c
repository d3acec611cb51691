// PIANO_FNS: work,leaf,quit_here,quitter,detached_work,=main
// CFLAGS: -pthread
// Threads: 8 workers, one ended long before main, one leaving through
// pthread_exit from inside an instrumented call, 4 detached ones (waited for
// with a semaphore), and thread names set before and after the first call.
#define _GNU_SOURCE /* pthread_setname_np: clang >= 16 rejects implicit declarations */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
static volatile unsigned sink;
static sem_t done;
void leaf(int i) { sink += (unsigned)i; }
void work(int i) { leaf(i); sink ^= (unsigned)i; }
void detached_work(int i) { sink += (unsigned)i * 3u; }
void quit_here(void) { leaf(1); pthread_exit(NULL); }
void quitter(void) { work(1); quit_here(); }
static void *worker(void *arg) {
    int k = (int)(long)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", k);
    if (k % 2 == 0) pthread_setname_np(pthread_self(), name);   /* named before its first call */
    for (int i = 0; i < 1000; i++) work(i);
    if (k % 2 == 1) pthread_setname_np(pthread_self(), name);   /* named after */
    return NULL;
}
static void *early(void *arg) { (void)arg; pthread_setname_np(pthread_self(), "early"); for (int i = 0; i < 10; i++) work(i); return NULL; }
static void *quitting(void *arg) { (void)arg; pthread_setname_np(pthread_self(), "quitter"); quitter(); return NULL; }
static void *detached(void *arg) { (void)arg; for (int i = 0; i < 100; i++) detached_work(i); sem_post(&done); return NULL; }
int main(void) {
    pthread_t e, q, w[8];
    pthread_create(&e, NULL, early, NULL);
    pthread_join(e, NULL);
    sem_init(&done, 0, 0);
    for (int i = 0; i < 4; i++) {
        pthread_t d;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_create(&d, &a, detached, NULL);
        pthread_attr_destroy(&a);
    }
    for (int i = 0; i < 8; i++) pthread_create(&w[i], NULL, worker, (void *)(long)i);
    pthread_create(&q, NULL, quitting, NULL);
    for (int i = 0; i < 8; i++) pthread_join(w[i], NULL);
    pthread_join(q, NULL);
    for (int i = 0; i < 4; i++) sem_wait(&done);
    work(0);
    printf("done\n");
    return 0;
}
