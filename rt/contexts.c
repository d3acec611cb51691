/*
 * contexts.c - a shadow stack per execution context: the calls in flight of a
 * context the thread leaves (swapcontext, setcontext: rt/ucontext.c) are
 * parked here, their clocks paused, and come back on top of the thread's
 * shadow stack, their clocks going on, when the context is resumed. The
 * shadow stack (hooks.c) then only ever holds the running context's calls: a
 * suspended call is neither the caller of another context's calls nor
 * charged the time they run.
 *
 * A context left by swapcontext is resumed by that swapcontext returning,
 * whoever switched to it (a swapcontext, a setcontext, a makecontext'd
 * function returning through uc_link): the interposer keeps the token of its
 * parked calls in its own frame and brings them back then. A context left by
 * setcontext (which never returns) is found by the stack region of the
 * context switched to: the target's saved stack pointer, within its uc_stack
 * (or the thread's own stack); its calls deeper than that stack pointer were
 * left for good and end there.
 *
 * At most PARK_MAX contexts per thread are parked (a coroutine never resumed,
 * its stack freed, stays parked): beyond, the oldest one's calls end, as a
 * longjmp ends the calls it leaves, timed to where they were parked. A
 * context's outermost PARK_SLOTS calls are parked; deeper ones end at the
 * switch. All of this is the thread's own (thread-local, one anonymous
 * mapping made at its first switch): the hooks do not change.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define PARK_MAX 256
#define PARK_SLOTS 1024

struct parked {
    uint64_t serial;   /* order of parking (the lowest is the oldest); 0: free */
    uint64_t t;        /* tick it was parked at */
    uintptr_t sp;      /* stack position of the switch that left it */
    uint32_t gen;      /* advanced at each parking: a stale token finds none */
    uint32_t n;        /* calls */
    uint32_t frame_at; /* the frame's call is slot frame_at (1-based), or 0 */
    uint32_t by_swap;  /* resumed by its swapcontext returning (else found by stack region) */
    uint64_t leave;    /* the thread's leave count when it was parked */
};

struct park {
    uint64_t serial;
    uint32_t used;
    struct parked rec[PARK_MAX];
    struct piano_slot slots[PARK_MAX][PARK_SLOTS];
};

static __thread struct park *park __attribute__((tls_model("initial-exec")));
/* The thread's latest leave of a context: its number and tick. A context
 * resumed by another's switch is charged the switch (its swapcontext, a call
 * it made, returning): its clocks go on from that tick. */
static __thread uint64_t leaves __attribute__((tls_model("initial-exec")));
static __thread uint64_t left_at __attribute__((tls_model("initial-exec")));
/* This thread is in one of the functions below: a signal handler's switch
 * meanwhile changes nothing (it would find the records half made). */
static __thread int switching __attribute__((tls_model("initial-exec")));

/* The calling thread's state when its shadow stack may be changed: not in a
 * signal handler that interrupted a hook, not in piano itself, not past the
 * stack's capacity. */
static struct piano_thread *usable_state(void)
{
    struct piano_thread *ts = piano_tls;
    if (!ts || ts->busy || ts->signal_of || ts->depth > PIANO_STACK_CAP || switching)
        return NULL;
    return ts;
}

/* Puts parked context r's calls back on top of ts's shadow stack (depth d)
 * at tick t, their clocks going on from where they stopped; frees r. Returns
 * the new depth. */
static uint32_t restore(struct piano_thread *ts, struct parked *r, uint32_t d, uint64_t t)
{
    struct piano_slot *stack = PIANO_STACK(ts);
    uint32_t k = (uint32_t)(r - park->rec);
    uint64_t paused = t > r->t ? t - r->t : 0;
    if (d + r->n < PIANO_STACK_CAP) {
        for (uint32_t i = 0; i < r->n; i++) {
            stack[d + 1 + i] = park->slots[k][i];
            stack[d + 1 + i].t0 += paused;
        }
        if (r->frame_at && ts->frame_depth == PIANO_FRAME_PARKED) {
            ts->frame_depth = d + r->frame_at;
            ts->frame_paused += paused;
        }
        d += r->n;
    } else if (r->frame_at && ts->frame_depth == PIANO_FRAME_PARKED) {
        ts->frame_depth = 0;   /* no room: its calls are lost */
    }
    r->serial = 0;
    park->used--;
    return d;
}

/* Ends parked context r's calls at tick t (timed to where they were parked):
 * on top of the stack at depth d, then closed; the call at d is not their
 * caller. */
static void drop(struct piano_thread *ts, struct parked *r, uint32_t d, uint64_t t)
{
    struct piano_slot *stack = PIANO_STACK(ts);
    uint64_t child = stack[d].child;
    hook_begin(ts, d);
    uint32_t top = restore(ts, r, d, t);
    close_above(ts, top, d, t);
    stack[d].child = child;
    hook_end(ts, d);
}

static struct parked *oldest(void)
{
    struct parked *o = NULL;
    for (uint32_t i = 0; i < PARK_MAX; i++)
        if (park->rec[i].serial && (!o || park->rec[i].serial < o->serial))
            o = &park->rec[i];
    return o;
}

/* Parks the running context's calls (all of ts's shadow stack) at tick t,
 * left by a switch at stack position sp. Returns its token, or 0 when
 * nothing was parked. */
static uint64_t park_all(struct piano_thread *ts, uintptr_t sp, int by_swap, uint64_t t)
{
    uint32_t d = ts->depth;
    if (!d)
        return 0;
    if (!park) {
        void *p = mmap(NULL, sizeof *park, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return 0;   /* the calls stay: they are charged the other context's time */
        park = p;
    }
    if (park->used == PARK_MAX)
        drop(ts, oldest(), d, t);
    struct piano_slot *stack = PIANO_STACK(ts);
    if (d > PARK_SLOTS) {   /* the deepest calls end here */
        hook_begin(ts, d);
        d = close_above(ts, d, PARK_SLOTS, t);
        hook_end(ts, d);
    }
    uint32_t k = 0;
    while (park->rec[k].serial)
        k++;
    struct parked *r = &park->rec[k];
    hook_begin(ts, d);
    memcpy(park->slots[k], &stack[1], d * sizeof *stack);
    r->serial = ++park->serial;
    r->t = t;
    r->sp = sp;
    r->gen++;
    r->n = d;
    r->by_swap = (uint32_t)by_swap;
    r->leave = leaves;
    r->frame_at = 0;
    if (ts->frame_depth && ts->frame_depth <= d) {
        r->frame_at = ts->frame_depth;
        ts->frame_depth = PIANO_FRAME_PARKED;
    }
    park->used++;
    stack[1].t0 = t;   /* the slot above the top holds the thread's latest tick (spool_read.c) */
    hook_end(ts, 0);
    return (uint64_t)r->gen << 32 | (k + 1);
}

/* The parked context (left by setcontext) that a switch to ucp resumes: the
 * latest parked in the stack region ucp's stack pointer is in. */
static struct parked *by_region(const struct piano_thread *ts, const ucontext_t *uc)
{
    uintptr_t rsp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP], lo, hi;
    uintptr_t ss = (uintptr_t)uc->uc_stack.ss_sp;
    if (uc->uc_stack.ss_size && rsp >= ss && rsp - ss <= uc->uc_stack.ss_size) {
        lo = ss;
        hi = ss + uc->uc_stack.ss_size;
    } else if (rsp >= ts->stack_lo && rsp < ts->stack_hi) {
        lo = ts->stack_lo;
        hi = ts->stack_hi;
    } else {
        return NULL;
    }
    struct parked *best = NULL;
    for (uint32_t i = 0; i < PARK_MAX; i++) {
        struct parked *r = &park->rec[i];
        if (r->serial && !r->by_swap && r->sp >= lo && r->sp < hi && (!best || r->serial > best->serial))
            best = r;
    }
    return best;
}

/* The thread leaves its running context for ucp (swapcontext when by_swap,
 * else setcontext) from the interposer's frame: parks the running context's
 * calls; a context left by setcontext that ucp resumes comes back, its calls
 * deeper than ucp's stack pointer ended. Returns the token of the calls
 * parked (0: none). */
uint64_t contexts_leave(const void *ucp, int by_swap)
{
    struct piano_thread *ts = usable_state();
    if (!ts)
        return 0;
    switching = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint64_t t = piano_now();
    uint32_t d = ts->depth;
    leaves++;
    left_at = t;
    /* Off-CPU time so far was the leaving context's innermost call's. */
    if (*ts->cpu_lockp != ts->cpu_lock || *ts->cpu_headp != ts->cpu_head) {
        hook_begin(ts, d);
        cpu_resync(ts, PIANO_NODES(ts) + PIANO_STACK(ts)[d].node);
        hook_end(ts, d);
    }
    uint64_t token = park_all(ts, (uintptr_t)__builtin_frame_address(0), by_swap, t);
    struct parked *r = park && park->used && ucp ? by_region(ts, ucp) : NULL;
    if (r) {
        uintptr_t rsp = (uintptr_t)((const ucontext_t *)ucp)->uc_mcontext.gregs[REG_RSP];
        struct piano_slot *stack = PIANO_STACK(ts);
        d = ts->depth;
        hook_begin(ts, d);
        uint32_t top = restore(ts, r, d, t);
        while (top > d && stack[top].sp < rsp)   /* left for good: end where they were parked */
            top = close_above(ts, top, top - 1, t);
        hook_end(ts, top);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    switching = 0;
    return token;
}

/* The context whose calls token parked is running again (its swapcontext
 * returned): they come back on top. */
void contexts_back(uint64_t token)
{
    uint32_t k = (uint32_t)token - 1;
    if (!token || !park || k >= PARK_MAX)
        return;
    struct piano_thread *ts = usable_state();
    if (!ts)
        return;
    switching = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct parked *r = &park->rec[k];
    if (r->serial && r->gen == (uint32_t)(token >> 32)) {   /* else dropped meanwhile (too many parked) */
        uint64_t t = piano_now();
        /* Another context left for this one since it was parked (not a
         * makecontext'd function returning through uc_link, unseen): from then. */
        if (leaves != r->leave && left_at >= r->t && left_at <= t)
            t = left_at;
        uint32_t d = ts->depth;
        hook_begin(ts, d);
        d = restore(ts, r, d, t);
        hook_end(ts, d);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    switching = 0;
}

/* The thread ends: the calls of its parked contexts end too (timed to where
 * they were parked), before those of its running one. */
void contexts_thread_end(struct piano_thread *ts)
{
    if (!park)
        return;
    uint64_t t = piano_now();
    for (struct parked *r; park->used && (r = oldest());)
        drop(ts, r, piano_depth(ts->depth), t);
    munmap(park, sizeof *park);
    park = NULL;
}

/* The run ends (exit) on this thread: its parked contexts' calls are in
 * flight at the end, as its running context's are: on top of them, the
 * oldest context first. */
void contexts_finish(struct piano_thread *ts)
{
    if (!park || !ts || ts->depth > PIANO_STACK_CAP)
        return;
    uint64_t t = piano_now();
    for (struct parked *r; park->used && (r = oldest());) {
        uint32_t d = ts->depth;
        hook_begin(ts, d);
        d = restore(ts, r, d, t);
        hook_end(ts, d);
    }
}

/* A forked child: the parked calls, the forking thread's, start at the fork
 * as its calls in flight do (fork.c). */
void contexts_forked(uint64_t now)
{
    if (!park)
        return;
    for (uint32_t k = 0; k < PARK_MAX; k++) {
        struct parked *r = &park->rec[k];
        if (!r->serial)
            continue;
        r->t = now;
        for (uint32_t i = 0; i < r->n; i++) {
            park->slots[k][i].t0 = now;
            park->slots[k][i].child = 0;
        }
    }
}
