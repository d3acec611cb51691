/* hook_stack_check.c - preloaded (LD_PRELOAD) by the case hook_stack: its
 * __piano_enter and __piano_exit come before the runtime's (the program reaches
 * the hooks through its GOT), count the hooks entered with the stack not
 * aligned as the x86-64 ABI wants at a call (%rsp+8 a multiple of 16 at the
 * hook's first instruction), and go on to the runtime's hooks: with a jump,
 * the stack as they got it, or, misaligned, with a call, which aligns it (the
 * runtime tells nested calls apart by the stack's position: an entry and its
 * exit are moved alike), so that the program runs on to report the count.
 * At exit: "hook_stack_check: N hooks, M misaligned" on stderr. */
#include <dlfcn.h>
#include <stdio.h>

#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN void *check_enter, *check_exit; /* the runtime's hooks */
HIDDEN unsigned long check_hooks, check_misaligned;

#if defined(__x86_64__)
#define CHECKED_HOOK(NAME, NEXT)                                               \
  ".globl " NAME "\n.type " NAME ",@function\n" NAME ":\n"                     \
  "  lock incq check_hooks(%rip)\n"                                            \
  "  leaq 8(%rsp), %r11\n"                                                     \
  "  testb $15, %r11b\n"                                                       \
  "  jnz 1f\n"                                                                 \
  "  jmp *" NEXT "(%rip)\n"                                                    \
  "1: lock incq check_misaligned(%rip)\n"                                      \
  "  call *" NEXT "(%rip)\n"                                                   \
  "  ret\n"                                                                    \
  ".size " NAME ", .-" NAME "\n"
__asm__(".text\n" CHECKED_HOOK("__piano_enter", "check_enter")
            CHECKED_HOOK("__piano_exit", "check_exit"));
#endif

__attribute__((constructor)) static void find_hooks(void) {
  check_enter = dlsym(RTLD_NEXT, "__piano_enter");
  check_exit = dlsym(RTLD_NEXT, "__piano_exit");
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "hook_stack_check: %lu hooks, %lu misaligned\n", check_hooks,
          check_misaligned);
}
