// PIANO_FNS: work,worker,late_worker,child_work
// CFLAGS: -pthread
// A program that locks itself into a seccomp sandbox whose filter kills the
// process on open (as sshd's pre-authentication child kills on what it did
// not list), by prctl and then by the seccomp system call through
// syscall() (libseccomp's way, with TSYNC: every thread). piano's exit used to
// open files: the program was killed by SIGSYS at exit (status 159), its
// buffered output lost. Now piano makes no system call once the filter is
// in: the run is complete, stored by the next piano-db command, with every
// call made before and after the sandbox, by the threads it knew and by a
// thread started after it (its state made with no system call); a child
// forked after it records nothing.
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

static volatile int sink;
static pthread_barrier_t started, sandboxed;
static int work(int n) { for (int i = 0; i < n; i++) sink += i; return sink; }
static int child_work(int n) { return work(n) + 1; }

static void *worker(void *arg)
{
    (void)arg;
    work(1);                             /* its state is made before the sandbox */
    pthread_barrier_wait(&started);
    pthread_barrier_wait(&sandboxed);
    for (int i = 0; i < 30; i++)
        work(i);                         /* recorded: no system call needed */
    return NULL;
}

static void *late_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 5; i++)
        work(i);                         /* recorded: a state made with no system call */
    return NULL;
}

static void install(int how)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        exit(2);
    long r = how == 0 ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
                      : syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (r != 0) {
        perror("seccomp");
        exit(3);
    }
}

int main(void)
{
    pthread_barrier_init(&started, NULL, 2);
    pthread_barrier_init(&sandboxed, NULL, 2);
    pthread_t early, late;
    pthread_create(&early, NULL, worker, NULL);
    for (int i = 0; i < 10; i++)
        work(i);
    pthread_barrier_wait(&started);
    install(0);
    install(1);   /* a second filter, all threads */
    pthread_barrier_wait(&sandboxed);
    for (int i = 0; i < 100; i++)
        work(i);
    pthread_create(&late, NULL, late_worker, NULL);
    pthread_join(late, NULL);
    pthread_join(early, NULL);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        child_work(3);
        exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("done %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));   /* buffered: written at exit */
    return 0;
}
