/*
 * runtime.h - what the recorder shares with its interposers (alloc.c,
 * jumps.c) and the unit tests: the per-thread state pointer and the fixed
 * layout of a thread's mapping (spool.h). The recorder's own parts share
 * internal.h.
 */
#ifndef PIANO_RUNTIME_H
#define PIANO_RUNTIME_H
#include "spool.h"
#include <stddef.h>

#define PIANO_STACK(ts) ((struct piano_slot *)((char *)(ts) + PIANO_OFF_STACK))
#define PIANO_NODES(ts) ((struct piano_node *)((char *)(ts) + PIANO_OFF_NODES))
#define PIANO_FNS(ts) ((struct piano_fnrec *)((char *)(ts) + PIANO_OFF_FNS))
typedef uint32_t piano_hist_counter;   /* a histogram counter: 32 bits, a wrap carried (piano_hist_inc) */
#define PIANO_PAGES(ts) ((piano_hist_counter *)((char *)(ts) + PIANO_OFF_PAGES))
/* The context hash of mask+1 slots: in the header's page while it is the smallest (spool.h). */
static inline uint32_t *piano_hash_table(void *ts, uint32_t mask)
{
    return (uint32_t *)((char *)ts + (mask < PIANO_HASH_MIN ? PIANO_OFF_HASH_FIRST : PIANO_OFF_HASH));
}
/* Entry i of the frame's function list, which grows down from the frame buffer (spool.h). */
#define PIANO_TOUCHED(ts, i) (((uint32_t *)((char *)(ts) + PIANO_THREAD_FILE_SIZE))[-1 - (ptrdiff_t)(i)])

/* The calling thread's state; NULL before its first instrumented call, after it
 * ended, or when piano is off. initial-exec: one instruction to reach it. */
extern __thread struct piano_thread *piano_tls __attribute__((tls_model("initial-exec")));

/* A longjmp goes back to where the thread's shadow stack had `depth` calls:
 * the calls above end now (jumps.c). */
void piano_jumped_to(uint32_t depth);
/* The C library's own `name` (the next definition after this library's
 * interposer), or NULL; dlsym's own allocations are not the program's. */
void *piano_next_symbol(const char *name);

/* Heap in use (heap.c), when g_heap_on (PIANO_HEAP=1). */
extern int g_heap_on __attribute__((visibility("hidden")));
/* This thread is inside the libc's allocator, called by alloc.c's interposers
 * (volatile: a signal handler reads it; defined in heap.c, which every build has). */
extern __thread volatile int tls_in_alloc __attribute__((tls_model("initial-exec"), visibility("hidden")));
/* This thread is storing the run (finish.c): its frees leave the owner map alone. */
extern __thread int tls_storing __attribute__((tls_model("initial-exec"), visibility("hidden")));
void heap_track(struct piano_thread *ts, struct piano_node *node, void *p, size_t n);
void heap_untrack(struct piano_thread *ts, void *p);
int heap_take_for_realloc(struct piano_thread *ts, void *p, uint64_t *size, struct piano_node **node);
void heap_put_back(struct piano_thread *ts, void *p, uint64_t size, struct piano_node *node);
void heap_realloc_freed(struct piano_thread *ts, uint64_t size, struct piano_node *node);

#endif
