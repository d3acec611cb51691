// PIANO_FNS: work
// ENV: PIANO_INTERVAL=0.05
// Spans in snapshots: requests close in three phases, each phase followed
// by two snapshots (the program waits for the spool's snaps file to grow
// twice, 20 s at most): the snapshots hold 3, then 8 requests closed, and
// windows give each phase's count exactly. `long` is open (and entered once)
// across those snapshots and closed in the last phase: it counts whole in
// that window. `tail` is never closed: unfinished, in the last window.
#define _GNU_SOURCE
#include <glob.h>
#include <piano/span.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../lib/spool_file.h"

static volatile unsigned sink;
__attribute__((noinline)) void work(int n)
{
    for (int i = 0; i < n; i++)
        sink += (unsigned)i;
}
static void nap_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}
/* Two snapshots written after this call: the second was taken after the
 * first was written, so after everything done before the call. */
static void two_snapshots(void)
{
    off_t s0 = spool_file_size("snaps");
    int grew = 0;
    for (int i = 0; i < 4000 && grew < 2; i++) {
        nap_ms(5);
        off_t s = spool_file_size("snaps");
        if (s > s0)
            grew++, s0 = s;
    }
    if (grew < 2)
        printf("no snapshot in 20 s\n");
}
static void requests(int n)
{
    for (int i = 0; i < n; i++) {
        piano_span *s = piano_span_open("req");
        piano_span_enter(s);
        work(1000);
        piano_span_exit(s);
        nap_ms(1);
        piano_span_close(s);
    }
}
int main(void)
{
    work(10);   /* the first instrumented call starts the snapshot thread */
    piano_span *l = piano_span_open("long");
    piano_span_enter(l);
    work(1000);
    piano_span_exit(l);
    requests(3);
    two_snapshots();
    requests(5);
    two_snapshots();
    piano_span_close(l);
    requests(2);
    piano_span *t = piano_span_open("tail");
    piano_span_enter(t);
    work(1000);
    piano_span_exit(t);
    printf("done\n");
    return 0;
}
