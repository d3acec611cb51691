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
    assert_int_equal(m(s, "parse_item", ""), PIANO_SEL_BROAD);
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
    assert_int_equal(m(s, "app::Parser::parseAll", ""), PIANO_SEL_BROAD);
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
                     PIANO_SEL_BROAD);
    assert_int_equal(piano_select_match_fn(s, "std::vector<int>::push_back",
                                           "/usr/include/c++/12/vector", 1),
                     PIANO_SEL_BROAD);
    assert_int_equal(m(s, "", ""), PIANO_SEL_BROAD);
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
    assert_int_equal(m(s, "f", "/x/main.c"), PIANO_SEL_BROAD);
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
    assert_int_equal(m(s, "do_resolve", "a.c"), PIANO_SEL_BROAD);
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


/* Issue 15, item 3: a pattern sees the function's own qualified name, its
 * template arguments removed. */
static void test_strip_targs(void **state)
{
    (void)state;
    char out[256];
    static const char *const cases[][2] = {
        {"leveldb::SkipList<char const*, leveldb::MemTable::KeyComparator>::Insert",
         "leveldb::SkipList::Insert"},
        {"std::atomic<leveldb::SkipList<char const*, Cmp>::Node*>::load",
         "std::atomic::load"},
        {"std::deque<leveldb::DBImpl::Writer*, std::allocator<leveldb::DBImpl::Writer*> >::push_back",
         "std::deque::push_back"},
        {"app::free_fn<int>", "app::free_fn"},
        {"a::B<int, C<D<E> > >::f<F>", "a::B::f"},
        {"Vec::operator<<", "Vec::operator<<"},
        {"Vec::operator<", "Vec::operator<"},
        {"Vec::operator<=>", "Vec::operator<=>"},
        {"Vec::operator->", "Vec::operator->"},
        {"Vec::operator>><int>", "Vec::operator>>"},
        {"Box<int>::operator<", "Box::operator<"},
        {"Arr<(3>2)>::size", "Arr::size"},
        {"plain_c_name", "plain_c_name"},
        {"cooperator<int>::f", "cooperator::f"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        piano_select_strip_targs(cases[i][0], out, sizeof out);
        if (strcmp(out, cases[i][1]) != 0)
            fail_msg("strip '%s': got '%s', expected '%s'", cases[i][0], out,
                     cases[i][1]);
    }
    /* Small buffers are cut, never overrun. */
    char small[5];
    piano_select_strip_targs("abcdefgh<int>", small, sizeof small);
    assert_string_equal(small, "abcd");
}

static void test_not_inside_template_args(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("SkipList,DBImpl::Write");
    assert_int_equal(m(s, "leveldb::SkipList<char const*, leveldb::MemTable::KeyComparator>::Insert", ""),
                     PIANO_SEL_BROAD);
    assert_int_equal(m(s, "std::atomic<leveldb::SkipList<char const*, Cmp>::Node*>::load", ""),
                     PIANO_SEL_NO);
    assert_int_equal(m(s, "std::deque<leveldb::DBImpl::Writer*, std::allocator<leveldb::DBImpl::Writer*> >::push_back", ""),
                     PIANO_SEL_NO);
    assert_int_equal(m(s, "leveldb::DBImpl::Write", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "leveldb::DBImpl::WriteLevel0Table", ""), PIANO_SEL_BROAD);
    piano_select_free(s);
    /* A pattern with '<' sees the template arguments. */
    s = parse_ok("SkipList<char");
    assert_int_equal(m(s, "leveldb::SkipList<char const*, Cmp>::Insert", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "leveldb::SkipList<int, Cmp>::Insert", ""), PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("=app::free_fn,=app::tpl<int>");
    assert_int_equal(m(s, "app::free_fn<int>", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "app::tpl<int>", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "app::tpl<long>", ""), PIANO_SEL_NO);
    piano_select_free(s);
    /* Excludes see the same names. */
    s = parse_ok("*,!SkipList");
    assert_int_equal(m(s, "std::atomic<app::SkipList<int>::Node*>::load", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "app::SkipList<int>::Insert", ""), PIANO_SEL_NO);
    piano_select_free(s);
}

/* Issue 15, item 3: system headers only by a pattern that names them. */
static void test_system_explicit(void **state)
{
    (void)state;
    const char *vec = "/usr/include/c++/12/bits/stl_vector.h";
    const char *pb = "std::vector<app::Item, std::allocator<app::Item> >::push_back";
    struct piano_select *s = parse_ok(NULL);
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_NO);
    assert_int_equal(piano_select_match_fn(s, "app::f", "/src/a.cc", 0), PIANO_SEL_DEFAULT);
    piano_select_free(s);
    s = parse_ok("!nothing");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("push_back,vector,Item");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_NO);
    assert_int_equal(piano_select_match_fn(s, "app::Item::push_back", "/src/a.cc", 0),
                     PIANO_SEL_YES);
    piano_select_free(s);
    s = parse_ok("std::vector");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_BROAD);
    piano_select_free(s);
    s = parse_ok("std::vector::push_back");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_YES);
    piano_select_free(s);
    s = parse_ok("=std::vector::push_back");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_YES);
    piano_select_free(s);
    s = parse_ok("file:bits/stl_vector.h");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_YES);
    piano_select_free(s);
    s = parse_ok("file:/usr/include/c++/");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_YES);
    piano_select_free(s);
    s = parse_ok("__gnu_cxx::");
    assert_int_equal(piano_select_match_fn(s, "__gnu_cxx::new_allocator<int>::allocate",
                                           "/usr/include/c++/12/ext/new_allocator.h", 1),
                     PIANO_SEL_BROAD);
    piano_select_free(s);
    /* '*' takes everything; an exclude removes system code too. */
    s = parse_ok("*,!push_back");
    assert_int_equal(piano_select_match_fn(s, pb, vec, 1), PIANO_SEL_NO);
    assert_int_equal(piano_select_match_fn(s, "std::vector<int>::size", vec, 1), PIANO_SEL_BROAD);
    piano_select_free(s);
}

/* Issue 15, item 4: which matches name a function (never left out for its
 * size) and which are broad. */
/* A '*' in a name pattern stands for any characters: prefixes, suffixes,
 * middles, matched against the whole name or its last '::' parts. */
static void test_glob(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("ngx_http_*,*_handler,Parser::*,a*b*c");
    assert_int_equal(m(s, "ngx_http_process_request", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "ngx_http_", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "my_ngx_http_x", ""), PIANO_SEL_NO);   /* anchored, not a substring */
    assert_int_equal(m(s, "ngx_event_accept", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "ngx_epoll_handler", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "ngx_handler_init", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "app::Parser::parse", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "app::Lexer::next", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "axxbyyc", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "axxbyycd", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "abcbc", ""), PIANO_SEL_BROAD);
    piano_select_free(s);
    /* excluded, and system code only when the pattern names it */
    s = parse_ok("*,!ngx_log_*");
    assert_int_equal(m(s, "ngx_log_error_core", ""), PIANO_SEL_NO);
    assert_int_equal(m(s, "ngx_palloc", ""), PIANO_SEL_BROAD);
    piano_select_free(s);
    s = parse_ok("*push_back");
    assert_int_equal(piano_select_match_fn(s, "std::vector<int>::push_back", "/usr/include/c++/12/vector", 1),
                     PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("std::*push_back");
    assert_int_equal(piano_select_match_fn(s, "std::vector<int>::push_back", "/usr/include/c++/12/vector", 1),
                     PIANO_SEL_BROAD);
    piano_select_free(s);
}

static void test_named_or_broad(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("MEM_read64,=ZSTD_count,read");
    assert_int_equal(m(s, "MEM_read64", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "ZSTD_count", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "MEM_readLE32", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "io::read", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "io::xread", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "read::io", ""), PIANO_SEL_BROAD);
    piano_select_free(s);
    s = parse_ok("SkipList::Insert");
    assert_int_equal(m(s, "leveldb::SkipList<K, C>::Insert", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "leveldb::SkipList<K, C>::InsertAll", ""), PIANO_SEL_BROAD);
    assert_int_equal(m(s, "leveldb::MySkipList<K>::Insert", ""), PIANO_SEL_BROAD);
    piano_select_free(s);
    s = parse_ok("file:lexer.c,file:src/");
    assert_int_equal(m(s, "tiny", "/x/lexer.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "tiny", "/x/src/a.c"), PIANO_SEL_YES);
    piano_select_free(s);
    /* The strongest include wins. */
    s = parse_ok("*,=main");
    assert_int_equal(m(s, "main", ""), PIANO_SEL_YES);
    assert_int_equal(m(s, "f", ""), PIANO_SEL_BROAD);
    piano_select_free(s);
}

/* Issue 15, item 5: a file pattern ending in '/' is a folder. */
static void test_file_folder(void **state)
{
    (void)state;
    struct piano_select *s = parse_ok("file:src/net/");
    assert_int_equal(m(s, "f", "/home/x/src/net/a.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "f", "src/net/sub/b.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "f", "/home/x/src/network/c.c"), PIANO_SEL_NO);
    assert_int_equal(m(s, "f", "/home/x/mysrc/net/c.c"), PIANO_SEL_NO);
    assert_int_equal(m(s, "f", "/home/x/src/net"), PIANO_SEL_NO);
    assert_int_equal(m(s, "f", ""), PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("file:deps/jemalloc/");
    assert_int_equal(m(s, "je_malloc", "/r/deps/jemalloc/src/jemalloc.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "f", "/r/src/server.c"), PIANO_SEL_NO);
    piano_select_free(s);
    s = parse_ok("file:./src/");
    assert_int_equal(m(s, "f", "/p/src/a.c"), PIANO_SEL_YES);
    piano_select_free(s);
    /* Absolute: from the start only. */
    s = parse_ok("file:/home/x/");
    assert_int_equal(m(s, "f", "/home/x/a.c"), PIANO_SEL_YES);
    assert_int_equal(m(s, "f", "/other/home/x/a.c"), PIANO_SEL_NO);
    piano_select_free(s);
    /* Excluding a folder. */
    s = parse_ok("!file:third_party/");
    assert_int_equal(m(s, "f", "/p/third_party/z/a.c"), PIANO_SEL_NO);
    assert_int_equal(m(s, "f", "/p/src/a.c"), PIANO_SEL_DEFAULT);
    assert_int_equal(m(s, "f", "/p/not_third_party/a.c"), PIANO_SEL_DEFAULT);
    piano_select_free(s);
    s = parse_ok("*,!file:third_party/");
    assert_int_equal(m(s, "f", "/p/third_party/a.c"), PIANO_SEL_NO);
    assert_int_equal(m(s, "f", "/p/src/a.c"), PIANO_SEL_BROAD);
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
    expect_malformed("parse:resolve", "'parse:resolve' (a single ':' is in no function's name");
    expect_malformed("a,Ns::f:g", "'Ns::f:g' in 'a,Ns::f:g' (a single ':'");
    expect_malformed("=f:", "'=f:' (a single ':'");
    expect_malformed("!x:*", "'!x:*' (a single ':'");
    expect_malformed(":::f", "':::f' (a single ':'");
    /* colons in pairs, a file's, an Objective-C method's: patterns */
    piano_select_free(parse_ok("::f,Ns::*,file:a:b.c,*[C*a:b:]"));
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
        cmocka_unit_test(test_glob),
        cmocka_unit_test(test_excludes_win),
        cmocka_unit_test(test_only_excludes),
        cmocka_unit_test(test_several_includes),
        cmocka_unit_test(test_operator_names),
        cmocka_unit_test(test_strip_targs),
        cmocka_unit_test(test_not_inside_template_args),
        cmocka_unit_test(test_system_explicit),
        cmocka_unit_test(test_named_or_broad),
        cmocka_unit_test(test_file_folder),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_null_err_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
