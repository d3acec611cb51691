/*
 * piano/span.h - spans: units of work that cross callbacks and threads
 * (a request, a job, a coroutine), measured by piano (doc/spans.md).
 *
 *   piano_span *s = piano_span_open("request");   // a static string, like a function's name
 *   piano_span_field(s, "method", "GET");          // optional, low cardinality: request{method=GET}
 *   piano_span_enter(s); ... piano_span_exit(s);   // as often as the work resumes and waits
 *   piano_span_close(s);                           // the handle is invalid from here
 *
 * Per span name piano records count, wall (open to close), busy (entered),
 * idle (open, not entered), p50/p99 of wall and busy, and, through the
 * calling contexts, the CPU time, allocations and functions of the code run
 * while the span is entered: a span entered on a thread is a frame on that
 * thread's stack, the parent of the functions called meanwhile. An enter and
 * its exit are made on the same thread; the next enter may be on another.
 *
 * Built with piano (piano-cc / piano-c++, pkg-config piano, or CMake's
 * piano_instrument, which define PIANO_SPANS) the calls go to libpiano_rt.so.
 * Otherwise they are empty inline functions: a project keeps them in its code
 * and they cost nothing.
 */
#ifndef PIANO_SPAN_H
#define PIANO_SPAN_H

typedef struct piano_span piano_span;

#if defined(PIANO_SPANS) && PIANO_SPANS
#ifdef __cplusplus
extern "C" {
#endif
piano_span *piano_span_open(const char *name);
void piano_span_field(piano_span *s, const char *key, const char *value);
void piano_span_enter(piano_span *s);
void piano_span_exit(piano_span *s);
void piano_span_close(piano_span *s);
#ifdef __cplusplus
}
#endif
#else
static inline piano_span *piano_span_open(const char *name)
{
    (void)name;
    return (piano_span *)0;
}
static inline void piano_span_field(piano_span *s, const char *key, const char *value)
{
    (void)s;
    (void)key;
    (void)value;
}
static inline void piano_span_enter(piano_span *s) { (void)s; }
static inline void piano_span_exit(piano_span *s) { (void)s; }
static inline void piano_span_close(piano_span *s) { (void)s; }
#endif

#endif
