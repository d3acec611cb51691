// PIANO_FNS: dispatch,leaf
// A dispatch loop: one call of dispatch makes all 100,000 leaf calls (and
// does most of dispatch's own work), the other 999 make none. The report's
// overhead correction shifts dispatch's calls by the average of its children's
// overhead (100 calls' worth), but by no more than dispatch's corrected share
// of its time: its median call, which made no call, must not show as 0. (The
// big call's own work keeps that share well above 0 however the overhead was
// measured on a busy machine.)
#include <stdio.h>
static volatile unsigned sink;
void leaf(void) { sink++; }
void dispatch(int n) {
    for (int i = 0; i < 200; i++) sink += (unsigned)i;   /* its own work */
    for (int i = 0; i < 100 * n; i++) sink += (unsigned)i;
    for (int i = 0; i < n; i++) leaf();
}
int main(void) {
    dispatch(100000);
    for (int i = 0; i < 999; i++) dispatch(0);
    printf("done\n");
    return 0;
}
