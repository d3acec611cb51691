/*
 * select.h - PIANO_FNS pattern matcher used by PianoPass (pass/PianoPass.cpp).
 *
 * Plain C11 so it can be unit-tested with cmocka (test/unit/test_select.c)
 * without LLVM. The plugin parses PIANO_FNS once per module and asks, for
 * every defined function, whether it is selected.
 *
 * Pattern language (comma-separated items):
 *   sub            qualified name (without parameters) contains "sub"
 *   =name          qualified name is exactly "name"
 *   file:suffix    defining file path ends with "suffix"
 *   *              every function
 *   !pattern       remove what pattern matches (excludes win over includes)
 * Unset/empty PIANO_FNS, or a list made only of excludes: the default set
 * (every function defined outside system headers, decided by the caller),
 * minus the excludes.
 */
#ifndef PIANO_SELECT_H
#define PIANO_SELECT_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct piano_select;

/* Result of piano_select_match. */
enum piano_sel_result {
    PIANO_SEL_NO = 0,      /* not selected */
    PIANO_SEL_YES = 1,     /* selected by an explicit include */
    PIANO_SEL_DEFAULT = 2  /* selected only if the caller's default rule
                              (not in a system header) accepts it */
};

/*
 * Parse a PIANO_FNS value. spec may be NULL or "" (default selection).
 * On success returns 0 and stores a selector in *out (free with
 * piano_select_free). On a malformed pattern returns -1, stores NULL in *out
 * and writes a one-line message (without trailing newline) into err, e.g.
 *   PIANO_FNS: malformed pattern '=' (expected a name after '=')
 */
int piano_select_parse(const char *spec, struct piano_select **out,
                       char *err, size_t errlen);

/* name: qualified name without parameters; file: defining file path or "". */
enum piano_sel_result piano_select_match(const struct piano_select *sel,
                                         const char *name, const char *file);

/* Nonzero when no include pattern was given (default set applies). */
int piano_select_is_default(const struct piano_select *sel);

void piano_select_free(struct piano_select *sel);

#ifdef __cplusplus
}
#endif
#endif
