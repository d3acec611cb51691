// Issue 15, item 3: a pattern sees a function's own qualified name without
// template arguments, and system headers only when named on purpose.
// "SkipList" takes the members of app::SkipList<...>, not the std::atomic /
// std::vector members instantiated with it, nor app::Holder<SkipList<...>>.
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=SkipList %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SKIP
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=SkipList %clangxx -O2 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SKIP
// SKIP: instrumented 3 function(s): app::SkipList<int>::Insert(int), app::SkipList<int>::Find(int) const, app::SkipList<int>::SkipList(){{$}}
// A pattern with '<' sees the template arguments (Holder's members too).
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='SkipList<int>::' %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ARGS
// ARGS: instrumented 3 function(s): app::SkipList<int>::Insert(int), app::SkipList<int>::Find(int) const, app::SkipList<int>::SkipList(){{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS='<app::SkipList' %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=INARGS
// INARGS: instrumented 2 function(s): app::Holder<app::SkipList<int>{{ ?}}>::Holder(), app::Holder<app::SkipList<int>{{ ?}}>::Get(){{$}}
// System functions: only by std::..., =name, file: or '*'.
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=push_back %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NOSYS
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=push_back %clangxx -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NOSYS
// NOSYS: instrumented 0 function(s)
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=std::vector::push_back %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SYS
// RUN: env PIANO_VERBOSE=1 PIANO_FNS==std::vector::push_back %clangxx -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SYS
// SYS: instrumented 1 function(s): std::vector<app::SkipList<int>*, std::allocator<app::SkipList<int>*>{{ ?}}>::push_back(app::SkipList<int>*&&){{$}}
// RUN: env PIANO_VERBOSE=1 PIANO_FNS=file:bits/stl_vector.h %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SYSFILE
// SYSFILE: instrumented {{[1-9][0-9]*}} function(s): {{.*}}std::vector<app::SkipList<int>*, std::allocator<app::SkipList<int>*>{{ ?}}>::push_back(app::SkipList<int>*&&)
// A folder listed in PIANO_SYSTEM_DIRS is a system folder: this test's own.
// RUN: env PIANO_VERBOSE=1 PIANO_SYSTEM_DIRS=/nowhere:%S %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=NOSYS
// Unset: nothing from system headers, with or without -g.
// RUN: env PIANO_VERBOSE=1 %clangxx -O0 -g %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=UNSET
// RUN: env PIANO_VERBOSE=1 %clangxx -O0 %plugin -S -emit-llvm %s -o /dev/null 2>&1 | %FileCheck %s --check-prefix=UNSET
// UNSET: instrumented 6 function(s): main, app::Holder<app::SkipList<int>{{ ?}}>::Holder(), app::Holder<app::SkipList<int>{{ ?}}>::Get(), app::SkipList<int>::Insert(int), app::SkipList<int>::Find(int) const, app::SkipList<int>::SkipList(){{$}}
#include <atomic>
#include <vector>
namespace app {
template <class K> struct SkipList {
  std::atomic<SkipList *> next{nullptr};
  K key{};
  void Insert(K k) {
    key = k;
    next.store(this);
  }
  bool Find(K k) const { return next.load() && key == k; }
};
template <class T> struct Holder {
  T item;
  T *Get() { return &item; }
};
} // namespace app
int main() {
  app::Holder<app::SkipList<int>> h;
  std::vector<app::SkipList<int> *> v;
  v.push_back(h.Get());
  v[0]->Insert(3);
  return v[0]->Find(3) ? 0 : 1;
}
