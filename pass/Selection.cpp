//===- Selection.cpp - which functions PianoPass instruments --------------===//
//
// The functions chosen by PIANO_FNS (select.h) among those the pass can
// instrument, less the small ones a broad pattern picks (PIANO_MIN_SIZE); and
// what the pass records of that choice: the .piano.sel section, read by
// piano-cc, and the PIANO_SUMMARY lines, read by piano-summary (summary.h).
//
//===----------------------------------------------------------------------===//

#include "PianoPass.h"
#include "summary.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#if LLVM_VERSION_MAJOR >= 17
#include "llvm/IR/EHPersonalities.h"
#include "llvm/TargetParser/Triple.h"
#else
#include "llvm/ADT/Triple.h"
#include "llvm/Analysis/EHPersonalities.h"
#endif

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace llvm;

namespace piano {
namespace {

// ---- The settings ------------------------------------------------------------

// PIANO_MIN_SIZE when unset, chosen by measurement on zstd (bench/README.md,
// "Tiny functions"): at 30 every one-line helper (MEM_read64 7, BIT_addBits
// 24, ZSTD_hash5 ~20) is left out of broad selections, calls fall from 1,035 M
// to 146 M and the run from 77x to 10x plain; at 50 wrappers and small
// workers with loops go too (1,260 of 2,019 functions) for 5x.
constexpr unsigned DefaultMinSize = 30;

// PIANO_MIN_SIZE: unset or empty = the default, else a number (0 = no
// threshold). Returns false with a one-line message in Err.
bool parseMinSize(const char *V, unsigned &Out, char *Err, size_t ErrLen) {
  if (!V || !*V)
    return true;
  unsigned long N = 0;
  const char *P = V;
  for (; *P >= '0' && *P <= '9' && N <= 100000000; ++P)
    N = N * 10 + (unsigned long)(*P - '0');
  if (*P || N > 100000000) {
    std::snprintf(Err, ErrLen,
                  "PIANO_MIN_SIZE: expected a number of IR instructions (0 "
                  "keeps every function), got '%.64s'",
                  V);
    return false;
  }
  Out = (unsigned)N;
  return true;
}

// ---- What the pass knows of a function -------------------------------------

FnNames namesOf(const Function &F) {
  StringRef IRName = F.getName();
  if (!IRName.empty() && IRName[0] == '\1') // asm label
    IRName = IRName.drop_front();
  FnNames N{IRName.str(), IRName.str()};
  if (!startsWith(IRName, "_Z"))
    return N;
  ItaniumPartialDemangler D;
  std::string Mangled = IRName.str();
  if (D.partialDemangle(Mangled.c_str()))
    return N; // not demanglable: keep the IR name
  if (D.isFunction()) {
    if (char *Q = D.getFunctionName(nullptr, nullptr)) {
      N.Match = Q;
      std::free(Q);
    }
  }
  if (char *Full = D.finishDemangle(nullptr, nullptr)) {
    N.Display = Full;
    std::free(Full);
    if (!D.isFunction())
      N.Match = N.Display;
  }
  return N;
}

// The defining file and line, from debug info when present. Dots are
// removed: one source compiled as ../lib/x.c from tests/ and from programs/
// (lz4, zstd) is one file, one row when their runs are summed or compared.
void locationOf(const Function &F, std::string &File, unsigned &Line) {
  SmallString<256> P;
  if (const DISubprogram *SP = F.getSubprogram()) {
    StringRef Name = SP->getFilename();
    StringRef Dir = SP->getDirectory();
    if (!Name.empty() && !sys::path::is_absolute(Name) && !Dir.empty())
      P = Dir;
    sys::path::append(P, Name);
    Line = SP->getLine();
  } else {
    P = F.getParent()->getSourceFileName();
    Line = 0;
  }
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  File = std::string(P.str());
}

// Whether a function is defined in a system header. With debug info: by the
// path of its definition (DISubprogram file, dots removed), under the folders
// clang searches as system folders on Linux: /usr/include, /usr/local/include,
// GCC's and clang's own headers (/usr/lib/gcc*, /usr/lib64/gcc, /usr/lib/llvm-N,
// /usr/lib/clang, /usr/local/lib/clang), plus any folder of
// PIANO_SYSTEM_DIRS (colon-separated, e.g. a --sysroot's usr/include). The IR
// keeps no "system header" mark, so a path is the only sure sign left; it does
// not depend on how the header was reached (-isystem, <...> or "...").
// Without debug info every function seems to be defined in the translation
// unit, so the name decides: std::, __gnu_cxx::, __cxxabiv1:: and __*.
bool isSystemPath(StringRef File) {
  if (File.empty())
    return false;
  SmallString<256> P(File);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  StringRef N = P.str();
  static const char *const Prefixes[] = {
      "/usr/include/",     "/usr/local/include/", "/usr/lib/gcc/",
      "/usr/lib/gcc-cross/", "/usr/lib64/gcc/",   "/usr/lib/llvm-",
      "/usr/lib/clang/",   "/usr/local/lib/clang/", "/usr/lib64/clang/"};
  for (const char *Pre : Prefixes)
    if (startsWith(N, Pre))
      return true;
  if (const char *Extra = std::getenv("PIANO_SYSTEM_DIRS")) {
    SmallVector<StringRef, 4> Dirs;
    StringRef(Extra).split(Dirs, ':', -1, /*KeepEmpty=*/false);
    for (StringRef D : Dirs) {
      D = D.rtrim('/');
      if (!D.empty() && startsWith(N, D) &&
          (N.size() == D.size() || N[D.size()] == '/'))
        return true;
    }
  }
  return false;
}

bool inSystemHeader(const Function &F, const std::string &File,
                    const std::string &MatchName) {
  if (F.getSubprogram())
    return isSystemPath(File);
  StringRef N(MatchName);
  return startsWith(N, "std::") || startsWith(N, "__gnu_cxx::") ||
         startsWith(N, "__cxxabiv1::") || startsWith(N, "__");
}

// A function's size, as PIANO_MIN_SIZE counts it: its IR instructions when
// the pass runs (at the start of the pipeline: clang's IR before any
// optimisation, the same at -O0 and -O2), debug and lifetime intrinsics and
// bitcasts left out. int f(int x) { return x + 1; } is 5; MEM_read64 (a memcpy) 7.
unsigned sizeOf(const Function &F) {
  unsigned N = 0;
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB) {
      // Bitcasts cost nothing; LLVM 14 (typed pointers) adds one before
      // each lifetime marker at -O1 and up, later LLVMs none.
      if (isa<DbgInfoIntrinsic>(I) || isa<BitCastInst>(I))
        continue;
      if (const auto *II = dyn_cast<IntrinsicInst>(&I))
        if (II->isLifetimeStartOrEnd())
          continue;
      ++N;
    }
  return N;
}

} // namespace

bool isPresplitCoroutine(const Function &F) {
#if LLVM_VERSION_MAJOR >= 15
  return F.hasFnAttribute(Attribute::PresplitCoroutine);
#else
  return F.hasFnAttribute("coroutine.presplit");
#endif
}

namespace {

// Whether the pass can (and may) instrument F at all. A C++20 coroutine
// before its split (CoroSplit) is not: hooks placed in it would end up in
// its ramp and its resume function unpaired. Selected, it gets its pieces'
// sites (CoroSitesMD, which also keeps a second run from selecting it again)
// and its pieces are instrumented once split (Instrument.cpp,
// placeCoroutineHooks).
bool isCandidate(const Function &F) {
  if (F.isDeclaration() || F.hasAvailableExternallyLinkage())
    return false;
  if (F.hasFnAttribute(Attribute::Naked))
    return false;
  if (F.hasFnAttribute(InstrumentedAttr))
    return false;
  if (startsWith(F.getName(), "__piano") || startsWith(F.getName(), "\1__piano"))
    return false;
  if (hasScopedPersonality(F))
    return false;
  if (!markedForInstrumentation(F))
    return false;
  return true;
}

// ---- OpenMP's outlined functions ---------------------------------------------
//
// clang outlines each OpenMP region (`#pragma omp parallel`, `teams`, `task`)
// into an internal function (.omp_outlined., or compute.omp_outlined from
// LLVM 16 on; .omp_task_entry.) that the OpenMP runtime calls on each thread
// of the team. As named, they say nothing of where they come from; named after
// the function they were outlined from, and matched as it (`compute` selects
// its regions), a worker thread's calls show under their region: `compute (omp
// parallel)`. The other helpers clang makes (the region's body behind a
// trampoline at -O0 -g, reduction and task-privates functions) are not
// instrumented: their time is their caller's.

// A function clang made for OpenMP: internal, with ".omp" in its name (no C
// or mangled C++ name holds a dot).
bool isOmpHelper(const Function &F) {
  return F.hasLocalLinkage() && F.getName().find(".omp") != StringRef::npos;
}

// The one function whose code refers to F (calls it, or passes it to a
// function), and what it passes it to ("" when it calls it); null when none
// or several do, or a global does.
const Function *soleReferrer(const Function &F, std::string &PassedTo) {
  const Function *Found = nullptr;
  PassedTo.clear();
  SmallVector<const User *, 8> Work(F.user_begin(), F.user_end());
  while (!Work.empty()) {
    const User *U = Work.pop_back_val();
    if (isa<ConstantExpr>(U)) { // a cast of F (typed pointers)
      Work.append(U->user_begin(), U->user_end());
      continue;
    }
    const auto *I = dyn_cast<Instruction>(U);
    if (!I || (Found && Found != I->getFunction()))
      return nullptr;
    Found = I->getFunction();
    if (const auto *CB = dyn_cast<CallBase>(I))
      if (const Function *Callee = CB->getCalledFunction())
        if (Callee != &F)
          PassedTo = Callee->getName().str();
  }
  return Found;
}

// The region an OpenMP helper is the entry of, from the runtime function it
// is handed to; null when it is none.
const char *ompRegion(const std::string &PassedTo) {
  if (PassedTo == "__kmpc_fork_call")
    return "omp parallel";
  if (PassedTo == "__kmpc_fork_teams")
    return "omp teams";
  if (startsWith(PassedTo, "__kmpc_omp_task_alloc") ||
      startsWith(PassedTo, "__kmpc_omp_target_task_alloc"))
    return "omp task";
  return nullptr;
}

// Whether F is an OpenMP helper that is not a region's entry.
bool isOmpPlumbing(const Function &F) {
  if (!isOmpHelper(F))
    return false;
  std::string PassedTo;
  return !soleReferrer(F, PassedTo) || !ompRegion(PassedTo);
}

// F's names; an OpenMP helper's are its referrer's, with its region's kind.
FnNames namesFor(const Function &F, unsigned Depth = 0) {
  std::string PassedTo;
  const Function *P = nullptr;
  if (Depth < 8 && isOmpHelper(F))
    P = soleReferrer(F, PassedTo);
  if (!P)
    return namesOf(F);
  FnNames N = namesFor(*P, Depth + 1);
  if (const char *Region = ompRegion(PassedTo))
    N.Display += std::string(" (") + Region + ")";
  return N;
}

Chosen describe(Function &F) {
  Chosen C{&F, namesFor(F), std::string(), 0, false};
  locationOf(F, C.File, C.Line);
  return C;
}

// ---- What the pass records of its choice ------------------------------------

// One .asciz directive holding S (quotes, backslashes and bytes outside
// printable ASCII as octal escapes).
std::string asciz(const std::string &S) {
  std::string Out = ".asciz \"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\' || C < 0x20 || C >= 0x7f) {
      char Oct[8];
      std::snprintf(Oct, sizeof Oct, "\\%03o", C);
      Out += Oct;
    } else {
      Out += (char)C;
    }
  }
  return Out + "\"\n";
}

// The module asm that records this object's selection:
//   .piano.sel: "piano-sel 2" \t PIANO_FNS \t PIANO_MIN_SIZE \t stage \t source \0
// in a section without flags (not loaded, never in the program's memory).
// (Version 1 had no stage.)
std::string selectionAsm(const char *Spec, unsigned MinSize, const char *Stage,
                         const std::string &Source) {
  std::string Entry = "piano-sel 2\t";
  Entry += Spec ? Spec : "";
  Entry += "\t" + std::to_string(MinSize) + "\t" + Stage + "\t" + Source;
  return ".pushsection .piano.sel,\"\",@progbits\n" + asciz(Entry) +
         ".popsection\n";
}

// The module asm that lists the instrumented functions, for piano-summary
// --list (what a binary can select at run time): one string per function,
//   .piano.fns: "piano-fn 1" \t match name \t display name \t file \t line \t system \0
// in a section without flags, like .piano.sel (never loaded).
std::string functionsAsm(const std::vector<Chosen> &Fns) {
  std::string Asm = ".pushsection .piano.fns,\"\",@progbits\n";
  for (const Chosen &C : Fns) {
    std::string Entry = "piano-fn 1\t" + C.Names.Match + "\t" +
                        C.Names.Display + "\t" + C.File + "\t" +
                        std::to_string(C.Line) + "\t" + (C.System ? "1" : "0");
    Asm += asciz(Entry);
  }
  Asm += ".popsection\n";
  return Asm;
}

std::vector<piano_summary_fn> summaryFns(const std::vector<Chosen> &Fns) {
  std::vector<piano_summary_fn> Out;
  for (const Chosen &C : Fns)
    Out.push_back(
        {C.Names.Match.c_str(), C.File.c_str(), C.Names.Display.c_str()});
  return Out;
}

} // namespace

// The functions clang builds by hand rather than through
// CodeGenFunction::StartFunction get no mark whatever their attributes: a
// thread_local's wrapper (_ZTW...), __clang_call_terminate, the resolver of
// a function with several versions (target_clones, cpu_dispatch: NAME.resolver).
// They are instrumented as without the marks.
bool markedForInstrumentation(const Function &F) {
  if (F.hasFnAttribute(FentryMarkAttr) || !fentryMarks())
    return true;
  StringRef N = F.getName();
  return startsWith(N, "_ZTW") || N == "__clang_call_terminate" ||
         endsWith(N, ".resolver");
}

bool removeFentryMarks(Module &M) {
  if (!fentryMarks())
    return false;
  bool Changed = false;
  for (Function &F : M)
    if (F.hasFnAttribute(FentryMarkAttr)) {
      F.removeFnAttr(FentryMarkAttr);
      Changed = true;
    }
  return Changed;
}

bool hasScopedPersonality(const Function &F) {
  return F.hasPersonalityFn() &&
         isScopedEHPersonality(classifyEHPersonality(F.getPersonalityFn()));
}

bool readOptions(LLVMContext &Ctx, Options &Opts) {
  Opts.Spec = std::getenv("PIANO_FNS");
  piano_select *Raw = nullptr;
  char Err[512];
  if (piano_select_parse(Opts.Spec, &Raw, Err, sizeof Err) != 0) {
    // clang prints this as one "error: piano: PIANO_FNS: ..." line and the
    // compilation fails cleanly (no crash report, no output file); opt
    // prints it and exits 1. report_fatal_error would add a stack dump.
    Ctx.emitError(Twine("piano: ") + Err);
    return false;
  }
  Opts.Sel.reset(Raw);
  Opts.MinSize = DefaultMinSize;
  if (!parseMinSize(std::getenv("PIANO_MIN_SIZE"), Opts.MinSize, Err,
                    sizeof Err)) {
    Ctx.emitError(Twine("piano: ") + Err);
    return false;
  }
  Opts.Verbose = envFlag("PIANO_VERBOSE");
  return true;
}

// Unset PIANO_FNS, '*' and substrings are broad: they leave out functions
// smaller than MinSize. A pattern that names a function (=name, its whole
// name, a file: pattern) takes it whatever its size.
Selection selectFunctions(Module &M, const Options &Opts) {
  Selection S;
  for (Function &F : M) {
    if (!isCandidate(F) || F.getMetadata(CoroSitesMD) || isOmpPlumbing(F))
      continue;
    Chosen C = describe(F);
    bool System = inSystemHeader(F, C.File, C.Names.Match);
    C.System = System;
    enum piano_sel_result R = piano_select_match_fn(
        Opts.Sel.get(), C.Names.Match.c_str(), C.File.c_str(), System);
    if (R == PIANO_SEL_NO)
      continue;
    // main is kept whatever its size: one call, and the root of the report;
    // so is an OpenMP region: one call a thread each time it runs.
    if (R != PIANO_SEL_YES && Opts.MinSize > 0 && F.getName() != "main" &&
        !isOmpHelper(F) && sizeOf(F) < Opts.MinSize) {
      S.Small.push_back(std::move(C));
      continue;
    }
    if (isPresplitCoroutine(F)) {
      S.Coros.push_back(std::move(C));
      continue;
    }
    S.Fns.push_back(std::move(C));
  }
  return S;
}

// Every object says which selection it was compiled under, in a section
// that is not loaded (.piano.sel, one string per translation unit):
// piano-cc reads it back from what it links and says when objects of
// different selections were linked together (a changed PIANO_FNS that did
// not rebuild everything). Not again when the plugin runs twice.
void recordSelection(Module &M, const Options &Opts) {
  Triple TT(M.getTargetTriple());
  if (TT.isOSBinFormatELF() &&
      M.getModuleInlineAsm().find(".piano.sel") == std::string::npos)
    M.appendModuleInlineAsm(
        selectionAsm(Opts.Spec, Opts.MinSize, Opts.Stage,
                     M.getSourceFileName()));
}

// The functions a binary can select at run time (.piano.fns), once per module.
void recordFunctions(Module &M, const std::vector<Chosen> &Fns) {
  Triple TT(M.getTargetTriple());
  if (TT.isOSBinFormatELF() && !Fns.empty() &&
      M.getModuleInlineAsm().find(".piano.fns") == std::string::npos)
    M.appendModuleInlineAsm(functionsAsm(Fns));
}

// One line per translation unit (not again when the plugin is loaded twice
// and this is the second run).
void writeSummary(const Module &M, const Options &Opts, const Selection &S) {
  const char *SumPath = std::getenv("PIANO_SUMMARY");
  if (!SumPath || !*SumPath || M.getFunction(ModuleCtorName))
    return;
  std::vector<Chosen> All = S.Fns;
  All.insert(All.end(), S.Coros.begin(), S.Coros.end());
  std::vector<piano_summary_fn> Out = summaryFns(All);
  std::vector<piano_summary_fn> Skipped = summaryFns(S.Small);
  if (piano_summary_append(SumPath, M.getSourceFileName().c_str(), Opts.Spec,
                           Opts.MinSize, Out.data(), Out.size(),
                           Skipped.data(), Skipped.size()) != 0)
    errs() << "piano: PIANO_SUMMARY: cannot append to " << SumPath << ": "
           << std::strerror(errno) << "\n";
}

} // namespace piano
