// (every function, the resolvers included)
// An ifunc resolver runs while the dynamic loader relocates the program,
// before libc has started: an instrumented one (and the helper it calls)
// made piano start there, and its name-service lookup crashed the program
// (SIGSEGV before main). The resolver's calls are not recorded; the program
// runs as plain, and the function it picked is recorded from main on. The
// same with clang's own resolver for target_clones.
#include <stdio.h>

static int add_loop(int a, int b)
{
    for (int i = 0; i < b; i++)
        a++;
    return a;
}

static int add_plain(int a, int b)
{
    return a + b;
}

typedef int add_fn(int, int);

static int prefers_loop(void)
{
    unsigned x = 0;
    for (int i = 0; i < 50; i++)
        x += (unsigned)i * 2654435761u;
    return (int)(x & 1);
}

static add_fn *resolve_add(void)
{
    return prefers_loop() ? add_loop : add_plain;
}

int add(int, int) __attribute__((ifunc("resolve_add")));

__attribute__((target_clones("avx2", "default"))) int scale(int x)
{
    return x * 3;
}

int main(void)
{
    int s = 0;
    for (int i = 0; i < 10; i++)
        s = add(s, scale(i));
    printf("%d\n", s);
    return 0;
}
