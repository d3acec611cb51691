// CFLAGS: -finstrument-functions
// The program's own -finstrument-functions hooks (as uftrace's or a
// hand-written tracer's) next to piano's: they count each instrumented
// function's entries and exits and print them; they and what they call are
// no_instrument_function, so neither clang's hooks nor piano's are in them.
// PIANO_FNS is unset: piano instruments after inlining (the other stage than
// no_instrument_fn's).
#include <stdio.h>
static volatile unsigned sink;
static unsigned enters, exits, loud_enters, loud_exits;
void loud(void);
__attribute__((no_instrument_function)) static int is_loud(void *fn) { return fn == (void *)loud; }
__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site) {
    (void)site;
    enters++;
    loud_enters += is_loud(fn);
}
__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site) {
    (void)site;
    exits++;
    loud_exits += is_loud(fn);
}
__attribute__((no_instrument_function, noinline)) void quiet(unsigned i) { sink += i; }
__attribute__((noinline)) void helper(unsigned i) { sink ^= i; }
__attribute__((noinline)) void loud(void) {
    for (unsigned i = 0; i < 37; i++) quiet(i);
    for (unsigned i = 0; i < 5; i++) helper(i);
}
int main(void) {
    for (int i = 0; i < 3; i++) loud();
    printf("enters %u exits %u loud %u/%u\n", enters, exits, loud_enters, loud_exits);
    return 0;
}
