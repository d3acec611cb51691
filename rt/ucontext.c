/*
 * ucontext.c - swapcontext and setcontext, interposed (x86-64 glibc), so that
 * each execution context has its own calls in flight (contexts.c): the
 * running context's calls are parked before the switch, and a swapcontext
 * brings its own back when it returns, that is when its context is resumed
 * (by a swapcontext, a setcontext, or a makecontext'd function returning
 * through uc_link, which glibc does inside, unseen). getcontext and
 * makecontext need nothing.
 */
#define _GNU_SOURCE
#include "internal.h"
#include <ucontext.h>

#if defined(__x86_64__) && defined(__GLIBC__)

static int (*real_swapcontext)(ucontext_t *, const ucontext_t *);
static int (*real_setcontext)(const ucontext_t *);

static void resolve(void)
{
    if (__atomic_load_n(&real_setcontext, __ATOMIC_ACQUIRE))
        return;
    real_swapcontext = (int (*)(ucontext_t *, const ucontext_t *))piano_next_symbol("swapcontext");
    __atomic_store_n(&real_setcontext, (int (*)(const ucontext_t *))piano_next_symbol("setcontext"), __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void resolve_early(void) { resolve(); }

PIANO_API int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
    resolve();
    uint64_t token = contexts_leave(ucp, 1);
    int r = real_swapcontext(oucp, ucp);
    /* Back in this context (or the switch failed): its calls come back. */
    contexts_back(token);
    return r;
}

PIANO_API int setcontext(const ucontext_t *ucp)
{
    resolve();
    contexts_leave(ucp, 0);
    return real_setcontext(ucp);
}

#else
/* Elsewhere, the contexts share the thread's one shadow stack. */
typedef int piano_ucontext_unused;
#endif
