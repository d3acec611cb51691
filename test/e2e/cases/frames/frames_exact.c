// PIANO_FNS: frame,parse,emit
// ENV: PIANO_FRAMES=all
// 100,000 frames of three functions, two allocations of known sizes each: every
// record kept, across several frame buffers (each stored as a chunk when full),
// so the checks read exact counts, allocations and self-time sums back.
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
static void *volatile keep;   /* the allocations escape: not optimised away */
__attribute__((noinline)) void parse(int i)
{
    for (int k = 0; k < 10 + (i & 7); k++)
        sink += (unsigned)(i + k);
}
__attribute__((noinline)) void emit(int i)
{
    char *p = malloc(24 + (size_t)(i & 63));
    keep = p;
    free(p);
}
__attribute__((noinline)) void frame(int i)
{
    char *b = malloc(100);
    keep = b;
    parse(i);
    emit(i);
    free(b);
}
int main(void)
{
    for (int i = 0; i < 100000; i++)
        frame(i);
    printf("%u\n", sink);
    return 0;
}
