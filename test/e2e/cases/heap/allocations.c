// PIANO_FNS: make_list,grow,release,=main
// Allocation figures attributed to the innermost instrumented function.
#include <stdlib.h>
#include <string.h>
void *volatile slots[64];
void make_list(void) { for (int i = 0; i < 10; i++) slots[i] = malloc(100); }
void grow(void) { slots[10] = calloc(4, 25); slots[10] = realloc(slots[10], 300); }
void release(void) { for (int i = 0; i <= 10; i++) { free(slots[i]); slots[i] = 0; } }
int main(void) {
    make_list();
    grow();
    release();
    void *p = 0;
    if (posix_memalign(&p, 64, 128) != 0) return 1;
    slots[20] = p;
    slots[21] = aligned_alloc(32, 64);
    free(slots[20]); free(slots[21]);
    return 0;
}
