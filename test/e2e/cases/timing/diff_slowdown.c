// PIANO_FNS: hot,cold
// Two runs, the second with hot() made 3x slower: diff must flag hot as a
// significant slowdown and --fail-above must trip; cold is unchanged.
#include <stdlib.h>
#include <stdio.h>
static volatile unsigned sink;
void hot(int scale) { for (int i = 0; i < 20000 * scale; i++) sink += (unsigned)i; }
void cold(void) { for (int i = 0; i < 100; i++) sink ^= (unsigned)i; }
int main(void) {
    const char *s = getenv("SLOW");
    int scale = s ? atoi(s) : 1;
    for (int i = 0; i < 300; i++) { hot(scale); cold(); }
    printf("done\n");
    return 0;
}
