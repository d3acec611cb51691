/*
 * floor_hooks.c - the cheapest useful -finstrument-functions hooks: one
 * __rdtsc() timestamp per entry and per exit into a per-thread (initial-exec
 * __thread) ring buffer. Nothing else. Linked into the "floor" builds.
 * Compiled without -finstrument-functions.
 */
#include <stdint.h>
#include <x86intrin.h>

#define RING 4096u /* entries, a power of two */

static __thread uint64_t ring[RING] __attribute__((tls_model("initial-exec")));
static __thread uint32_t pos __attribute__((tls_model("initial-exec")));

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn;
    (void)site;
    ring[pos++ & (RING - 1)] = __rdtsc();
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
    ring[pos++ & (RING - 1)] = __rdtsc();
}
