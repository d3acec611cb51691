// PIANO_FNS: run,setup,step,work
// ENV: PIANO_FRAME=step
// PIANO_FRAME: frames are the completed calls of step, below run; setup's
// calls outside any step are in no frame.
#include <stdio.h>
static volatile unsigned sink;
void work(int n) { for (int i = 0; i < n; i++) sink += (unsigned)i; }
void setup(void) { work(100); }
void step(int i) { work(1000 + i); }
void run(int frames) { setup(); for (int i = 0; i < frames; i++) step(i); setup(); }
int main(void) { run(40); printf("ok\n"); return 0; }
