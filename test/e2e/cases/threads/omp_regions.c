// PIANO_FNS: compute,tasks,work,=main
// CFLAGS: -fopenmp -g
// ENV: OMP_DYNAMIC=false OMP_WAIT_POLICY=passive
// OpenMP regions: clang outlines each `#pragma omp parallel` and `task` into
// a function the OpenMP runtime calls on every thread of the team. They are
// named after the function they come from, and selected with it: the calls a
// worker thread makes show under `compute (omp parallel)`, not as outermost
// calls of their own. (-g: at -O0 clang then puts the region's code in a body
// its outlined function calls, timed as the region.)
#include <stdio.h>

__attribute__((noinline)) long work(int i)
{
    long s = 0;
    for (int k = 0; k < 200; k++)
        s += (long)(i * k) % 7;
    return s;
}

__attribute__((noinline)) long compute(int n)
{
    long total = 0;
#pragma omp parallel for reduction(+ : total) num_threads(2) schedule(static)
    for (int i = 0; i < n; i++)
        total += work(i);
    return total;
}

__attribute__((noinline)) long tasks(int n)
{
    long total = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    for (int i = 0; i < n; i++) {
#pragma omp task shared(total)
        {
            long w = work(i);
#pragma omp atomic
            total += w;
        }
    }
    return total;
}

int main(void)
{
    long t = 0;
    for (int r = 0; r < 5; r++)
        t += compute(100);
    t += tasks(40);
    printf("%ld\n", t);
    return 0;
}
