//===- PianoPass.cpp - piano's function entry/exit instrumentation --------===//
//
// PianoPass.so: a new-pass-manager plugin that instruments the functions
// chosen by PIANO_FNS (see pass/select.h) with calls into the piano runtime
// (rt/, libpiano_rt.so), following rt/piano_abi.h: __piano_enter(&site) at
// entry, __piano_exit(&site) at every exit, and a module constructor that
// registers the module's sites (Instrument.cpp says which IR exactly).
//
// How to run it:
//   clang -fpass-plugin=build/lib/PianoPass.so -c foo.c     (any -O level,
//                                                             also -flto)
//   opt -load-pass-plugin=build/lib/PianoPass.so -passes=piano foo.ll
//   PIANO_FNS=parse,!parse_item PIANO_VERBOSE=1 clang -fpass-plugin=... ...
// or simply use the piano-cc / piano-c++ wrappers (tools/cc/).
//
// This file holds the pass's steps; PianoPass.h says where each is defined.
//
//===----------------------------------------------------------------------===//

#include "PianoPass.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace piano {
namespace {

// PIANO_VERBOSE=1: one line to stderr, written at once,
//   piano: SOURCE: VERB N function(s)WHY: a, b, c
// (without the list when there is none).
void reportFns(const Module &M, StringRef Verb, const std::vector<Chosen> &Fns,
               const Twine &Why) {
  std::string Msg;
  raw_string_ostream OS(Msg);
  OS << "piano: " << M.getSourceFileName() << ": " << Verb << " " << Fns.size()
     << " function(s)" << Why;
  for (size_t I = 0; I < Fns.size(); ++I)
    OS << (I ? ", " : ": ") << Fns[I].Names.Display;
  OS << "\n";
  OS.flush();
  errs() << Msg;
}

} // namespace

bool PianoPass::instrumentModule(Module &M) {
  Options Opts;
  if (!readOptions(M.getContext(), Opts))
    return false;
  Opts.Stage = Stage;
  Selection S = selectFunctions(M, Opts);
  recordSelection(M, Opts);
  std::vector<Chosen> Listed = S.Fns;
  Listed.insert(Listed.end(), S.Coros.begin(), S.Coros.end());
  recordFunctions(M, Listed);
  writeSummary(M, Opts, S);
  if (Opts.Verbose && !S.Small.empty())
    reportFns(M, "left out", S.Small,
              " smaller than PIANO_MIN_SIZE=" + Twine(Opts.MinSize));
  if (!S.Fns.empty() || !S.Coros.empty())
    instrumentFunctions(M, S.Fns, GuardLater, S.Coros);
  if (Opts.Verbose)
    reportFns(M, "instrumented", S.Fns, "");
  if (Opts.Verbose && !S.Coros.empty())
    reportFns(M, "instrumented", S.Coros,
              " (C++20 coroutines: each piece once split: the ramp, .resume, "
              ".destroy, .cleanup)");
  return !S.Fns.empty() || !S.Coros.empty();
}

} // namespace piano
