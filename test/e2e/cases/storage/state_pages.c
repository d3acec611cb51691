// The memory pages a short run's histograms touch (issue 23): 256 functions, each
// called 4 times with times about 5 octaves apart (8 histogram buckets, 4 octaves a
// function). A first touch of a page of the states file is a fault of 20-40 us on a
// loaded VM: the program counts its own faults over the calls (getrusage: minor and
// major, as a first write into a hole of the file counts) and prints them; the check
// bounds them.
#include <stdio.h>
#include <sys/resource.h>
static volatile unsigned sink;
#define LEAF(n) __attribute__((noinline)) void leaf_##n(unsigned k) { for (unsigned i = 0; i < k; i++) sink += i; }
#define L8(n) LEAF(n##0) LEAF(n##1) LEAF(n##2) LEAF(n##3) LEAF(n##4) LEAF(n##5) LEAF(n##6) LEAF(n##7)
#define L64(n) L8(n##1) L8(n##2) L8(n##3) L8(n##4) L8(n##5) L8(n##6) L8(n##7) L8(n##8)
L64(1) L64(2) L64(3) L64(4)
#define C(n) leaf_##n(k);
#define C8(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7)
#define C64(n) C8(n##1) C8(n##2) C8(n##3) C8(n##4) C8(n##5) C8(n##6) C8(n##7) C8(n##8)
__attribute__((noinline)) void all(unsigned k) { C64(1) C64(2) C64(3) C64(4) }
static long faults(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}
int main(void) {
    long before = faults();
    for (unsigned k = 1; k <= 64000; k *= 40)   /* 1, 40, 1600, 64000 iterations */
        all(k);
    printf("faults %ld\n", faults() - before);
    return 0;
}
