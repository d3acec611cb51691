/*
 * piano_abi.h - the contract between PianoPass (which emits calls) and the
 * runtime (which records them). The pass emits IR that matches this header:
 * pass/Instrument.cpp includes it (so it stays valid C++) and checks at
 * compile time that the site it builds has this struct's layout, that the
 * hooks have these signatures and that PIANO_ABI_VERSION is the one its IR is
 * for. Change both sides together and bump PIANO_ABI_VERSION.
 *
 * For every instrumented function F the pass emits one `struct piano_site`
 * global (one per function, not one array: see pass/Instrument.cpp), listed in a
 * per-module array of pointers, and:
 *   - at F's entry:                         __piano_enter(&site)
 *   - before every `ret`, before a
 *     `musttail` call, and on the cleanup
 *     path of C++ unwinding through F:      __piano_exit(&site)
 * and a module constructor calling __piano_register(list, n, ABI).
 * Each hook call is made only while the function's byte `*site->on` is
 * non-zero (a relaxed atomic load at each call site; the bytes of a module
 * are side by side in one array): 1 as compiled, cleared by the runtime when
 * the run-time PIANO_FNS does not select the function or the run is not
 * recorded (PIANO_DISABLE). It is never set again, and cleared only by
 * __piano_register or by the registration an entry hook makes (which then
 * records nothing): an entry that recorded has its exits' hooks run.
 * Hooks may run before that constructor: the runtime registers a site
 * lazily the first time it sees it, and ignores hooks when it is off.
 */
#ifndef PIANO_ABI_H
#define PIANO_ABI_H
#include <stdint.h>

#define PIANO_ABI_VERSION 3  /* 3: the site's byte `on` and match name (run-time selection) */

struct piano_site {
    uint32_t id;        /* 0 until the runtime registers the site; then a dense id >= 1 */
    uint32_t line;      /* line of the definition, 0 when the module has no debug info */
    const char *name;   /* C: plain name; C++: full demangled signature */
    const char *file;   /* source file of the definition (never NULL, may be "") */
    uint8_t *on;        /* the function's byte: 1 as compiled, 0 once the runtime found it not to record */
};
/* name is "display\0match\0S": after the name reports show, the qualified
 * name without parameters that PIANO_FNS patterns see, then '1' when the
 * function is defined in a system header (patterns must name it), else '0'. */

#ifdef __cplusplus
extern "C" {
#endif
/* Registers a module's sites. Returns 1 when the runtime records, 0 when it
 * is off (PIANO_DISABLE, no database). */
int __piano_register(struct piano_site *const *sites, uint32_t count, uint32_t abi_version);
void __piano_enter(struct piano_site *site);
void __piano_exit(struct piano_site *site);
/* 1 until the runtime starts (the first hook starts it), then 1 while it
 * records and 0 when it is off. (ABI 2's PIANO_GUARD tested it; kept for
 * objects of that version.) */
extern unsigned char __piano_on;
#ifdef __cplusplus
}
#endif
#endif
