// PIANO_FNS: frame
// 2,000,000 tiny frames of the same work (a fraction of a microsecond each),
// and 20 of them, frames 50,000, 150,000, ..., 1,950,000, a thousand times
// longer: the default budget keeps what a person reads (the first frames, the
// 20 that stand out, a sample) in a few thousand rows, the count exact.
#include <stdio.h>
static volatile unsigned sink;
__attribute__((noinline)) void frame(long i) {
    int n = i % 100000 == 49999 ? 20000 : 20;   /* frame number i + 1 */
    for (int k = 0; k < n; k++) sink += (unsigned)k;
}
int main(void) {
    for (long i = 0; i < 2000000; i++) frame(i);
    printf("%u\n", sink);
    return 0;
}
