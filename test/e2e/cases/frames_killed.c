// PIANO_FNS: frame,work
// EXIT: 137
// SIGKILL after 120,000 frames: the stored chunks and the frame buffer are
// recovered, each frame once (also when the kill came between storing a
// buffer as a chunk and emptying it: the check recreates that state).
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
void frame(int i) { work(i); }
int main(void) {
    for (int i = 0; i < 120000; i++) frame(i);
    printf("before\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
