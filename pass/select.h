/*
 * select.h - PIANO_FNS pattern matcher used by PianoPass (pass/Selection.cpp).
 *
 * Plain C11 so it can be unit-tested with cmocka (test/unit/test_select.c)
 * without LLVM. The plugin parses PIANO_FNS once per module and asks, for
 * every defined function, whether it is selected.
 *
 * Pattern language (comma-separated items):
 *   sub            qualified name (without parameters) contains "sub"
 *   =name          qualified name is exactly "name"
 *   file:suffix    defining file path ends with "suffix"
 *   file:folder/   defining file is under that folder (whole components:
 *                  "src/net/" holds /x/src/net/a.c, not src/network/a.c;
 *                  "/abs/dir/" only from the start of the path)
 *   *              every function
 *   !pattern       remove what pattern matches (excludes win over includes)
 * Unset/empty PIANO_FNS, or a list made only of excludes: the default set
 * (every function defined outside system headers), minus the excludes.
 *
 * Names are those of C++ as a user writes them: a pattern sees the
 * qualified name with every template argument list removed
 * ("leveldb::SkipList::Insert" for leveldb::SkipList<char const*, ...>::Insert,
 * "std::atomic::load" for std::atomic<leveldb::SkipList<...>::Node*>::load),
 * so "SkipList" never matches inside template arguments. A pattern that holds
 * '<' is matched against the name with its template arguments.
 *
 * A function defined in a system header (the caller says which) is selected
 * only by a pattern that names it on purpose: one starting with "std::" or
 * "__gnu_cxx::", an =name, a file: pattern, or '*'.
 *
 * Broad and named matches: '*', a substring and the default set are broad
 * (the caller leaves out tiny functions, PIANO_MIN_SIZE); =name, a pattern
 * that is the whole name or its last '::'-separated parts ("leaf" for leaf,
 * "Parser::parse" for app::Parser::parse) and file: patterns name a function
 * and select it whatever its size.
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
    PIANO_SEL_YES = 1,     /* named by an include: selected whatever its size */
    PIANO_SEL_DEFAULT = 2, /* selected by the default set (no include given) */
    PIANO_SEL_BROAD = 3    /* selected by '*' or a substring only */
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
/* The same for another variable in the same language (PIANO_FRAME): its
 * messages name var. */
int piano_select_parse_var(const char *var, const char *spec,
                           struct piano_select **out, char *err, size_t errlen);

/* name: qualified name without parameters, with template arguments as
 * demangled; file: defining file path or ""; system: nonzero when the
 * function is defined in a system header. */
enum piano_sel_result piano_select_match_fn(const struct piano_select *sel,
                                            const char *name, const char *file,
                                            int system);
/* The same for a function outside system headers. */
enum piano_sel_result piano_select_match(const struct piano_select *sel,
                                         const char *name, const char *file);

/* Copies name into out (outlen bytes, always terminated) without its
 * template argument lists: "a::B<int, C<D>>::f<E>" -> "a::B::f"; operator
 * names keep their '<'/'>' ("operator<<"). Returns the stripped length. */
size_t piano_select_strip_targs(const char *name, char *out, size_t outlen);

/* Nonzero when no include pattern was given (default set applies). */
int piano_select_is_default(const struct piano_select *sel);

void piano_select_free(struct piano_select *sel);

#ifdef __cplusplus
}
#endif
#endif
