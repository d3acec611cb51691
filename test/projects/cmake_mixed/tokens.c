#include "tokens.h"

int tok_is_sep(char c) { return c == ','; }

int tok_count(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += tok_is_sep(*s);
    return n;
}
