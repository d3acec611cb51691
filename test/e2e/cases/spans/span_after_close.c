// PIANO_FNS: work
// A span handle used after its close (enter, exit, field, close again),
// also after its object was given to a new span: one line on stderr, once;
// nothing recorded for the stale handle, the new span intact.
#include <piano/span.h>
#include <stdio.h>

__attribute__((noinline)) void work(void)
{
    volatile int x = 0;
    for (int i = 0; i < 1000; i++)
        x += i;
}
int main(void)
{
    piano_span *old = piano_span_open("old");
    piano_span_enter(old);
    work();
    piano_span_exit(old);
    piano_span_close(old);
    piano_span *fresh = piano_span_open("fresh");   /* may reuse old's object */
    piano_span_enter(old);
    piano_span_field(old, "k", "v");
    piano_span_exit(old);
    piano_span_close(old);
    piano_span_enter(fresh);
    work();
    piano_span_exit(fresh);
    piano_span_close(fresh);
    piano_span_close(fresh);
    puts("done");
    return 0;
}
