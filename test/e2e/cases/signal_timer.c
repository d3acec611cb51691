// PIANO_FNS: frame,leaf,tick_a,tick_b,on_prof
// CFLAGS: -pthread
// Signal handlers that call instrumented functions, as often as a sender
// thread can raise them, while the main thread makes frames of two others:
// many signals land inside piano's own hooks. Every call is counted to its
// own function, and every frame is stored whole.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
static volatile unsigned sink;
static volatile sig_atomic_t handled;
static _Atomic int done;
void tick_a(int i) { sink += (unsigned)i; }
void tick_b(int i) { sink ^= (unsigned)i; }
void on_prof(int sig) { handled++; tick_a(sig); tick_b(sig); }
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
static void *sender(void *arg) {
    pthread_t main_thread = *(pthread_t *)arg;
    while (!done) {
        pthread_kill(main_thread, SIGPROF);
        for (volatile int k = 0; k < 500; k++)
            ;
    }
    return NULL;
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_t self = pthread_self(), t;
    pthread_create(&t, NULL, sender, &self);
    /* At least 300,000 frames, and on until 5,000 signals were handled
     * (the sender may get little CPU on a busy machine). */
    int frames = 0;
    while (frames < 300000 || (handled < 5000 && frames < 100000000)) frame(frames++);
    done = 1;
    pthread_join(t, NULL);
    printf("%d %d\n", frames, (int)handled);
    return 0;
}
