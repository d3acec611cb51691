// PIANO_FNS: work,handle
// Spans pushed to Pyroscope (the stand-in test/db/pyroscope_stub.py): a
// fourth profile, __name__ "spans", with tracing-prof's sample types wall,
// wall_busy and wall_idle as export --format pprof has them (busy in the
// calling contexts, idle on the span's own frame); the wall profile (self
// time) keeps its name and figures.
#include <piano/span.h>
#include <stdio.h>
#include <time.h>

static void nap_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}
__attribute__((noinline)) void work(void)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < 100000; i++)
        x += i;
}
__attribute__((noinline)) void handle(void)
{
    piano_span *s = piano_span_open("request");
    piano_span_enter(s);
    work();
    piano_span_exit(s);
    nap_ms(3);   /* idle */
    piano_span_enter(s);
    work();
    piano_span_exit(s);
    piano_span_close(s);
}
int main(void)
{
    for (int i = 0; i < 5; i++)
        handle();
    puts("done");
    return 0;
}
