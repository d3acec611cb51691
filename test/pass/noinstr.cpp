// __attribute__((no_instrument_function)): never instrumented through
// piano-c++ (it adds cc1's -pg -mfentry, whose "fentry-call" marks clang
// gives every function but those, and PIANO_FENTRY_MARKS=1), neither is a
// lambda written in such a function (clang's own rule for
// -finstrument-functions). What clang builds without a declaration of the
// user's (global initializers, thunks, a namespace-scope lambda, the
// thread_local wrapper) is instrumented as before; no mark is left in the
// output, the LTO bitcode included.
// RUN: env PIANO_FNS='*' PIANO_MIN_SIZE=0 PIANO_VERBOSE=1 %pianocxx -O0 -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=BEFORE
// RUN: %FileCheck %s --check-prefix=NOMARK < %t.ll
// RUN: env PIANO_FNS='*' PIANO_MIN_SIZE=0 PIANO_VERBOSE=1 %pianocxx -O2 -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=BEFORE
// RUN: %FileCheck %s --check-prefix=NOMARK < %t.ll
// BEFORE: instrumented 25 function(s): B::f(int), B::~B(), B::~B(), C::g(int), C::~C(), C::~C(), D::f(int), D::g(int), non-virtual thunk to D::g(int), __cxx_global_var_init, init(), __cxx_global_var_init.1, use(C*), thread-local wrapper routine for tli, $_1::operator()(int) const, main, D::D(), D::~D(), D::~D(), non-virtual thunk to D::~D(), non-virtual thunk to D::~D(), B::B(), C::C(), _GLOBAL__sub_I_noinstr.cpp, __tls_init{{$}}
// NOMARK: __piano_enter
// NOMARK-NOT: fentry-call
// NOMARK-NOT: instrument-function
// After inlining (PIANO_AFTER_INLINING=1, the default when PIANO_FNS is unset).
// RUN: env -u PIANO_FNS PIANO_AFTER_INLINING=1 PIANO_MIN_SIZE=0 PIANO_VERBOSE=1 %pianocxx -O2 -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=AFTER
// RUN: %FileCheck %s --check-prefix=NOMARK < %t.ll
// AFTER: instrumented 17 function(s): B::f(int), B::~B(), B::~B(), C::g(int), C::~C(), C::~C(), D::f(int), D::g(int), non-virtual thunk to D::g(int), use(C*), thread-local wrapper routine for tli, main, D::~D(), D::~D(), non-virtual thunk to D::~D(), non-virtual thunk to D::~D(), thread-local initialization routine for tli{{$}}
// LTO: the bitcode written at compile time holds no mark.
// RUN: env PIANO_FNS='*' PIANO_MIN_SIZE=0 %pianocxx -O2 -flto -c %s -o %t.lto.o && %llvm-dis %t.lto.o -o - | %FileCheck %s --check-prefix=NOMARK
// RUN: env PIANO_FNS='*' PIANO_MIN_SIZE=0 %pianocxx -O2 -flto=thin -c %s -o %t.thin.o && %llvm-dis %t.thin.o -o - | %FileCheck %s --check-prefix=NOMARK
// RUN: env -u PIANO_FNS PIANO_AFTER_INLINING=1 PIANO_MIN_SIZE=0 %pianocxx -O0 -flto=thin -c %s -o %t.thin0.o && %llvm-dis %t.thin0.o -o - | %FileCheck %s --check-prefix=NOMARK
// The same by hand (README, "Without the wrappers").
// RUN: env PIANO_FENTRY_MARKS=1 PIANO_FNS='*' PIANO_MIN_SIZE=0 PIANO_VERBOSE=1 %clangxx -O1 -Xclang -pg -Xclang -mfentry %plugin -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=BEFORE
// RUN: %FileCheck %s --check-prefix=NOMARK < %t.ll
// The program's own -pg -mfentry without PIANO_FENTRY_MARKS: its marks stay
// (and quiet is instrumented, as before).
// RUN: env PIANO_FNS='*' PIANO_MIN_SIZE=0 PIANO_VERBOSE=1 %clangxx -O1 -Xclang -pg -Xclang -mfentry %plugin -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=OWN
// RUN: %FileCheck %s --check-prefix=OWNMARK < %t.ll
// OWN: instrumented 27 function(s):
// OWN-SAME: quiet(int)
// OWNMARK: "fentry-call"="true"
// The program's own -finstrument-functions-after-inlining: its hooks are
// still called (not from quiet), piano's not in quiet.
// RUN: env PIANO_FNS='*' PIANO_MIN_SIZE=0 PIANO_VERBOSE=1 %pianocxx -O2 -finstrument-functions-after-inlining -c %s -o %t.cyg.o 2>&1 | %FileCheck %s --check-prefix=BEFORE
// RUN: nm %t.cyg.o | %FileCheck %s --check-prefix=CYG
// CYG-NOT: __fentry__
// CYG: U __cyg_profile_func_enter
// CYG-NOT: __fentry__
struct B { virtual int f(int); virtual ~B(); };
struct C { virtual int g(int); virtual ~C(); };
struct D : B, C { int f(int) override; int g(int) override; };
int B::f(int a) { return a; }
B::~B() {}
int C::g(int a) { return a + 1; }
C::~C() {}
int D::f(int a) { return a * 2; }
int D::g(int a) { return a * 3; }
static int init() { return 4; }
int x = init();
thread_local int tli = init();
__attribute__((no_instrument_function)) int quiet(int v) {
  auto inner = [](int a) { return a * 5; };
  return inner(v) + 1;
}
auto lam = [](int a) { return a + quiet(a); };
int use(C *c) { return c->g(tli) + lam(x); }
int main() { D d; return use(&d) > 0 ? 0 : 1; }
