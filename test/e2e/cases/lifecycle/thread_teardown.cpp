// PIANO_FNS: in_tsd_dtor,in_tls_dtor,in_cleanup,nested_exit,worker_body
// CFLAGS: -pthread
// Calls made while a thread ends: a pthread key destructor (its key made
// after piano's), a C++ thread_local destructor, a pthread_cleanup_push
// handler, and pthread_exit from a nested call. Each is recorded.
#include <pthread.h>
#include <stdio.h>
static volatile unsigned sink;
static pthread_key_t key;
extern "C" {
void in_tsd_dtor(int i) { sink += (unsigned)i; }
void in_tls_dtor(int i) { sink ^= (unsigned)i; }
void in_cleanup(int i) { sink += 2u * (unsigned)i; }
void nested_exit(void) { pthread_exit(nullptr); }
}
struct Guard {
    int n = 0;
    ~Guard() { in_tls_dtor(n); }
};
static thread_local Guard guard;
static void tsd_dtor(void *p) { in_tsd_dtor((int)(long)p); }
static void cleanup(void *p) { in_cleanup((int)(long)p); }
extern "C" void worker_body(long i) {
    guard.n = (int)i;
    pthread_setspecific(key, (void *)(i + 1));
    pthread_cleanup_push(cleanup, (void *)i);
    nested_exit();
    pthread_cleanup_pop(0);
}
static void *worker(void *arg) {
    worker_body((long)arg);
    return nullptr;
}
int main() {
    pthread_key_create(&key, tsd_dtor);
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], nullptr, worker, (void *)i);
    for (auto &x : t) pthread_join(x, nullptr);
    printf("done\n");
    return 0;
}
