#include "calc.h"

long eval_expr(const char *s)
{
    int pos = 0, d;
    long sum = 0;
    while ((d = lex_next(s, &pos)) >= 0)
        sum += d;
    return sum;
}
