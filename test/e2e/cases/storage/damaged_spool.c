// PIANO_FNS: frame,work,work_more
// EXIT: 137
// ENV: PIANO_FRAMES=all
// SIGKILL after 500,000 frames (a stored chunk file and the buffer): the
// check damages copies of the spool (chunks = 0xffffffff, a cycle in the
// calling contexts, states truncated inside the thread's state, a slot whose
// header is not a thread's, no lock file) and each is imported without hanging, keeping what is good.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
void work_more(int i) { sink ^= (unsigned)i; }
void frame(int i) { work(i); work_more(i); }
int main(void) {
    for (int i = 0; i < 500000; i++) frame(i);
    printf("before\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
