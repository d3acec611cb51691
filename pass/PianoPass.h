//===- PianoPass.h - what the parts of PianoPass.so share -------*- C++ -*-===//
//
// PianoPass.so is made of:
//   PianoPass.cpp  the pass: its steps, in the order it runs them
//   Selection.cpp  which functions it instruments (PIANO_FNS, PIANO_MIN_SIZE),
//                  and what it records of that choice (.piano.sel, PIANO_SUMMARY)
//   Instrument.cpp the IR it emits for them (rt/piano_abi.h)
//   Plugin.cpp     how clang / opt load it
// and of select.c / summary.c (the piano_selection library).
//
//===----------------------------------------------------------------------===//

#ifndef PIANO_PASS_H
#define PIANO_PASS_H

#include "select.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Module;
class Type;
class LLVMContext;
} // namespace llvm

namespace piano {

// Removes the marks of no_instrument_function (below, with
// PIANO_FENTRY_MARKS); true when it changed M.
bool removeFentryMarks(llvm::Module &M);

class PianoPass : public llvm::PassInfoMixin<PianoPass> {
public:
  // Stage: where in the pipeline it runs ("before inlining", "after
  // inlining"; "" when a pipeline names it: opt -passes=piano), recorded with
  // the selection (.piano.sel) because it changes what a pattern selects.
  // GuardLater: leave the hook calls unguarded for PianoGuardPass, run at
  // the end of the same pipeline.
  explicit PianoPass(const char *Stage = "", bool GuardLater = false)
      : Stage(Stage), GuardLater(GuardLater) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    bool Changed = instrumentModule(M);
    // With GuardLater, PianoGuardPass removes them at the end of the
    // pipeline: until then a second PianoPass (the plugin loaded twice)
    // still reads them.
    if (!GuardLater)
      Changed |= removeFentryMarks(M);
    return Changed ? llvm::PreservedAnalyses::none()
                   : llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }

private:
  bool instrumentModule(llvm::Module &M);
  const char *Stage;
  bool GuardLater;
};

bool guardModule(llvm::Module &M); // Instrument.cpp, below

// The guards of the hook calls PianoPass placed with GuardLater (at the end
// of the pipeline whose start PianoPass ran at).
class PianoGuardPass : public llvm::PassInfoMixin<PianoGuardPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    bool Changed = guardModule(M);
    Changed |= removeFentryMarks(M);
    return Changed ? llvm::PreservedAnalyses::none()
                   : llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// ---- Shared by the parts ---------------------------------------------------

// The attribute of the functions the pass has instrumented (so a second run
// leaves them alone), and the name of the module constructor it adds.
constexpr const char *InstrumentedAttr = "piano-instrumented";
constexpr const char *ModuleCtorName = "__piano_module_ctor";

// StringRef::startswith and endswith became starts_with and ends_with (16)
// and went away (19); these spellings work with every LLVM.
inline bool startsWith(llvm::StringRef S, llvm::StringRef Prefix) {
  return S.size() >= Prefix.size() && S.substr(0, Prefix.size()) == Prefix;
}

inline bool endsWith(llvm::StringRef S, llvm::StringRef Suffix) {
  return S.size() >= Suffix.size() &&
         S.substr(S.size() - Suffix.size()) == Suffix;
}

// A variable that is set and neither empty nor "0".
inline bool envFlag(const char *Name) {
  const char *V = std::getenv(Name);
  return V && *V && std::string(V) != "0";
}

// ---- no_instrument_function ------------------------------------------------
//
// clang leaves no trace of __attribute__((no_instrument_function)) in the IR,
// except in the marks of its profiling flags. With -pg -mfentry (cc1 flags:
// -Xclang -pg -Xclang -mfentry) it gives every function it emits the
// attribute "fentry-call" unless the function (or the function a lambda,
// block or OpenMP region is written in) carries no_instrument_function; the
// IR is otherwise the same (clang 14 and 22). piano-cc adds these flags and
// sets PIANO_FENTRY_MARKS=1: a function without the mark is then not
// instrumented, and the marks are removed at the end of the pass's pipeline,
// before code generation or the LTO bitcode (FEntryInserter would turn them
// into calls to __fentry__).
constexpr const char *FentryMarkAttr = "fentry-call";

inline bool fentryMarks() { return envFlag("PIANO_FENTRY_MARKS"); }

// Whether F may be instrumented as far as the marks tell (true without them).
bool markedForInstrumentation(const llvm::Function &F);

// ---- Selection.cpp: the settings and the choice of functions ---------------

struct SelectDeleter {
  void operator()(piano_select *S) const { piano_select_free(S); }
};
using SelectPtr = std::unique_ptr<piano_select, SelectDeleter>;

// What the environment asks for.
struct Options {
  const char *Spec = nullptr; // PIANO_FNS as given (may be null)
  SelectPtr Sel;              // PIANO_FNS parsed
  unsigned MinSize = 0;       // PIANO_MIN_SIZE
  bool Verbose = false;       // PIANO_VERBOSE
  const char *Stage = "";     // where the pass runs (PianoPass::Stage)
};

// Reads PIANO_FNS and PIANO_MIN_SIZE (and the flags). A malformed value is
// reported through the context (one "error: piano: ..." line; the compilation
// fails) and false returned.
bool readOptions(llvm::LLVMContext &Ctx, Options &Opts);

// Names of one function: Match is the qualified name without parameters
// (what PIANO_FNS patterns see), Display is what the report shows.
struct FnNames {
  std::string Match;
  std::string Display;
};

// One selected function.
struct Chosen {
  llvm::Function *F;
  FnNames Names;
  std::string File; // defining file, "" when unknown
  unsigned Line;    // line of the definition, 0 without debug info
  bool System;      // defined in a system header (piano_site.flags)
};

struct Selection {
  std::vector<Chosen> Fns;   // to instrument, in module order
  std::vector<Chosen> Small; // selected by a broad pattern, but too small
  std::vector<Chosen> Coros; // C++20 coroutines, marked: instrumented once split
};

// Chooses the functions of M to instrument, and the C++20 coroutines whose
// pieces are instrumented once split (instrumentFunctions marks them).
Selection selectFunctions(llvm::Module &M, const Options &Opts);

// Whether F is a C++20 coroutine that CoroSplit has not split yet.
bool isPresplitCoroutine(const llvm::Function &F);

// Whether F unwinds with a scoped (Windows) EH personality, which the
// placement of exit hooks (EscapeEnumerator) does not handle: such functions
// are never candidates.
bool hasScopedPersonality(const llvm::Function &F);

// Records the selection in the object (.piano.sel), for piano-cc.
void recordSelection(llvm::Module &M, const Options &Opts);

// Lists the instrumented functions in the object (.piano.fns), for
// piano-summary --list.
void recordFunctions(llvm::Module &M, const std::vector<Chosen> &Fns);

// PIANO_SUMMARY=FILE: appends this translation unit's line for piano-summary.
void writeSummary(const llvm::Module &M, const Options &Opts,
                  const Selection &S);

// ---- Instrument.cpp: the IR of rt/piano_abi.h ------------------------------

// Gives every function of Fns its site and its enter / exit hooks (each
// guarded by the site's byte `on`, or, with GuardLater, marked to be guarded
// by guardModule), and the module the constructor that registers the sites.
// Coros: selected C++20 coroutines before their split; their pieces' sites
// are made now and their hooks placed by placeCoroutineHooks.
void instrumentFunctions(llvm::Module &M, const std::vector<Chosen> &Fns,
                         bool GuardLater,
                         const std::vector<Chosen> &Coros = {});

// The pieces CoroSplit makes of a coroutine, in the order of their sites: the
// ramp (the coroutine's own name: the call that creates it, up to its first
// suspension), each resumption, the frame destroyed (two functions).
struct CoroPiece {
  const char *IRName;  // the suffix of its function's name
  const char *Display; // what the report adds to the coroutine's name
};
constexpr unsigned CoroPieces = 4;
// A selected coroutine's metadata (CoroSplit copies it to its pieces): its
// pieces' sites, in CoroPieceSuffix's order.
constexpr const char *CoroSitesMD = "piano.coro.sites";
constexpr CoroPiece CoroPieceSuffix[CoroPieces] = {
    {"", ""},
    {".resume", " (.resume)"},
    {".destroy", " (.destroy)"},
    {".cleanup", " (.cleanup)"}};

// Gives F, a piece of a selected coroutine split by CoroSplit, its hooks
// (left for guardModule to guard); false when F is not one, or has them.
bool placeCoroutineHooks(llvm::Function &F);

// Guards the hook calls of a module instrumented with GuardLater (or with
// coroutines), after placing the hooks of coroutine pieces that have none yet;
// true when it changed the module.
bool guardModule(llvm::Module &M);

} // namespace piano

#endif
