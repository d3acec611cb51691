/*
 * summary.h - the build summary file (PIANO_SUMMARY): one line per
 * translation unit the plugin compiled, read back by piano-summary
 * (tools/cc/piano-summary.c) to print "found N function(s) across M file(s)"
 * and warn about patterns that caught nothing.
 *
 * Plain C11, no LLVM: compiled into PianoPass.so and into piano-summary.
 *
 * Line format (version 2), fields separated by one tab, each field escaped
 * (backslash -> \\, tab -> \t, newline -> \n, CR -> \r):
 *   P2 <tab> source <tab> spec <tab> min_size <tab> n <tab> k
 *      { <tab> match <tab> file <tab> display }*n
 *      { <tab> match <tab> file <tab> display }*k
 * source: absolute path of the translation unit (realpath when it exists);
 * spec: the PIANO_FNS the unit was compiled with ("" when unset); min_size:
 * its PIANO_MIN_SIZE; then the n instrumented functions: the name patterns
 * see, the defining file, the name reports show; then the k functions a
 * broad pattern selected but that were left out as smaller than min_size.
 * Version 1 lines (P1 source spec n {...}*n, older plugins) are still read.
 * Each line is written with one write() on an O_APPEND
 * descriptor under flock(), so parallel compiles (make -j) never interleave.
 */
#ifndef PIANO_SUMMARY_H
#define PIANO_SUMMARY_H
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct piano_summary_fn {
    const char *match;
    const char *file;
    const char *display;
};

/* Append one line for a translation unit. Returns 0, or -1 with errno set. */
int piano_summary_append(const char *path, const char *source, const char *spec,
                         unsigned min_size, const struct piano_summary_fn *fns,
                         size_t n, const struct piano_summary_fn *small,
                         size_t k);

/* One parsed line. Fields point into storage owned by the line. */
struct piano_summary_line {
    char *source;
    char *spec;
    unsigned min_size;
    size_t n;
    struct piano_summary_fn *fns;
    size_t n_small; /* left out as smaller than min_size */
    struct piano_summary_fn *small;
    char *storage_;
};

/* Read the next line of f. Returns 1 and fills *out, 0 at end of file, -1 on
 * a malformed line (skipped by the caller: the file is only ever appended). */
int piano_summary_read(FILE *f, struct piano_summary_line *out);
void piano_summary_line_free(struct piano_summary_line *l);

#ifdef __cplusplus
}
#endif
#endif
