// CFLAGS: -fno-builtin
// Issue 15, item 12: a program built on its own allocator through prefixed
// entry points (as redis calls jemalloc's je_malloc/je_free), here a bump
// allocator linked into the executable, where piano cannot interpose. piano
// sees none of these allocations; the report says so instead of showing 0.
// Its one malloc (in keep) is seen: the report says only those are counted.
// Output through write(), not stdio, whose buffer would be one more malloc.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
static void *kept;
void keep(void) { kept = malloc(64); }
int main(int argc, char **argv) {
    int s = 0;
    for (int i = 0; i < 100; i++) s += work(i);
    if (argc > 1 && strcmp(argv[1], "keep") == 0) keep();
    char line[32];
    int n = snprintf(line, sizeof line, "%d\n", s);
    return write(1, line, (size_t)n) == n ? 0 : 1;
}
