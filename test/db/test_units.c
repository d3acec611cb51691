/* test_units.c - piano-db's units, escaping and significance test (cmocka). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "piano_db.h"

#define NOFIX ((call_fix){ 0, 1 })

static void test_units(void **state)
{
    (void)state;
    char b[64];
    fmt_ns(b, sizeof b, 850);
    assert_string_equal(b, "850.00ns");
    fmt_ns(b, sizeof b, 2980000);
    assert_string_equal(b, "2.98ms");
    fmt_ns(b, sizeof b, 341210000);
    assert_string_equal(b, "341.21ms");
    fmt_ns(b, sizeof b, 1500);
    assert_string_equal(b, "1.50us");
    fmt_ns(b, sizeof b, 2.5e9);
    assert_string_equal(b, "2.50s");
    fmt_delta_ns(b, sizeof b, -142770000);
    assert_string_equal(b, "-142.77ms");
    fmt_delta_ns(b, sizeof b, 0);
    assert_string_equal(b, "+0.00ns");
    fmt_bytes(b, sizeof b, 1023);
    assert_string_equal(b, "1023B");
    fmt_bytes(b, sizeof b, 64000);
    assert_string_equal(b, "62.5KB");
    fmt_bytes(b, sizeof b, 3 * 1024 * 1024 + 1024 * 1024 / 2);
    assert_string_equal(b, "3.5MB");
    fmt_cut(b, sizeof b, "abcdefghij", 6);
    assert_string_equal(b, "abc...");
    fmt_cut(b, sizeof b, "h\xc3\xa9llo", 5);
    assert_string_equal(b, "h\xc3\xa9llo");
    assert_int_equal(utf8_width("h\xc3\xa9llo \xe2\x9c\x93"), 7);
}

static char *capture_json(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_str(f, s);
    fclose(f);
    return buf;
}

static void test_json(void **state)
{
    (void)state;
    char *s = capture_json("a\"b\\c\nd\x01 \xc3\xa9 \xff");
    assert_string_equal(s, "\"a\\\"b\\\\c\\nd\\u0001 \xc3\xa9 \\ufffd\"");
    free(s);
}

/* xorshift64*: reproducible draws. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return ((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

/* n log-normal draws (median m, sigma s) binned into a sparse histogram. */
static size_t draw(hbin *out, int n, double m, double s)
{
    static uint64_t dense[PIANO_HIST_BUCKETS];
    memset(dense, 0, sizeof dense);
    for (int i = 0; i < n; i++) {
        double u = uniform(), v = uniform();
        if (u < 1e-300)
            u = 1e-300;
        double g = sqrt(-2 * log(u)) * cos(2 * M_PI * v);
        dense[piano_hist_bucket((uint64_t)llround(m * exp(s * g)))]++;
    }
    size_t k = 0;
    for (unsigned b = 0; b < PIANO_HIST_BUCKETS; b++)
        if (dense[b])
            out[k++] = (hbin){(uint16_t)b, dense[b]};
    return k;
}

static hbin ha[PIANO_HIST_BUCKETS], hb[PIANO_HIST_BUCKETS];

/* Same distribution: almost never significant (alpha 0.001 plus a 2% median floor). */
static void test_same_distribution(void **state)
{
    (void)state;
    int flagged = 0;
    for (int trial = 0; trial < 200; trial++) {
        int n = trial % 2 ? 500 : 20000;
        size_t na = draw(ha, n, 10000, 0.3), nb = draw(hb, n, 10000, 0.3);
        sig_result r = sig_mann_whitney(ha, na, 1.0, NOFIX, hb, nb, 1.0, NOFIX);
        assert_true(r.valid);
        flagged += r.significant;
    }
    assert_true(flagged <= 1);
}

/* A known 10% shift is flagged, in the right direction, every time. */
static void test_known_shift(void **state)
{
    (void)state;
    for (int trial = 0; trial < 50; trial++) {
        size_t na = draw(ha, 5000, 10000, 0.3), nb = draw(hb, 5000, 11000, 0.3);
        sig_result r = sig_mann_whitney(ha, na, 1.0, NOFIX, hb, nb, 1.0, NOFIX);
        assert_true(r.significant);
        assert_true(r.z > 0);
        assert_true(r.shift > 0.05 && r.shift < 0.15);
        r = sig_mann_whitney(hb, nb, 1.0, NOFIX, ha, na, 1.0, NOFIX);
        assert_true(r.significant);
        assert_true(r.z < 0);
    }
}

/* Different clock calibrations: the same ns distribution in ticks of 0.5 ns and of 1 ns. */
static void test_calibration(void **state)
{
    (void)state;
    size_t na = draw(ha, 20000, 20000, 0.3), nb = draw(hb, 20000, 10000, 0.3);
    sig_result r = sig_mann_whitney(ha, na, 0.5, NOFIX, hb, nb, 1.0, NOFIX);
    assert_false(r.significant);
    assert_true(fabs(r.shift) < 0.02);
}

/* Tiny samples and all-tied samples never divide by zero. */
static void test_degenerate(void **state)
{
    (void)state;
    hbin a[] = {{10, 5}}, b[] = {{10, 7}};
    sig_result r = sig_mann_whitney(a, 1, 1.0, NOFIX, b, 1, 1.0, NOFIX);
    assert_true(r.valid);
    assert_false(r.significant);
    assert_true(r.p_value == 1.0);
    r = sig_mann_whitney(a, 0, 1.0, NOFIX, b, 1, 1.0, NOFIX);
    assert_false(r.valid);
    hbin c[] = {{20, 1}}, d[] = {{40, 1}};
    r = sig_mann_whitney(c, 1, 1.0, NOFIX, d, 1, 1.0, NOFIX);
    assert_false(r.significant);
}

/* The per-call overhead correction: uncorrected is the identity; a call is
 * shifted by the average overhead of the function's children, but keeps at
 * least the function's corrected share of its time; never below 0. */
static void test_call_fix(void **state)
{
    (void)state;
    assert_true(call_fix_ns(1234.0, NOFIX) == 1234.0);
    /* children spread evenly (9 a call, 10 ns each): the shift holds */
    call_fix even = { 90, 0.946 };
    assert_true(fabs(call_fix_ns(5024, even) - 4934) < 1e-9);
    /* a dispatch loop: 274 children a call on average, all under one call;
     * the other calls (30 ns) keep 63% instead of dropping to 0 */
    call_fix skewed = { 2740, 0.63 };
    assert_true(fabs(call_fix_ns(30, skewed) - 18.9) < 1e-9);
    assert_true(fabs(call_fix_ns(1e6, skewed) - (1e6 - 2740)) < 1e-9);
    /* all of the function's self time was overhead */
    assert_true(call_fix_ns(50, (call_fix){ 100, 0 }) == 0);
}

/* A C++ name without its return type, as c++filt shows a non-template function. */
static void test_name_without_return(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"main", "main"},
        {"ZSTD_highbit32 (bits.h:30)", "ZSTD_highbit32 (bits.h:30)"},
        {"ns::f(int)", "ns::f(int)"},
        {"char const* ns::f<char>(char const*)", "ns::f<char>(char const*)"},
        {"std::vector<int, std::allocator<int> > ns::g<int>(int) const", "ns::g<int>(int) const"},
        {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > f<int>(int) (a.cc:3)",
         "f<int>(int) (a.cc:3)"},
        {"(anonymous namespace)::h(int)", "(anonymous namespace)::h(int)"},
        {"ns::S::operator char const*() const", "ns::S::operator char const*() const"},
        {"ns::S::operator std::basic_string<char> const&<int>() const", "ns::S::operator std::basic_string<char> const&<int>() const"},
        {"void* operator new<Pool>(unsigned long, Pool&)", "operator new<Pool>(unsigned long, Pool&)"},
        {"bool ns::operator< <int>(ns::T<int> const&, ns::T<int> const&)", "ns::operator< <int>(ns::T<int> const&, ns::T<int> const&)"},
        {"decltype (({parm#1}.begin)()) std::begin<V>(V&)", "std::begin<V>(V&)"},
        {"auto ns::f<int>(int)::{lambda(int)#1}::operator()<int>(int) const",
         "ns::f<int>(int)::{lambda(int)#1}::operator()<int>(int) const"},
        {"std::string foo[abi:cxx11]<int>(int)", "foo[abi:cxx11]<int>(int)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = name_without_return(cases[i][0]);
        assert_string_equal(got, cases[i][1]);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_same_distribution),
        cmocka_unit_test(test_known_shift),
        cmocka_unit_test(test_calibration),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_call_fix),
        cmocka_unit_test(test_name_without_return),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
