// PIANO_FNS: work,on_usr1,on_usr2,on_alrm,in_handler
// CFLAGS: -pthread
// Instrumented functions in signal handlers: on the thread's stack, on an
// alternate signal stack (above and below the thread's stack), and nested
// (a handler raising another signal).
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
static volatile unsigned sink;
void in_handler(int i) { sink += (unsigned)i; }
void on_alrm(int sig) { in_handler(sig); }
void on_usr1(int sig) { in_handler(sig); raise(SIGALRM); in_handler(sig); }   /* nested */
void on_usr2(int sig) { in_handler(sig); }                                  /* on the alternate stack */
void work(int sig) { sink++; raise(sig); sink++; }
static void on(int sig, void (*h)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}
static void use_altstack(void *base, size_t size) {
    stack_t ss = { .ss_sp = base, .ss_size = size, .ss_flags = 0 };
    sigaltstack(&ss, NULL);
}
static void *thread_main(void *arg) {
    use_altstack(arg, 1 << 16);
    for (int i = 0; i < 10; i++) work(SIGUSR2);
    return NULL;
}
int main(void) {
    /* mapped before the thread's stack, so (top-down mmap) above it */
    void *high = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    on(SIGUSR1, on_usr1, 0);
    on(SIGUSR2, on_usr2, SA_ONSTACK);
    on(SIGALRM, on_alrm, 0);
    for (int i = 0; i < 10; i++) work(SIGUSR1);
    for (int i = 0; i < 5; i++) raise(SIGUSR1);   /* no instrumented call in flight */
    static char low[1 << 16];                      /* below the main thread's stack */
    use_altstack(low, sizeof low);
    for (int i = 0; i < 10; i++) work(SIGUSR2);
    pthread_t t;
    pthread_create(&t, NULL, thread_main, high);
    pthread_join(t, NULL);
    printf("%u\n", sink);
    return 0;
}
