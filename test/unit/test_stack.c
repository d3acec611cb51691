/* test_stack.c - the shadow stack and calling contexts of the runtime, driven
 * by calling the hooks directly (runtime.c is compiled into this test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "piano_abi.h"
#include "runtime.h"

static struct piano_site site_a = { 0, 1, "a", "t.c" }, site_b = { 0, 2, "b", "t.c" },
                         site_c = { 0, 3, "c", "t.c" }, site_r = { 0, 4, "r", "t.c" };
static jmp_buf jump;

static struct piano_node *node_of(struct piano_site *s, uint32_t parent_fn)
{
    struct piano_thread *ts = piano_tls;
    struct piano_node *nodes = PIANO_NODES(ts);
    for (uint32_t i = 1; i < ts->n_nodes; i++)
        if (nodes[i].fn == s->id && nodes[nodes[i].parent].fn == parent_fn)
            return &nodes[i];
    return NULL;
}

static __attribute__((noinline)) void b(void)
{
    __piano_enter(&site_b);
    assert_int_equal(piano_tls->depth, 2);
    __piano_exit(&site_b);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void a(void)
{
    __piano_enter(&site_a);
    b();
    b();
    __piano_exit(&site_a);
    __asm__ volatile("" ::: "memory");
}

static void nesting_and_contexts(void **state)
{
    (void)state;
    a();
    struct piano_thread *ts = piano_tls;
    assert_non_null(ts);
    assert_int_equal(ts->depth, 0);
    struct piano_node *na = node_of(&site_a, 0), *nb = node_of(&site_b, site_a.id);
    assert_non_null(na);
    assert_non_null(nb);
    assert_int_equal(na->calls, 1);
    assert_int_equal(nb->calls, 2);
    assert_int_equal(nb->parent, (uint32_t)(na - PIANO_NODES(ts)));   /* b's context is under a's */
    assert_int_equal(ts->frames, 1);                 /* one outermost call: one frame */
}

static __attribute__((noinline)) void c_jumps(void)
{
    __piano_enter(&site_c);
    longjmp(jump, 1);
}

static __attribute__((noinline)) void b_calls_c(void)
{
    __piano_enter(&site_b);
    c_jumps();
    __piano_exit(&site_b);
}

static __attribute__((noinline)) void a_with_setjmp(void)
{
    __piano_enter(&site_a);
    if (!setjmp(jump))
        b_calls_c();
    /* b and c were left by longjmp: a's exit closes them */
    __piano_exit(&site_a);
    __asm__ volatile("" ::: "memory");
}

static void longjmp_closes_abandoned_calls(void **state)
{
    (void)state;
    uint64_t frames = piano_tls ? piano_tls->frames : 0;
    a_with_setjmp();
    struct piano_thread *ts = piano_tls;
    assert_int_equal(ts->depth, 0);
    struct piano_node *nb = node_of(&site_b, site_a.id);
    struct piano_node *nc = node_of(&site_c, site_b.id);
    assert_non_null(nc);
    assert_int_equal(nc->calls, 1);
    assert_int_equal(nb->calls, 3);   /* 2 from the first test, 1 here */
    assert_int_equal(ts->frames, frames + 1);
}

static void unmatched_exit_is_ignored(void **state)
{
    (void)state;
    __piano_exit(&site_c);
    assert_int_equal(piano_tls->depth, 0);
}

static __attribute__((noinline)) void recurse(int n)
{
    __piano_enter(&site_r);
    if (n > 0)
        recurse(n - 1);
    __piano_exit(&site_r);
    __asm__ volatile("" ::: "memory");
}

static void recursion_contexts_are_bounded(void **state)
{
    (void)state;
    recurse(299);   /* deeper than PIANO_CTX_DEPTH: deep calls share a context */
    struct piano_thread *ts = piano_tls;
    assert_int_equal(ts->depth, 0);
    struct piano_node *nodes = PIANO_NODES(ts);
    uint64_t calls = 0, contexts = 0;
    for (uint32_t i = 1; i < ts->n_nodes; i++)
        if (nodes[i].fn == site_r.id) {
            calls += nodes[i].calls;
            contexts++;
        }
    assert_int_equal(calls, 300);
    /* one context per depth up to PIANO_CTX_DEPTH, then one shared by all deeper calls */
    assert_int_equal(contexts, PIANO_CTX_DEPTH + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nesting_and_contexts),
        cmocka_unit_test(longjmp_closes_abandoned_calls),
        cmocka_unit_test(unmatched_exit_is_ignored),
        cmocka_unit_test(recursion_contexts_are_bounded),
    };
    return cmocka_run_group_tests_name("stack", tests, NULL, NULL);
}
