#include <stdio.h>
#include "proj.h"

/* 10 frames; each parses 3 tokens and resolves 2 names. */
static int frame(int i)
{
    int acc = 0;
    for (int k = 0; k < 3; k++)
        acc += parse_token(i * 3 + k);
    for (int k = 0; k < 2; k++)
        acc += resolve_name(i + k);
    return acc;
}

int main(void)
{
    long total = 0;
    for (int i = 0; i < 10; i++)
        total += frame(i);
    printf("total %ld\n", total);
    return 0;
}
