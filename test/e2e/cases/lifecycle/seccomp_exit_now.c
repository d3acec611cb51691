// PIANO_FNS: work,leave
// EXIT: 7
// sshd's pre-authentication child ends with _exit (its cleanup_exit) once it
// is in its seccomp sandbox, when the client goes away. piano's _exit (which
// notes the title ps shows, rt/exit_now.c) asked the kernel for the process
// id and opened /proc/self/cmdline there: under a filter that kills on open
// the program died of SIGSYS (status 159) instead of ending with its own 7.
// Now it makes no system call there: the status is the program's, the run
// (ended without exit: recovered) is stored by the next piano-db command with
// every call and the title set before the filter went in.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int sink;
static int work(int n) { for (int i = 0; i < n; i++) sink += i; return sink; }
static void leave(int status) { _exit(status); }

int main(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    for (int i = 0; i < 10; i++)
        work(i);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp");
        return 3;
    }
    for (int i = 0; i < 20; i++)
        work(i);
    leave(7);
}
