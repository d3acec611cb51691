// C++ names: patterns see the qualified name without parameters; the site
// name (what reports show) is the full demangled signature.
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=Parser::parse %clangxx -O0 %plugin -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=QUAL
// QUAL: instrumented 3 function(s): app::Parser::parse(int), app::Parser::parse(double), app::Parser::parseAll(){{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS==app::Parser::parse %clangxx -O0 %plugin -S -emit-llvm %s -o %t.ll 2>&1 | %FileCheck %s --check-prefix=EXACT
// EXACT: instrumented 2 function(s): app::Parser::parse(int), app::Parser::parse(double){{$}}
// RUN: %FileCheck %s --check-prefix=IR < %t.ll
// IR-DAG: @__piano_names = {{.*}}c"app::Parser::parse(int)\00app::Parser::parse\000\00app::Parser::parse(double)\00app::Parser::parse\000\00"
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='=main,app::free_fn' %clangxx -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=MAIN
// MAIN: instrumented 2 function(s): main, int app::free_fn<int>(int){{$}}
// Templates and lambdas.
// RUN: env PIANO_VERBOSE=1 %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=DEFAULT
// DEFAULT: instrumented 6 function(s): app::Parser::parse(int), app::Parser::parse(double), app::Parser::parseAll(), main, int app::free_fn<int>(int), main::$_0::operator()(int) const{{$}}

namespace app {
struct Parser {
  int parse(int x);
  int parse(double x);
  int parseAll();
};
int Parser::parse(int x) { return x; }
int Parser::parse(double x) { return (int)x; }
int Parser::parseAll() { return parse(1) + parse(2.0); }
template <class T> T free_fn(T x) { return x + 1; }
} // namespace app

int main() {
  app::Parser p;
  auto f = [](int v) { return v * 2; };
  return p.parseAll() + app::free_fn(1) + f(1) - 7;
}
