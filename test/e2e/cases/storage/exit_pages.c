// The memory pages a short run's exit touches (issue 23): 512 functions registered, 16 of
// them (every 32nd, across the ids) called 4 times each. The program prints its faults at the
// end of main (getrusage: minor and major); the check runs it again under a runner that reads
// the whole process's faults (wait4), so the difference is the exit's: piano's import of the
// run, SQLite's included.
#include <stdio.h>
#include <sys/resource.h>
static volatile unsigned sink;
#define LEAF(n) __attribute__((noinline)) void leaf_##n(unsigned k) { for (unsigned i = 0; i < k; i++) sink += i; }
#define L8(n) LEAF(n##0) LEAF(n##1) LEAF(n##2) LEAF(n##3) LEAF(n##4) LEAF(n##5) LEAF(n##6) LEAF(n##7)
#define L64(n) L8(n##1) L8(n##2) L8(n##3) L8(n##4) L8(n##5) L8(n##6) L8(n##7) L8(n##8)
#define L512(n) L64(n##1) L64(n##2) L64(n##3) L64(n##4) L64(n##5) L64(n##6) L64(n##7) L64(n##8)
L512(1)
#define C(n) leaf_##n(k);
#define C64(n) C(n##11) C(n##51)
#define C512(n) C64(n##1) C64(n##2) C64(n##3) C64(n##4) C64(n##5) C64(n##6) C64(n##7) C64(n##8)
__attribute__((noinline)) void some(unsigned k) { C512(1) }
int main(void) {
    for (unsigned k = 1; k <= 64000; k *= 40)
        some(k);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("faults %ld\n", ru.ru_minflt + ru.ru_majflt);
    return 0;
}
// PIANO_FNS: leaf
