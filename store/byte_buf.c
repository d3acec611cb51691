/* byte_buf.c - the blob writers' growing byte buffer (see byte_buf.h). */
#include "byte_buf.h"

#include <stdlib.h>

int piano_byte_buf_grow(unsigned char **buf, size_t *cap, size_t need, size_t first, int *failed)
{
    if (*failed)
        return -1;
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    unsigned char *b = realloc(*buf, c);
    if (!b) {
        *failed = 1;
        return -1;
    }
    *buf = b;
    *cap = c;
    return 0;
}
