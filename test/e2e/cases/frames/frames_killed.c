// PIANO_FNS: frame,work
// EXIT: 137
// ENV: PIANO_FRAMES=all
// SIGKILL after 1,000,000 frames of 4 functions (more than two full buffers:
// 12 bytes a frame at the least): the stored chunks and the frame buffer are
// recovered, each frame once; and so they are in a copy of the spool made to
// look as if the kill came between storing a full buffer and emptying it.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
void work_more(int i) { sink ^= (unsigned)i; }
void work_last(int i) { sink -= (unsigned)i; }
void frame(int i) { work(i); work_more(i); work_last(i); }
int main(void) {
    for (int i = 0; i < 1000000; i++) frame(i);
    printf("before\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
