/*
 * test_select.c - cmocka unit tests of the PIANO_FNS matcher (pass/select.c):
 * every pattern form, excludes, the default set, malformed patterns.
 * Built by test/pass/CMakeLists.txt; run: ctest -R test_select
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "select.h"

static struct piano_select *parse_ok(const char *spec)
{
    struct piano_select *s = NULL;
    char err[512];
    int rc = piano_select_parse(spec, &s, err, sizeof err);
    if (rc != 0)
        fail_msg("unexpected parse error for '%s': %s", spec, err);
    assert_non_null(s);
    return s;
}

static int m(struct piano_select *s, const char *name, const char *file)
{
    return (int)piano_select_match(s, name, file);
}

static void test_default_unset_and_empty(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok(NULL);
    assert_true(piano_select_is_default(s));
    assert_int_equal(m(s, "parse", "/a/b.c"), PIANO_SEL_DEFAULT);
    piano_select_free(s);
    s = parse_ok("");
    assert_true(piano_select_is_default(s));
    assert_int_equal(m(s, "anything", ""), PIANO_SEL_DEFAULT);
    piano_select_free(s);
}

static void test_substring(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("parse");
    assert_false(piano_select_is_default(s));
    assert_int_equal(m(s, "parse", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "parse_item", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "app::Parser::parse", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "Parse", ""), PIANO_SEL_NO); /* case-sensitive */
    assert_int_equal(m(s, "resolve", ""), PIANO_SEL_NO);
    piano_select_free(s);
}

static void test_qualified(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("Parser::parse");
    assert_int_equal(m(s, "app::Parser::parse", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "app::Parser::parseAll", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "parse", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "app::Lexer::parse", ""), PIANO_SEL_NO);
    piano_select_free(s);
}

static void test_exact(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("=main");
    assert_int_equal(m(s, "main", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "main2", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "domain", ""), PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("=app::Parser::parse");
    assert_int_equal(m(s, "app::Parser::parse", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "app::Parser::parseAll", ""), PIANO_SEL_NO);
    piano_select_free(s);
}

static void test_file(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("file:lexer.c");
    assert_int_equal(m(s, "lex", "/src/lexer.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "lex", "lexer.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "lex", "/src/mylexer.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "lex", "/src/lexer.cpp"), PIANO_SEL_NO);
    assert_int_equal(m(s, "lex", "/src/lexer.c/x.c"), PIANO_SEL_NO);
    assert_int_equal(m(s, "lex", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "lexer.c", "/src/parser.c"), PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("file:src/lexer.c");
    assert_int_equal(m(s, "lex", "/home/u/src/lexer.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "lex", "/home/u/lib/lexer.c"), PIANO_SEL_NO);
    piano_select_free(s);
}

static void test_star(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("*");
    assert_false(piano_select_is_default(s));
    assert_int_equal(m(s, "std::vector<int>::push_back", "/usr/include/c++/12/vector"),
                     PIANO_SEL_YES);
    assert_int_equal(m(s, "", ""), PIANO_SEL_YES);
    piano_select_free(s);
}

static void test_excludes_win(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("parse,!parse_item");
    assert_int_equal(m(s, "parse", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "parse_item", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "resolve", ""), PIANO_SEL_NO);
    piano_select_free(s);
    /* Order does not matter. */
    s = parse_ok("!parse_item,parse");
    assert_int_equal(m(s, "parse", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "parse_item", ""), PIANO_SEL_NO);
    piano_select_free(s);
    /* An include that is also excluded. */
    s = parse_ok("=main,!=main");
    assert_int_equal(m(s, "main", ""), PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("*,!file:gen.c,!=main");
    assert_int_equal(m(s, "f", "/x/gen.c"), PIANO_SEL_NO);
    assert_int_equal(m(s, "main", "/x/main.c"), PIANO_SEL_NO);
    assert_int_equal(m(s, "f", "/x/main.c"), PIANO_SEL_YES);
    piano_select_free(s);
}

static void test_only_excludes(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("!parse");
    assert_true(piano_select_is_default(s));
    assert_int_equal(m(s, "parse_item", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "resolve", ""), PIANO_SEL_DEFAULT);
    piano_select_free(s);
    s = parse_ok("!*");
    assert_int_equal(m(s, "resolve", ""), PIANO_SEL_NO);
    piano_select_free(s);
}

static void test_several_includes(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("=main,resolve,file:lexer.c");
    assert_int_equal(m(s, "main", "a.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "do_resolve", "a.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "lex", "lexer.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "parse", "a.c"), PIANO_SEL_NO);
    piano_select_free(s);
}

static void test_operator_names(void **state)
{
    (void)state;
    /* C++ names may hold '*', '=', '!' after the first character. */
    struct piano_select *s = parse_ok("operator*,operator==,operator!");
    assert_int_equal(m(s, "Vec::operator*", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "Vec::operator==", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "Vec::operator!", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "Vec::operator+", ""), PIANO_SEL_NO);
    piano_select_free(s);
}

static void expect_malformed(const char *spec, const char *needle)
{
    struct piano_select *s = (struct piano_select *)1;
    char err[512];
    int rc = piano_select_parse(spec, &s, err, sizeof err);
    if (rc == 0)
        fail_msg("'%s' should be malformed", spec);
    assert_null(s);
    assert_non_null(strstr(err, "PIANO_FNS: malformed pattern "));
    if (!strstr(err, needle))
        fail_msg("message for '%s' lacks \"%s\": %s", spec, needle, err);
    assert_null(strchr(err, '\n'));
}

static void test_malformed(void **state)
{
    (void)state;
    expect_malformed("a,,b", "'' in 'a,,b' (empty item");
    expect_malformed(",", "empty item");
    expect_malformed("a,", "'' in 'a,'");
    expect_malformed(",a", "'' in ',a'");
    expect_malformed("!", "'!' (expected a pattern after '!')");
    expect_malformed("a,!", "'!' in 'a,!'");
    expect_malformed("!!a", "'!!a' ('!' may appear only once)");
    expect_malformed("file:", "'file:' (expected a file name after 'file:')");
    expect_malformed("!file:", "'!file:'");
    expect_malformed("=", "'=' (expected a name after '=')");
    expect_malformed("!=", "'!='");
    expect_malformed("a b", "'a b' (whitespace is not allowed");
    expect_malformed(" a", "whitespace");
    expect_malformed("a ", "whitespace");
    expect_malformed("a\tb", "'a\\x09b'");
    expect_malformed("parse, main", "' main' in 'parse, main'");
    expect_malformed("a\001b", "'a\\x01b' (control character");
    expect_malformed("a\177", "control character");
}

static void test_null_err_buffer(void **state)
{
    (void)state;
    struct piano_select *s = NULL;
    assert_int_equal(piano_select_parse("=", &s, NULL, 0), -1);
    assert_null(s);
    char small[8];
    assert_int_equal(piano_select_parse("a,,b", &s, small, sizeof small), -1);
    assert_int_equal(strlen(small), sizeof small - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_unset_and_empty),
        cmocka_unit_test(test_substring),
        cmocka_unit_test(test_qualified),
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_star),
        cmocka_unit_test(test_excludes_win),
        cmocka_unit_test(test_only_excludes),
        cmocka_unit_test(test_several_includes),
        cmocka_unit_test(test_operator_names),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_null_err_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
