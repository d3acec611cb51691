// PIANO_FNS: work
// ENV: PIANO_DISABLE=1
// PIANO_DISABLE=1 records nothing and leaves no file behind.
#include <stdio.h>
int work(int x) { return x * 3; }
int main(void) { int s = 0; for (int i = 0; i < 1000; i++) s += work(i); printf("%d\n", s); return 0; }
