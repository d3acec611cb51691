/*
 * workload.c - the bundled example: a small "frame loop" that parses,
 * resolves and computes, with some heap traffic. Try:
 *   PIANO_FNS=fib,parse,resolve,frame piano-cc -O2 examples/workload.c -o workload
 *   ./workload && piano-db report && piano-db report --frames
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item { char *text; int value; };

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

/* Splits a line of numbers into items: one allocation per item. */
int parse(const char *line, struct item *out, int max)
{
    int n = 0;
    const char *p = line;
    while (*p && n < max) {
        while (*p == ' ')
            p++;
        const char *start = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - start);
        if (!len)
            break;
        out[n].text = malloc(len + 1);
        memcpy(out[n].text, start, len);
        out[n].text[len] = 0;
        out[n].value = atoi(out[n].text);
        n++;
    }
    return n;
}

/* Resolves each item to a value that takes some work to compute. */
long resolve(struct item *items, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++) {
        sum += fib(items[i].value % 18);
        free(items[i].text);
    }
    return sum;
}

long frame(int i)
{
    char line[256];
    snprintf(line, sizeof line, "%d %d %d %d %d %d", i, i + 3, i * 7, i + 11, i * 13, 17);
    struct item items[16];
    int n = parse(line, items, 16);
    long v = resolve(items, n);
    if (i % 50 == 49)   /* now and then a slow frame: a spike */
        v += fib(24);
    return v;
}

int main(void)
{
    long total = 0;
    for (int i = 0; i < 300; i++)
        total += frame(i);
    printf("workload: total %ld\n", total);
    return 0;
}
