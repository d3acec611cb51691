/*
 * jumps.c - setjmp and longjmp, interposed (x86-64 glibc), so that a longjmp
 * ends exactly the instrumented calls it leaves, when it leaves them.
 *
 * Each setjmp notes the thread's shadow-stack depth under its buffer's
 * address; a longjmp to that buffer closes the calls above that depth, then
 * jumps. Without a note (a buffer set before the thread's first instrumented
 * call, or one of many set since), the calls left are closed by stack position
 * at the next hook (hooks.c, drop_abandoned). That cannot tell a function
 * inlined into its caller, whose hooks run in the caller's frame, from a
 * sibling called after the jump at the same stack position: at -O2, where
 * small functions are inlined, `if (setjmp(env) == 0) work(); else cleanup();`
 * nested cleanup under the abandoned work and kept work running until the
 * function that called setjmp returned.
 *
 * A thread keeps JUMP_NOTES notes. When they are all taken, a new one
 * replaces the deepest: a note deeper than the thread is now was set by a
 * frame that has returned (its buffer is dead), and of live ones the deepest
 * is the newest and shortest-lived. A server's outermost buffer (PostgreSQL's
 * PostgresMain, set once, jumped to by every error) thus keeps its note
 * however many buffers its requests set (PG_TRY); replacing the oldest lost
 * it after 32 of them, and the calls an error left were closed late, by stack
 * position, with the next ones nested under them.
 *
 * The setjmp family must return twice, from the program's own frame: each is
 * a few instructions of assembly that note the depth and jump (not call) to
 * glibc's own. The longjmp family is C: note, close, then call glibc's.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include <stdint.h>

#if defined(__x86_64__) && defined(__GLIBC__)

#define PIANO_API __attribute__((visibility("default")))
#define JUMP_NOTES 32

/* The notes of this thread: buffer address -> shadow-stack depth. */
static __thread struct {
    const void *env;
    uint32_t depth;
} notes[JUMP_NOTES] __attribute__((tls_model("initial-exec")));
static __thread unsigned used_notes __attribute__((tls_model("initial-exec")));

/* glibc's functions; the assembly below jumps through the first three. */
__attribute__((visibility("hidden"))) void *piano_real__setjmp, *piano_real_setjmp, *piano_real___sigsetjmp;
static void (*real_longjmp)(void *, int), (*real__longjmp)(void *, int), (*real_siglongjmp)(void *, int),
    (*real___longjmp_chk)(void *, int);

static void resolve(void)
{
    if (__atomic_load_n(&piano_real___sigsetjmp, __ATOMIC_ACQUIRE))
        return;
    /* Each lookup gives the same answer in every thread: a race only repeats it. */
    real_longjmp = (void (*)(void *, int))piano_next_symbol("longjmp");
    real__longjmp = (void (*)(void *, int))piano_next_symbol("_longjmp");
    real_siglongjmp = (void (*)(void *, int))piano_next_symbol("siglongjmp");
    real___longjmp_chk = (void (*)(void *, int))piano_next_symbol("__longjmp_chk");
    piano_real__setjmp = piano_next_symbol("_setjmp");
    piano_real_setjmp = piano_next_symbol("setjmp");
    if (!real___longjmp_chk)
        real___longjmp_chk = real_longjmp;
    __atomic_store_n(&piano_real___sigsetjmp, piano_next_symbol("__sigsetjmp"), __ATOMIC_RELEASE);
}

/* At load: not in the signal handler a siglongjmp may come from. */
__attribute__((constructor)) static void resolve_early(void) { resolve(); }

/* The note of env, or JUMP_NOTES. */
static unsigned note_of(const void *env)
{
    for (unsigned k = 0; k < used_notes; k++)
        if (notes[k].env == env)
            return k;
    return JUMP_NOTES;
}

/* Where a new note goes: a free one, else the deepest. */
static unsigned free_note(void)
{
    if (used_notes < JUMP_NOTES)
        return used_notes++;
    unsigned deepest = 0;
    for (unsigned k = 1; k < JUMP_NOTES; k++)
        if (notes[k].depth > notes[deepest].depth)
            deepest = k;
    return deepest;
}

/* Called by the setjmp stubs with the buffer, before they jump to glibc. */
__attribute__((visibility("hidden"))) void piano_setjmp_note(const void *env)
{
    resolve();   /* done at load, unless another library's constructor got here first */
    struct piano_thread *ts = piano_tls;
    if (!ts || ts->depth > PIANO_STACK_CAP)
        return;
    unsigned k = note_of(env);
    if (k == JUMP_NOTES)
        k = free_note();
    notes[k].env = env;
    notes[k].depth = ts->depth;
}

/* A longjmp to env: the calls above the depth its setjmp noted end now. */
static void leave_to(const void *env)
{
    resolve();
    unsigned k = note_of(env);
    if (k < JUMP_NOTES)
        piano_jumped_to(notes[k].depth);
}

/* rdi (the buffer) and rsi (__sigsetjmp's flag) are kept across the note;
 * the stub leaves the stack as it found it, so glibc saves the caller's frame. */
#define SETJMP_STUB(name)                                                                          \
    __asm__(".text\n"                                                                              \
            ".globl " #name "\n"                                                                   \
            ".type " #name ", @function\n" #name ":\n"                                             \
            "    push %rdi\n"                                                                      \
            "    push %rsi\n"                                                                      \
            "    sub $8, %rsp\n"                                                                   \
            "    call piano_setjmp_note\n"                                                         \
            "    add $8, %rsp\n"                                                                   \
            "    pop %rsi\n"                                                                       \
            "    pop %rdi\n"                                                                       \
            "    jmp *piano_real_" #name "(%rip)\n"                                                \
            ".size " #name ", .-" #name "\n");
SETJMP_STUB(_setjmp)
SETJMP_STUB(setjmp)
SETJMP_STUB(__sigsetjmp)

#define LONGJMP_WRAPPER(name)                                                                      \
    PIANO_API __attribute__((noreturn)) void name(void *env, int val)                              \
    {                                                                                              \
        leave_to(env);                                                                             \
        real_##name(env, val);                                                                     \
        __builtin_unreachable();                                                                   \
    }
LONGJMP_WRAPPER(longjmp)
LONGJMP_WRAPPER(_longjmp)
LONGJMP_WRAPPER(siglongjmp)
LONGJMP_WRAPPER(__longjmp_chk)

#else
/* Elsewhere, calls left by a jump are closed by stack position (hooks.c). */
typedef int piano_jumps_unused;
#endif
