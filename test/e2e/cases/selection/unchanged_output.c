// EXIT: 7
// The program's output, stderr and exit status are the same with and without piano.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int work(int n) { char *p = malloc((size_t)n); memset(p, 'x', (size_t)n); int s = 0; for (int i = 0; i < n; i++) s += p[i]; free(p); return s; }
int main(int argc, char **argv) {
    (void)argv;
    errno = 0;
    for (int i = 1; i < 6; i++) printf("work(%d) = %d\n", i * 10, work(i * 10));
    fprintf(stderr, "to stderr %d\n", argc);
    FILE *f = fopen("/nonexistent/file", "r");
    printf("fopen: %s errno=%d\n", f ? "opened" : "failed", errno);
    return 7;
}
