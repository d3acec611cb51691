// PIANO_FNS: parse,handle,respond
// ENV: PIANO_CPU=1
// Spans: fields make the name (request{method=GET}), a span entered inside
// another is its child, functions called while a span is entered are under
// it in the contexts, idle = wall - busy, allocations while entered.
#include <piano/span.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void nap_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}
__attribute__((noinline)) void parse(void)
{
    void *volatile p = malloc(100);
    free(p);
}
__attribute__((noinline)) void respond(void)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < 200000; i++)
        x += i;
}
__attribute__((noinline)) void handle(int i)
{
    piano_span *s = piano_span_open("request");
    piano_span_field(s, "method", i % 3 ? "GET" : "POST");
    piano_span_enter(s);
    parse();
    piano_span_exit(s);
    nap_ms(5);   /* waiting: idle */
    piano_span_enter(s);
    piano_span *db = piano_span_open("db");
    piano_span_enter(db);   /* a child of request's frame */
    respond();
    piano_span_exit(db);
    piano_span_close(db);
    piano_span_exit(s);
    piano_span_close(s);
}
int main(void)
{
    for (int i = 0; i < 6; i++)
        handle(i);
    puts("done");
    return 0;
}
