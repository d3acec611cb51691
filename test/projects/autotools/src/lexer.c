#include "calc.h"

int lex_skip_space(const char *s, int pos)
{
    while (s[pos] == ' ')
        pos++;
    return pos;
}

/* Next digit of s (or -1 at the end). */
int lex_next(const char *s, int *pos)
{
    *pos = lex_skip_space(s, *pos);
    if (s[*pos] < '0' || s[*pos] > '9')
        return -1;
    return s[(*pos)++] - '0';
}
