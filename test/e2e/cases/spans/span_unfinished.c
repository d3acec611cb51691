// PIANO_FNS: work
// Spans never closed (in-flight requests at exit): counted and marked
// unfinished, timed to the end; one of them entered at exit.
#include <piano/span.h>
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) void work(void)
{
    struct timespec t = {0, 3000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}
int main(void)
{
    piano_span *done = piano_span_open("request");
    piano_span_enter(done);
    work();
    piano_span_exit(done);
    piano_span_close(done);
    for (int i = 0; i < 3; i++) {
        piano_span *open = piano_span_open("request");   /* never closed */
        piano_span_enter(open);
        work();
        piano_span_exit(open);
    }
    piano_span *inside = piano_span_open("stuck");
    piano_span_enter(inside);   /* entered at exit */
    work();
    puts("done");
    return 0;
}
