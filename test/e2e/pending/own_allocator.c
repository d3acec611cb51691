// CFLAGS: -fno-builtin
// Issue 15, item 12: a program built on its own allocator through prefixed
// entry points (as redis calls jemalloc's je_malloc/je_free), here a bump
// allocator. piano sees none of these allocations through malloc; the report
// must say so ("allocations: not seen (the program uses its own allocator:
// je_malloc)") rather than show 0. Pending: the runtime has no field of the
// run to carry what it detected to the database (spool.h, import.c, schema).
#include <stddef.h>
#include <stdio.h>
#include <string.h>
static _Alignas(16) char arena[16 << 20];
static size_t used;
void *je_malloc(size_t n) {
    size_t at = (used + 15) & ~(size_t)15;
    if (at + n > sizeof arena) return NULL;
    used = at + n;
    return arena + at;
}
void je_free(void *p) { (void)p; }
int work(int i) {
    char *p = je_malloc(100);
    memset(p, i, 100);
    int r = p[7];
    je_free(p);
    return r;
}
int main(void) {
    int s = 0;
    for (int i = 0; i < 100; i++) s += work(i);
    printf("%d\n", s);
    return 0;
}
