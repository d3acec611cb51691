// CFLAGS: -fno-builtin
// Every allocation function piano interposes (rt/alloc.c) behaves as the libc
// it replaces: a table of edge sizes and alignments (0, 1, not a power of two,
// huge, SIZE_MAX - 100, nmemb * size overflowing), each call's NULL-ness,
// errno, return value and alignment printed. The check runs the same program
// built without piano and compares the tables byte for byte, with piano by
// default, with PIANO_HEAP=1 and with PIANO_DISABLE=1. Built with
// -fno-builtin: clang must not fold the calls it knows.
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SENTINEL EDOM   /* errno before each call: a call that leaves errno alone shows it */
static size_t page;

/* The alignment a block of `align` must have: glibc rounds an alignment up to
 * a power of two, and gives at least 16. */
static size_t want_align(size_t align)
{
    size_t a = 16;
    while (a < align && a < ((size_t)1 << 62))
        a <<= 1;
    return a;
}

static void row(const char *what, void *p, int e, size_t align, size_t usable_min)
{
    printf("%-44s null=%d errno=%-3d", what, p == NULL, e);
    if (p)
        printf(" aligned=%d usable=%d", (uintptr_t)p % want_align(align) == 0, malloc_usable_size(p) >= usable_min);
    printf("\n");
}

#define CALL(expr, align, usable_min)                  \
    do {                                               \
        errno = SENTINEL;                              \
        void *p_ = (expr);                             \
        int e_ = errno;                                \
        row(#expr, p_, e_, align, usable_min);         \
        free(p_);                                      \
    } while (0)

static void posix_row(size_t align, size_t n)
{
    void *p = (void *)1;
    errno = SENTINEL;
    int r = posix_memalign(&p, align, n);
    int e = errno;
    printf("posix_memalign(%#zx, %#zx) = %d errno=%d out_unchanged=%d", align, n, r, e, p == (void *)1);
    if (r == 0)
        printf(" aligned=%d usable=%d", (uintptr_t)p % want_align(align) == 0, malloc_usable_size(p) >= n);
    printf("\n");
    if (r == 0)
        free(p);
}

int main(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    volatile size_t big = SIZE_MAX - 100, max = SIZE_MAX, half = SIZE_MAX / 2 + 1;
    volatile size_t zero = 0;

    CALL(malloc(zero), 1, 0);
    CALL(malloc(1), 1, 1);
    CALL(malloc(1000), 1, 1000);
    CALL(malloc(big), 1, 0);
    CALL(malloc(max), 1, 0);
    CALL(malloc(half), 1, 0);

    CALL(calloc(zero, zero), 1, 0);
    CALL(calloc(1, 1), 1, 1);
    CALL(calloc(10, 100), 1, 1000);
    CALL(calloc(half, 2), 1, 0);
    CALL(calloc(2, half), 1, 0);
    CALL(calloc(max, max), 1, 0);
    CALL(calloc(1, big), 1, 0);

    CALL(realloc(NULL, zero), 1, 0);
    CALL(realloc(NULL, 10), 1, 10);
    CALL(realloc(NULL, big), 1, 0);
    {
        char *q = malloc(10);
        strcpy(q, "kept");
        errno = SENTINEL;
        void *r = realloc(q, big);
        int e = errno;
        row("realloc(q, big)", r, e, 1, 0);
        printf("  old block kept: %d\n", r == NULL && strcmp(q, "kept") == 0);
        errno = SENTINEL;
        r = realloc(q, 5000);
        e = errno;
        row("realloc(q, 5000)", r, e, 1, 5000);
        printf("  contents moved: %d\n", r && strcmp(r, "kept") == 0);
        errno = SENTINEL;
        r = realloc(r, zero);   /* glibc frees the block and returns NULL */
        e = errno;
        row("realloc(r, 0)", r, e, 1, 0);
        free(r);
    }

    CALL(reallocarray(NULL, 2, 8), 1, 16);
    CALL(reallocarray(NULL, zero, 8), 1, 0);
    CALL(reallocarray(NULL, half, 2), 1, 0);
    CALL(reallocarray(NULL, max, max), 1, 0);
    {
        char *q = malloc(10);
        errno = SENTINEL;
        void *r = reallocarray(q, half, 4);
        int e = errno;
        row("reallocarray(q, half, 4)", r, e, 1, 0);
        free(r ? r : q);
    }

    size_t aligns[] = { 0, 1, 3, 8, 16, 24, 48, 64, 100, 4096, 65536, SIZE_MAX / 2 + 2, SIZE_MAX };
    for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
        volatile size_t a = aligns[i];
        char what[96];
        size_t sizes[] = { 0, 1, 10, 200, SIZE_MAX - 100 };
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            volatile size_t n = sizes[k];
            snprintf(what, sizeof what, "memalign(%#zx, %#zx)", (size_t)a, (size_t)n);
            errno = SENTINEL;
            void *p = memalign(a, n);
            int e = errno;
            row(what, p, e, a, n < 1000 ? n : 0);
            free(p);
            snprintf(what, sizeof what, "aligned_alloc(%#zx, %#zx)", (size_t)a, (size_t)n);
            errno = SENTINEL;
            p = aligned_alloc(a, n);
            e = errno;
            row(what, p, e, a, n < 1000 ? n : 0);
            free(p);
            posix_row(a, n);
        }
    }

    size_t vsizes[] = { 0, 1, 100, 4095, 4096, 4097, SIZE_MAX - 100, SIZE_MAX - 4095, SIZE_MAX / 2 };
    for (size_t i = 0; i < sizeof vsizes / sizeof *vsizes; i++) {
        volatile size_t n = vsizes[i];
        char what[64];
        snprintf(what, sizeof what, "valloc(%#zx)", (size_t)n);
        errno = SENTINEL;
        void *p = valloc(n);
        int e = errno;
        row(what, p, e, page, n < 100000 ? n : 0);
        free(p);
        snprintf(what, sizeof what, "pvalloc(%#zx)", (size_t)n);
        errno = SENTINEL;
        p = pvalloc(n);
        e = errno;
        /* pvalloc rounds the size up to pages: all of them usable */
        row(what, p, e, page, n < 100000 ? (n + page - 1) / page * page : 0);
        free(p);
    }

    errno = SENTINEL;
    free(NULL);
    printf("free(NULL) errno=%d\n", errno);
    errno = SENTINEL;
    size_t u = malloc_usable_size(NULL);
    printf("malloc_usable_size(NULL) = %zu errno=%d\n", u, errno);
    return 0;
}
