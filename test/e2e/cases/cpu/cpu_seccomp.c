// PIANO_FNS: work
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// perf_event_open refused on one thread by a seccomp filter (as a container's
// profile does), installed by the thread before its first instrumented call:
// that thread's rows are not measured (NULL), the main thread's are, the run
// says perf, and nothing is printed.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../lib/raw_seccomp.h"
static volatile unsigned sink;
void work(void) { for (int i = 0; i < 300000; i++) sink += (unsigned)i; }
static int refuse_perf(void) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof *f, f };
    return raw_seccomp_filter(&prog);   /* unseen by piano, as an environment's filter */
}
static int refused;
static void *thread(void *a) {
    (void)a;
    if (refuse_perf() != 0) return (void *)1;
    refused = syscall(__NR_perf_event_open, NULL, 0, -1, -1, 0) < 0 && errno == EACCES;
    for (int i = 0; i < 5; i++) work();
    return NULL;
}
int main(void) {
    for (int i = 0; i < 5; i++) work();
    pthread_t t;
    void *r;
    if (pthread_create(&t, NULL, thread, NULL) != 0 || pthread_join(t, &r) != 0 || r) return 2;
    printf("refused=%d\n", refused);
    return 0;
}
