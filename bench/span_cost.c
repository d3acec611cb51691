/*
 * span_cost.c - what a span's enter/exit pair costs against a function's hook
 * pair (issue 22: at most ~2x), in ns of thread CPU time per pair, median of
 * 7 rounds. Built with piano (PIANO_FNS=wk_: the functions below):
 *
 *   PIANO_FNS=wk_ build/bin/piano-cc -O2 bench/span_cost.c -o /tmp/span_cost
 *   PIANO_DB=/tmp/span_cost.db /tmp/span_cost
 *
 * Rows: an instrumented empty function called (its two hooks), with a plain
 * build's call subtracted by the caller of this file (bench/README.md); a span's enter+exit pair (on
 * an open span, inside an instrumented function, as a callback does); a
 * span's open+close pair. Each runs inside an instrumented function, so
 * neither opens a frame.
 */
#include <piano/span.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 2000000
#define ROUNDS 7

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
__attribute__((noinline)) void wk_leaf(void)
{
    __asm__ volatile("");
}
__attribute__((noinline)) double wk_calls(void)
{
    double t0 = cpu_ns();
    for (int i = 0; i < N; i++)
        wk_leaf();
    return (cpu_ns() - t0) / N;
}
__attribute__((noinline)) double wk_spans(piano_span *s)
{
    double t0 = cpu_ns();
    for (int i = 0; i < N; i++) {
        piano_span_enter(s);
        piano_span_exit(s);
    }
    return (cpu_ns() - t0) / N;
}
__attribute__((noinline)) double wk_opens(void)
{
    double t0 = cpu_ns();
    for (int i = 0; i < N; i++)
        piano_span_close(piano_span_open("bench"));
    return (cpu_ns() - t0) / N;
}
static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(void)
{
    double f[ROUNDS], s[ROUNDS], o[ROUNDS];
    piano_span *span = piano_span_open("request");
    for (int r = 0; r < ROUNDS; r++) {
        f[r] = wk_calls();
        s[r] = wk_spans(span);
        o[r] = wk_opens();
    }
    piano_span_close(span);
    qsort(f, ROUNDS, sizeof *f, by_value);
    qsort(s, ROUNDS, sizeof *s, by_value);
    qsort(o, ROUNDS, sizeof *o, by_value);
    printf("function hook pair (call included): %.1f ns\n", f[ROUNDS / 2]);
    printf("span enter+exit pair (calls included): %.1f ns (%.2fx)\n", s[ROUNDS / 2], s[ROUNDS / 2] / f[ROUNDS / 2]);
    printf("span open+close pair: %.1f ns\n", o[ROUNDS / 2]);
    return 0;
}
