// PIANO_FNS: leaf,deep,wide,tick,task
// CFLAGS: -pthread
// EXIT: 137
// ENV: PIANO_FRAMES=all
// 300 short threads, created and joined one at a time: a short thread's slot
// is given to the next thread once its records are in the ended file
// (rt/slots.c slot_reuse). Every 50th goes 40 calls deep (its shadow stack
// leaves the header's page, whose slots are not zeroed: the next thread's
// calls write theirs before any is read), every 90th makes 2,000 frames:
// their slots are reused too. Every 70th makes 70 contexts: its slot is not
// reused. Then main kills itself: the run is recovered from the slots and
// the ended file, every call and frame exact. With an argument "exit", the
// program exits instead and stores its run itself.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void deep(int n) { if (n > 1) deep(n - 1); sink++; }
#define W(n) void wide##n(void) { sink ^= n; }
#define W10(t) W(t##0) W(t##1) W(t##2) W(t##3) W(t##4) W(t##5) W(t##6) W(t##7) W(t##8) W(t##9)
W10(1) W10(2) W10(3) W10(4) W10(5) W10(6) W10(7)
#define C(n) wide##n();
#define C10(t) C(t##0) C(t##1) C(t##2) C(t##3) C(t##4) C(t##5) C(t##6) C(t##7) C(t##8) C(t##9)
void wide(void) { C10(1) C10(2) C10(3) C10(4) C10(5) C10(6) C10(7) }
void tick(int i) { for (volatile int k = 0; k < (i % 7) * 50; k++) sink++; }
void task(int i) {
    for (int k = 0; k < i % 5; k++) leaf(k);
    if (i % 50 == 0) deep(40);
    if (i % 70 == 0) wide();
}
static void *run(void *arg) {
    int i = (int)(long)arg;
    task(i);
    if (i % 90 == 0)
        for (int k = 0; k < 2000; k++) tick(k);
    return NULL;
}
int main(int argc, char **argv) {
    for (long i = 0; i < 300; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, (void *)i) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    printf("done\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "exit") == 0)
        return 0;
    raise(SIGKILL);
    return 1;
}
