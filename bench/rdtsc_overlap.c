/* rdtsc_overlap.c - how much work a CPU runs in the shadow of one rdtsc.
 *
 * The per-call ratio of issue 24 compares piano's hook pair with two bare clock
 * reads (the floor): it can be near 1 only if the hook's bookkeeping runs while
 * the rdtsc executes. This measures, for K = 0..128 instructions of independent
 * work (single-cycle adds on 4 registers, or L1 loads), the thread CPU time of
 *   rdtsc + K instructions   against   rdtsc alone  and  K instructions alone;
 * "hidden" is how much of the K instructions' own time vanished next to the
 * rdtsc (1.00: all of it, 0.00: none: they add to it). Each variant runs once a
 * round, in turn, ROUNDS rounds; medians.
 *   cc -O2 bench/rdtsc_overlap.c -o /tmp/rdtsc_overlap && /tmp/rdtsc_overlap [iterations]
 * x86-64 only (GNU assembler syntax). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t sink[8];

#define STR_(x) #x
#define STR(x) STR_(x)
/* K/4 groups of four adds, one on each of four registers: four chains. */
#define ADDS(K) ".rept " STR(K) "/4\n add $1,%%r8\n add $1,%%r9\n add $1,%%r10\n add $1,%%r11\n.endr\n"
/* K/4 groups of four loads from one L1 line. */
#define LOADS(K) ".rept " STR(K) "/4\n mov 8(%0),%%r8\n mov 16(%0),%%r9\n mov 24(%0),%%r10\n mov 32(%0),%%r11\n.endr\n"

#define VARIANTS(K)                                                                                     \
    static double adds_rd_##K(long n)                                                                   \
    {                                                                                                   \
        uint64_t s = 0;                                                                                 \
        double t0 = cpu_ns();                                                                           \
        for (long i = 0; i < n; i++) {                                                                  \
            s += __rdtsc();                                                                             \
            __asm__ volatile(ADDS(K)::: "r8", "r9", "r10", "r11");                                      \
        }                                                                                               \
        sink[0] += s;                                                                                   \
        return (cpu_ns() - t0) / n;                                                                     \
    }                                                                                                   \
    static double adds_only_##K(long n)                                                                 \
    {                                                                                                   \
        double t0 = cpu_ns();                                                                           \
        for (long i = 0; i < n; i++)                                                                    \
            __asm__ volatile(ADDS(K)::: "r8", "r9", "r10", "r11");                                      \
        return (cpu_ns() - t0) / n;                                                                     \
    }                                                                                                   \
    static double loads_rd_##K(long n)                                                                  \
    {                                                                                                   \
        uint64_t s = 0;                                                                                 \
        double t0 = cpu_ns();                                                                           \
        for (long i = 0; i < n; i++) {                                                                  \
            s += __rdtsc();                                                                             \
            __asm__ volatile(LOADS(K)::"r"(sink) : "r8", "r9", "r10", "r11");                           \
        }                                                                                               \
        sink[0] += s;                                                                                   \
        return (cpu_ns() - t0) / n;                                                                     \
    }                                                                                                   \
    static double loads_only_##K(long n)                                                                \
    {                                                                                                   \
        double t0 = cpu_ns();                                                                           \
        for (long i = 0; i < n; i++)                                                                    \
            __asm__ volatile(LOADS(K)::"r"(sink) : "r8", "r9", "r10", "r11");                           \
        return (cpu_ns() - t0) / n;                                                                     \
    }

VARIANTS(0)
VARIANTS(8)
VARIANTS(16)
VARIANTS(24)
VARIANTS(32)
VARIANTS(48)
VARIANTS(64)
VARIANTS(96)
VARIANTS(128)

typedef double measure(long);
static const struct {
    int k;
    measure *adds_rd, *adds_only, *loads_rd, *loads_only;
} rows[] = {
#define ROW(K) { K, adds_rd_##K, adds_only_##K, loads_rd_##K, loads_only_##K }
    ROW(0), ROW(8), ROW(16), ROW(24), ROW(32), ROW(48), ROW(64), ROW(96), ROW(128),
};
#define NROWS (sizeof rows / sizeof rows[0])
#define ROUNDS 9

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v)
{
    qsort(v, ROUNDS, sizeof v[0], cmp);
    return v[ROUNDS / 2];
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 5000000;
    if (n <= 0) {
        fprintf(stderr, "rdtsc_overlap: iterations must be a positive number\n");
        return 2;
    }
    /* Every variant once a round, in turn: a change of the CPU's speed during
     * the run moves them all alike. */
    double v[NROWS][5][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < NROWS; i++) {
            v[i][0][r] = rows[0].adds_rd(n);   /* rdtsc alone, next to each row */
            v[i][1][r] = rows[i].adds_rd(n);
            v[i][2][r] = rows[i].adds_only(n);
            v[i][3][r] = rows[i].loads_rd(n);
            v[i][4][r] = rows[i].loads_only(n);
        }
    printf("thread CPU ns per iteration (loop included), median of %d rounds of %ld\n", ROUNDS, n);
    printf("%5s %7s  %11s %7s %7s  %11s %7s %7s\n", "K", "rdtsc", "rdtsc+adds", "adds", "hidden", "rdtsc+loads",
           "loads", "hidden");
    for (size_t i = 1; i < NROWS; i++) {
        double rd = median(v[i][0]), ar = median(v[i][1]), ao = median(v[i][2]), lr = median(v[i][3]),
               lo = median(v[i][4]);
        /* hidden: the share of the K instructions' own time that vanished next to the rdtsc */
        printf("%5d %7.2f  %11.2f %7.2f %7.2f  %11.2f %7.2f %7.2f\n", rows[i].k, rd, ar, ao, 1 - (ar - rd) / ao, lr,
               lo, 1 - (lr - rd) / lo);
    }
    return (int)(sink[0] & 0);
}
