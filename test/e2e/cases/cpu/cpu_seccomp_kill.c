// PIANO_FNS: work
// CFLAGS: -pthread
// ENV: PIANO_CPU=1
// A seccomp filter that KILLS on perf_event_open (as systemd's
// SystemCallFilter=@system-service does), installed by main after its first
// instrumented call: a new thread's first call, and a forked child's, must
// not call perf_event_open (issue 25 item 3: they died of SIGSYS). The
// program ends normally, the run is stored, main's rows are measured and the
// thread's are not.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../lib/raw_seccomp.h"
static volatile unsigned sink;
void work(void) { for (int i = 0; i < 300000; i++) sink += (unsigned)i; }
static int kill_perf(void) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof *f, f };
    return raw_seccomp_filter(&prog);   /* unseen by piano, as an environment's filter */
}
static void *thread(void *a) {
    (void)a;
    for (int i = 0; i < 5; i++) work();
    return NULL;
}
int main(void) {
    for (int i = 0; i < 5; i++) work();
    if (kill_perf() != 0) return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, thread, NULL) != 0 || pthread_join(t, NULL) != 0) return 3;
    pid_t c = fork();
    if (c < 0) return 4;
    if (c == 0) { work(); exit(0); }
    int st;
    if (waitpid(c, &st, 0) != c) return 5;
    printf("child %d\n", st);
    return 0;
}
