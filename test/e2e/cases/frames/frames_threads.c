// PIANO_FNS: turn
// CFLAGS: -pthread
// Two threads take turns (semaphores), 500 frames each: the stored frames,
// numbered in end order across threads, alternate between the two threads.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
static volatile unsigned sink;
static sem_t go[2];
void turn(int i) { sink += (unsigned)i; }
static void *player(void *arg) {
    int me = (int)(long)arg;
    for (int i = 0; i < 500; i++) {
        sem_wait(&go[me]);
        turn(i);
        sem_post(&go[1 - me]);
    }
    return NULL;
}
int main(void) {
    pthread_t t[2];
    sem_init(&go[0], 0, 1);
    sem_init(&go[1], 0, 0);
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, player, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}
