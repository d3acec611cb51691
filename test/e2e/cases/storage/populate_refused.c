// PIANO_FNS: task,frame
// CFLAGS: -pthread
// A new thread's first pages are made present with MADV_POPULATE_WRITE
// (rt/slots.c, slot_populate); a kernel without it (before 5.14) answers
// EINVAL, here by a seccomp filter installed before any instrumented call,
// and piano writes the pages instead: 40 threads (three slot groups), each
// with 3 frames of 2 calls, are recorded exactly, frames kept, nothing said.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../lib/raw_seccomp.h"
static volatile unsigned sink;
void task(int i) { sink += (unsigned)i; }
void frame(int i) { task(i); task(i + 1); }
static int refuse_populate(void) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 23 /* MADV_POPULATE_WRITE */, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof *f, f };
    return raw_seccomp_filter(&prog);   /* unseen by piano, as an environment's filter */
}
static void *run(void *arg) {
    for (int k = 0; k < 3; k++) frame((int)(long)arg + k);
    return NULL;
}
int main(void) {
    if (refuse_populate() != 0) return 2;
    char page[4096];
    int refused = madvise((void *)((unsigned long)page & ~4095ul), 4096, 23) != 0 && errno == EINVAL;
    for (long i = 0; i < 40; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, (void *)i) != 0 || pthread_join(t, NULL) != 0) return 3;
    }
    printf("refused=%d\n", refused);
    return 0;
}
