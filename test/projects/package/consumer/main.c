#include <stdio.h>
int util_clamp(int);
int helper_parse(int);
int plain_parse(int);
int shape_area(int, int);

static int parse(int x) { return util_clamp(x) + helper_parse(x); }
static int resolve(int x) { return plain_parse(x) + shape_area(x, 2); }

int main(void)
{
    long t = 0;
    for (int i = 0; i < 6; i++)
        t += parse(i);
    for (int i = 0; i < 4; i++)
        t += resolve(i);
    printf("total %ld\n", t);
    return 0;
}
