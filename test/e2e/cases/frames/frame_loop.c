// PIANO_FNS: step,update,render
// A frame loop: each outermost call of step is a frame.
#include <stdio.h>
static volatile unsigned sink;
void update(int i) { for (int k = 0; k < 1000; k++) sink += (unsigned)(i * k); }
void render(int i) { for (int k = 0; k < 500; k++) sink ^= (unsigned)(i + k); }
void step(int i) { update(i); update(i + 1); render(i); }
int main(void) { for (int i = 0; i < 250; i++) step(i); printf("done\n"); return 0; }
