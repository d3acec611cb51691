// A malformed PIANO_FNS fails the compilation with one line naming PIANO_FNS
// and the pattern (clang adds its usual "1 error generated." summary).
// RUN: ! env PIANO_FNS='a,,b' %clang %plugin -c %s -o %t.o 2> %t.err1
// RUN: %FileCheck %s --check-prefix=EMPTY < %t.err1
// RUN: test "$(grep -c PIANO_FNS %t.err1)" = 1 && test ! -e %t.o
// EMPTY: error: piano: PIANO_FNS: malformed pattern '' in 'a,,b' (empty item;
// RUN: ! env PIANO_FNS='!' %clang %plugin -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=BANG
// BANG: error: piano: PIANO_FNS: malformed pattern '!' (expected a pattern after '!')
// RUN: ! env PIANO_FNS='parse,file:' %clang %plugin -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=FILE
// FILE: error: piano: PIANO_FNS: malformed pattern 'file:' in 'parse,file:' (expected a file name after 'file:')
// RUN: ! env PIANO_FNS='=' %clang %plugin -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=EQ
// EQ: error: piano: PIANO_FNS: malformed pattern '=' (expected a name after '=')
// RUN: ! env PIANO_FNS='parse, main' %clang %plugin -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=WS
// WS: error: piano: PIANO_FNS: malformed pattern ' main' in 'parse, main' (whitespace is not allowed;
// RUN: ! env PIANO_FNS="$(printf 'a\001b')" %clang %plugin -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=CTRL
// CTRL: error: piano: PIANO_FNS: malformed pattern 'a\x01b' (control character;
// RUN: ! env PIANO_FNS=',' %clang %plugin -c %s -o %t.o 2>&1 | %FileCheck %s --check-prefix=COMMA
// COMMA: error: piano: PIANO_FNS: malformed pattern '' in ',' (empty item;
// opt fails too.
// RUN: %clang -O0 -S -emit-llvm %s -o %t.ll
// RUN: ! env PIANO_FNS='=' %opt -load-pass-plugin=%pluginpath -passes=piano -disable-output %t.ll 2>&1 | %FileCheck %s --check-prefix=EQ

int main(void) { return 0; }
