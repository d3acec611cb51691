/*
 * stub_rt.c - a throwaway stand-in for libpiano_rt used only by the pass
 * tests (test/pass/*): it implements the three hooks of rt/piano_abi.h,
 * counts enters/exits per site, checks that exits match the innermost open
 * call, and prints the counts at exit, sorted by name:
 *   piano-stub: registered 3 site(s), abi 3
 *   piano-stub: main enter=1 exit=1
 *   piano-stub: depth=0 mismatched=0
 * (and "piano-stub: no hook called" when none was, e.g. PIANO_STUB_OFF=1,
 * which clears every site's byte `*on`).
 * Compile it WITHOUT the plugin and link it into a test program.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct piano_site {
    uint32_t id;
    uint32_t line;
    const char *name;
    const char *file;
    unsigned char *on;
};

#define MAX_SITES 1024
#define MAX_DEPTH 4096

static struct piano_site *sites[MAX_SITES + 1];
static unsigned long enters[MAX_SITES + 1], exits[MAX_SITES + 1];
static uint32_t nsites, registered, abi;
static struct piano_site *stack[MAX_DEPTH];
static int depth, overflow;
static unsigned long mismatched;

static int by_name(const void *a, const void *b)
{
    const struct piano_site *x = *(struct piano_site *const *)a;
    const struct piano_site *y = *(struct piano_site *const *)b;
    return strcmp(x->name, y->name);
}

static void report(void)
{
    struct piano_site *sorted[MAX_SITES];
    unsigned n = 0;
    printf("piano-stub: registered %u site(s), abi %u\n", registered, abi);
    for (uint32_t i = 1; i <= nsites; i++)
        sorted[n++] = sites[i];
    qsort(sorted, n, sizeof sorted[0], by_name);
    for (unsigned i = 0; i < n; i++)
        printf("piano-stub: %s enter=%lu exit=%lu\n", sorted[i]->name,
               enters[sorted[i]->id], exits[sorted[i]->id]);
    printf("piano-stub: depth=%d mismatched=%lu\n", depth + overflow,
           mismatched);
    fflush(stdout);
}

static int hooked;
static void report_if_none(void)
{
    if (!hooked)
        printf("piano-stub: no hook called\n");
}

static void add(struct piano_site *s)
{
    if (s->id || nsites >= MAX_SITES)
        return;
    if (nsites == 0)
        atexit(report);
    s->id = ++nsites;
    sites[s->id] = s;
}

/* PIANO_STUB_OFF=1 clears every site's byte when its module registers, as
 * the runtime does for PIANO_DISABLE=1: its hooks are never called. */
static int stub_off(void)
{
    const char *off = getenv("PIANO_STUB_OFF");
    return off && *off == '1';
}

int __piano_register(struct piano_site *const *s, uint32_t count, uint32_t version)
{
    if (!registered)
        atexit(report_if_none);
    abi = version;
    registered += count;
    for (uint32_t i = 0; i < count; i++) {
        if (stub_off())
            *s[i]->on = 0;
        else
            add(s[i]);
    }
    return !stub_off();
}

void __piano_enter(struct piano_site *s)
{
    hooked = 1;
    add(s);
    enters[s->id]++;
    if (depth < MAX_DEPTH)
        stack[depth++] = s;
    else
        overflow++;
}

void __piano_exit(struct piano_site *s)
{
    hooked = 1;
    add(s);
    exits[s->id]++;
    if (overflow) {
        overflow--;
        return;
    }
    if (depth == 0 || stack[depth - 1] != s) {
        mismatched++;
        return;
    }
    depth--;
}
