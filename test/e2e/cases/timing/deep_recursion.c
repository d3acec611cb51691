// PIANO_FNS: down,leaf,runner
// CFLAGS: -pthread
// Recursion 1,000,000 levels deep, on a thread with a 1 GiB stack: no crash,
// every call counted, inclusive time counted once (at the outermost call).
#include <pthread.h>
#include <stdio.h>
static volatile long sink;
void leaf(long n) { sink += n; }
long down(long n) {
    if (n == 0) { leaf(n); return 0; }
    long r = down(n - 1);
    sink += r;
    return r + 1;
}
void *runner(void *arg) { (void)arg; sink = down(999999); return NULL; }
int main(void) {
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 1ul << 30);
    pthread_t t;
    if (pthread_create(&t, &a, runner, NULL) != 0) { perror("pthread_create"); return 1; }
    pthread_join(t, NULL);
    printf("%ld\n", sink);
    return 0;
}
