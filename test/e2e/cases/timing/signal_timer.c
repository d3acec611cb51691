// PIANO_FNS: frame,leaf,tick_a,tick_b,on_prof
// ENV: PIANO_FRAMES=all
// Signal handlers that call instrumented functions, raised by a 20 us
// interval timer (an hrtimer: it fires on time even when the machine has one
// busy CPU), while the main thread makes frames of two others: many signals
// land inside piano's own hooks. Every call is counted to its own function,
// and every frame is stored whole.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static volatile unsigned sink;
static volatile sig_atomic_t handled;
void tick_a(int i) { sink += (unsigned)i; }
void tick_b(int i) { sink ^= (unsigned)i; }
void on_prof(int sig) { handled++; tick_a(sig); tick_b(sig); }
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGPROF;
    timer_t timer;
    struct itimerspec every = { { 0, 20000 }, { 0, 20000 } };
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 || timer_settime(timer, 0, &every, NULL) != 0) {
        perror("timer");
        return 1;
    }
    /* At least 300,000 frames, and on until 5,000 signals were handled. */
    int frames = 0;
    while (frames < 300000 || (handled < 5000 && frames < 100000000)) frame(frames++);
    timer_delete(timer);
    printf("%d %d\n", frames, (int)handled);
    return 0;
}
