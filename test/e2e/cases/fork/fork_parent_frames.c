// PIANO_FNS: frame,leaf
// A fork in the middle of frames: the parent's frames still in its buffer
// at the fork stay the parent's (the child once emptied the parent's buffer
// through the shared mapping: 1,000 of 2,000 frames lost, none counted as
// dropped), and the parent's fork does not wait for the child's spool.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    for (int i = 0; i < 1000; i++) frame(i);
    pid_t p = fork();
    if (p == 0) {
        frame(1);
        _exit(0);
    }
    int status;
    if (p < 0 || waitpid(p, &status, 0) != p || !WIFEXITED(status))
        return 1;
    for (int i = 0; i < 1000; i++) frame(i);
    printf("done\n");
    return 0;
}
