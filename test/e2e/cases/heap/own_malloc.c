// CFLAGS: -fno-builtin
// A program that defines malloc, free, calloc and realloc itself (a bump
// allocator, every function instrumented, these too) keeps working. Built
// with -fno-builtin, as allocators are: clang must not assume its own malloc.
#include <stddef.h>
#include <stdio.h>
#include <string.h>
static _Alignas(16) char arena[64 << 20];
static size_t used;
static unsigned long mallocs;
void *malloc(size_t n) {
    mallocs++;
    size_t at = (used + 15) & ~(size_t)15;
    if (at + n + 16 > sizeof arena) return NULL;
    *(size_t *)(arena + at) = n;
    used = at + 16 + n;
    return arena + at + 16;
}
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { void *p = malloc(a * b); if (p) memset(p, 0, a * b); return p; }
void *realloc(void *p, size_t n) {
    void *q = malloc(n);
    if (q && p) { size_t old = *(size_t *)((char *)p - 16); memcpy(q, p, old < n ? old : n); }
    return q;
}
int work(int i) {
    char *p = malloc(100);
    p = realloc(p, 200);
    int *z = calloc(10, sizeof *z);
    int r = z[3] + i;
    free(p);
    free(z);
    return r;
}
int main(void) {
    int s = 0;
    for (int i = 0; i < 100; i++) s += work(i);
    printf("%d\n", s);
    return 0;
}
