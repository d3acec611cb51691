#include <stdio.h>
#include "calc.h"

int main(void)
{
    /* 4 expressions of 3 digits: eval 4, lex_next 4*(3+1), skip as many. */
    const char *exprs[] = {"1 2 3", "4 5 6", "7 8 9", "1 1 1"};
    long total = 0;
    for (int i = 0; i < 4; i++)
        total += eval_expr(exprs[i]);
#ifdef HAVE_STRNDUP
    printf("total %ld (strndup)\n", total);
#else
    printf("total %ld\n", total);
#endif
    return 0;
}
