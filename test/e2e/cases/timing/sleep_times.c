// PIANO_FNS: outer,inner
// outer sleeps 2 ms and calls inner, which sleeps 1 ms. The program measures
// its own sleeps; piano's self and inclusive medians must agree within 10%.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define N 21
static long long now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static long long inner_ns[N], outer_ns[N];
static int k;
static void nap(long us) { struct timespec t = { 0, us * 1000 }; nanosleep(&t, 0); }
void inner(void) { long long t = now_ns(); nap(1000); inner_ns[k] = now_ns() - t; }
void outer(void) { long long t = now_ns(); nap(2000); inner(); outer_ns[k] = now_ns() - t; }
static int cmp(const void *a, const void *b) { long long x = *(const long long *)a, y = *(const long long *)b; return x < y ? -1 : x > y; }
int main(void) {
    for (k = 0; k < N; k++) outer();
    long long self[N];
    for (int i = 0; i < N; i++) self[i] = outer_ns[i] - inner_ns[i];
    qsort(inner_ns, N, sizeof *inner_ns, cmp);
    qsort(outer_ns, N, sizeof *outer_ns, cmp);
    qsort(self, N, sizeof *self, cmp);
    printf("%lld %lld %lld\n", inner_ns[N / 2], self[N / 2], outer_ns[N / 2]);
    return 0;
}
