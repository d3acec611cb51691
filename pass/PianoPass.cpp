//===- PianoPass.cpp - piano's function entry/exit instrumentation --------===//
//
// PianoPass.so: a new-pass-manager plugin that instruments the functions
// chosen by PIANO_FNS (see pass/select.h) with calls into the piano runtime
// (rt/, libpiano_rt.so). The emitted IR follows rt/piano_abi.h:
//   - one internal, writable struct piano_site {i32 id, i32 line, ptr name,
//     ptr file} per instrumented function, listed in a private array;
//   - __piano_enter(&site) at function entry;
//   - __piano_exit(&site) before every ret, before a musttail call, and in a
//     cleanup landing pad when C++ exceptions unwind through the function;
//   - a module constructor calling __piano_register(list, n, 2).
//
// How to run it:
//   clang -fpass-plugin=build/lib/PianoPass.so -c foo.c     (any -O level,
//                                                             also -flto)
//   opt -load-pass-plugin=build/lib/PianoPass.so -passes=piano foo.ll
//   PIANO_FNS=parse,!parse_item PIANO_VERBOSE=1 clang -fpass-plugin=... ...
// or simply use the piano-cc / piano-c++ wrappers (tools/cc/).
//
//===----------------------------------------------------------------------===//

#include "select.h"
#include "summary.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Config/llvm-config.h"
#if LLVM_VERSION_MAJOR >= 17
#include "llvm/IR/EHPersonalities.h"
#else
#include "llvm/Analysis/EHPersonalities.h"
#endif
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#if LLVM_VERSION_MAJOR >= 22
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm/Support/ErrorHandling.h"
#if LLVM_VERSION_MAJOR >= 17
#include "llvm/TargetParser/Triple.h"
#else
#include "llvm/ADT/Triple.h"
#endif
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/EscapeEnumerator.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <string>
#include <vector>

using namespace llvm;

namespace {

constexpr unsigned PianoAbiVersion = 2; // PIANO_ABI_VERSION in rt/piano_abi.h
constexpr const char *InstrumentedAttr = "piano-instrumented";

// The generic pointer type used for the hooks' parameters.
Type *voidPtrTy(LLVMContext &Ctx) {
#if LLVM_VERSION_MAJOR >= 17
  return PointerType::getUnqual(Ctx);
#else
  return Type::getInt8PtrTy(Ctx);
#endif
}

// StringRef::startswith became starts_with (16) and went away (19); this
// spelling works with every LLVM.
bool startsWith(StringRef S, StringRef Prefix) {
  return S.size() >= Prefix.size() && S.substr(0, Prefix.size()) == Prefix;
}

bool isPresplitCoroutine(const Function &F) {
#if LLVM_VERSION_MAJOR >= 15
  return F.hasFnAttribute(Attribute::PresplitCoroutine);
#else
  return F.hasFnAttribute("coroutine.presplit");
#endif
}

// A variable that is set and neither empty nor "0".
bool envFlag(const char *Name) {
  const char *V = std::getenv(Name);
  return V && *V && std::string(V) != "0";
}

struct SelectDeleter {
  void operator()(piano_select *S) const { piano_select_free(S); }
};
using SelectPtr = std::unique_ptr<piano_select, SelectDeleter>;

// Names of one function: Match is the qualified name without parameters
// (what PIANO_FNS patterns see), Display is what the report shows.
struct FnNames {
  std::string Match;
  std::string Display;
};

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

// The defining file and line, from debug info when present.
void locationOf(const Function &F, std::string &File, unsigned &Line) {
  if (const DISubprogram *SP = F.getSubprogram()) {
    StringRef Name = SP->getFilename();
    StringRef Dir = SP->getDirectory();
    if (!Name.empty() && !sys::path::is_absolute(Name) && !Dir.empty()) {
      SmallString<256> P(Dir);
      sys::path::append(P, Name);
      File = std::string(P.str());
    } else {
      File = Name.str();
    }
    Line = SP->getLine();
    return;
  }
  File = F.getParent()->getSourceFileName();
  Line = 0;
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

bool isCandidate(const Function &F) {
  if (F.isDeclaration() || F.hasAvailableExternallyLinkage())
    return false;
  if (F.hasFnAttribute(Attribute::Naked))
    return false;
  if (F.hasFnAttribute(InstrumentedAttr))
    return false;
  if (startsWith(F.getName(), "__piano") || startsWith(F.getName(), "\1__piano"))
    return false;
  if (isPresplitCoroutine(F))
    return false;
  // Scoped (Windows) EH personalities are not handled by EscapeEnumerator.
  if (F.hasPersonalityFn() &&
      isScopedEHPersonality(classifyEHPersonality(F.getPersonalityFn())))
    return false;
  return true;
}

GlobalVariable *makeString(Module &M, StringRef S, const Twine &Name) {
  Constant *Init = ConstantDataArray::getString(M.getContext(), S, true);
  auto *GV = new GlobalVariable(M, Init->getType(), /*isConstant=*/true,
                                GlobalValue::PrivateLinkage, Init, Name);
  GV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  GV->setAlignment(Align(1));
  return GV;
}

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

// The module asm that records this object's selection:
//   .piano.sel: "piano-sel 1" \t PIANO_FNS \t PIANO_MIN_SIZE \t source \0
// in a section without flags (not loaded, never in the program's memory).
std::string selectionAsm(const char *Spec, unsigned MinSize,
                         const std::string &Source) {
  std::string Entry = "piano-sel 1\t";
  Entry += Spec ? Spec : "";
  Entry += "\t" + std::to_string(MinSize) + "\t" + Source;
  std::string Asm = ".pushsection .piano.sel,\"\",@progbits\n.asciz \"";
  for (unsigned char C : Entry) {
    if (C == '"' || C == '\\' || C < 0x20 || C >= 0x7f) {
      char Oct[8];
      std::snprintf(Oct, sizeof Oct, "\\%03o", C);
      Asm += Oct;
    } else {
      Asm += (char)C;
    }
  }
  Asm += "\"\n.popsection\n";
  return Asm;
}

struct Chosen {
  Function *F;
  FnNames Names;
  std::string File;
  unsigned Line;
};

class PianoPass : public PassInfoMixin<PianoPass> {
public:
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    return instrumentModule(M) ? PreservedAnalyses::none()
                               : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }

private:
  bool instrumentModule(Module &M);
};

bool PianoPass::instrumentModule(Module &M) {
  LLVMContext &Ctx = M.getContext();

  const char *Spec = std::getenv("PIANO_FNS");
  piano_select *Raw = nullptr;
  char Err[512];
  if (piano_select_parse(Spec, &Raw, Err, sizeof Err) != 0) {
    // clang prints this as one "error: piano: PIANO_FNS: ..." line and the
    // compilation fails cleanly (no crash report, no output file); opt
    // prints it and exits 1. report_fatal_error would add a stack dump.
    Ctx.emitError(Twine("piano: ") + Err);
    return false;
  }
  SelectPtr Sel(Raw);
  unsigned MinSize = DefaultMinSize;
  if (!parseMinSize(std::getenv("PIANO_MIN_SIZE"), MinSize, Err, sizeof Err)) {
    Ctx.emitError(Twine("piano: ") + Err);
    return false;
  }

  // Unset PIANO_FNS, '*' and substrings are broad: they leave out functions
  // smaller than MinSize. A pattern that names a function (=name, its whole
  // name, a file: pattern) takes it whatever its size.
  std::vector<Chosen> Fns, Small;
  for (Function &F : M) {
    if (!isCandidate(F))
      continue;
    Chosen C{&F, namesOf(F), std::string(), 0};
    locationOf(F, C.File, C.Line);
    bool System = inSystemHeader(F, C.File, C.Names.Match);
    enum piano_sel_result R = piano_select_match_fn(
        Sel.get(), C.Names.Match.c_str(), C.File.c_str(), System);
    if (R == PIANO_SEL_NO)
      continue;
    // main is kept whatever its size: one call, and the root of the report.
    if (R != PIANO_SEL_YES && MinSize > 0 && F.getName() != "main" &&
        sizeOf(F) < MinSize) {
      Small.push_back(std::move(C));
      continue;
    }
    Fns.push_back(std::move(C));
  }

  // Every object says which selection it was compiled under, in a section
  // that is not loaded (.piano.sel, one string per translation unit):
  // piano-cc reads it back from what it links and says when objects of
  // different selections were linked together (a changed PIANO_FNS that did
  // not rebuild everything). Not again when the plugin runs twice.
  Triple TT(M.getTargetTriple());
  if (TT.isOSBinFormatELF() &&
      M.getModuleInlineAsm().find(".piano.sel") == std::string::npos)
    M.appendModuleInlineAsm(selectionAsm(Spec, MinSize, M.getSourceFileName()));

  // PIANO_SUMMARY=FILE: one line per translation unit for piano-summary
  // (not again when the plugin is loaded twice and this is the second run).
  const char *SumPath = std::getenv("PIANO_SUMMARY");
  if (SumPath && *SumPath && !M.getFunction("__piano_module_ctor")) {
    std::vector<piano_summary_fn> Out, Skipped;
    for (const Chosen &C : Fns)
      Out.push_back({C.Names.Match.c_str(), C.File.c_str(),
                     C.Names.Display.c_str()});
    for (const Chosen &C : Small)
      Skipped.push_back({C.Names.Match.c_str(), C.File.c_str(),
                         C.Names.Display.c_str()});
    if (piano_summary_append(SumPath, M.getSourceFileName().c_str(), Spec,
                             MinSize, Out.data(), Out.size(), Skipped.data(),
                             Skipped.size()) != 0)
      errs() << "piano: PIANO_SUMMARY: cannot append to " << SumPath << ": "
             << std::strerror(errno) << "\n";
  }

  bool IsVerbose = envFlag("PIANO_VERBOSE");
  if (IsVerbose && !Small.empty()) {
    std::string Msg;
    raw_string_ostream OS(Msg);
    OS << "piano: " << M.getSourceFileName() << ": left out " << Small.size()
       << " function(s) smaller than PIANO_MIN_SIZE=" << MinSize << ": ";
    for (size_t I = 0; I < Small.size(); ++I)
      OS << (I ? ", " : "") << Small[I].Names.Display;
    OS << "\n";
    OS.flush();
    errs() << Msg;
  }
  if (Fns.empty()) {
    if (IsVerbose)
      errs() << "piano: " << M.getSourceFileName()
             << ": instrumented 0 function(s)\n";
    return false;
  }

  // struct piano_site { i32 id; i32 line; ptr name; ptr file; }
  Type *I32 = Type::getInt32Ty(Ctx);
  Type *VoidPtr = voidPtrTy(Ctx);
  StructType *SiteTy = StructType::get(Ctx, {I32, I32, VoidPtr, VoidPtr});

  // One private string per distinct text.
  StringMap<Constant *> Strings;
  auto str = [&](const std::string &S, const char *Name) -> Constant * {
    Constant *&C = Strings[S];
    if (!C)
      C = ConstantExpr::getPointerCast(makeString(M, S, Name), VoidPtr);
    return C;
  };
  // One small global per site rather than one array: every instrumented
  // function refers to its site, and LLVM's call-graph passes walk what a
  // function refers to, so one shared array made compile time quadratic.
  // Writable: the runtime stores the site id into it.
  std::vector<Constant *> SiteList;
  SiteList.reserve(Fns.size());
  for (size_t I = 0; I < Fns.size(); ++I) {
    Constant *Name = str(Fns[I].Names.Display, "__piano_name");
    Constant *File = str(Fns[I].File, "__piano_file");
    auto *Site = new GlobalVariable(
        M, SiteTy, /*isConstant=*/false, GlobalValue::InternalLinkage,
        ConstantStruct::get(SiteTy, {ConstantInt::get(I32, 0),
                                     ConstantInt::get(I32, Fns[I].Line), Name,
                                     File}),
        "__piano_site");
    Site->setAlignment(Align(8));
    SiteList.push_back(ConstantExpr::getPointerCast(Site, VoidPtr));
  }
  ArrayType *ListTy = ArrayType::get(VoidPtr, Fns.size());
  auto *Sites = new GlobalVariable(M, ListTy, /*isConstant=*/true,
                                   GlobalValue::PrivateLinkage,
                                   ConstantArray::get(ListTy, SiteList),
                                   "__piano_sites");


  AttributeList NoUnwind = AttributeList().addFnAttribute(Ctx, Attribute::NoUnwind);
  Type *VoidTy = Type::getVoidTy(Ctx);
  FunctionCallee Enter = M.getOrInsertFunction(
      "__piano_enter", FunctionType::get(VoidTy, {VoidPtr}, false), NoUnwind);
  FunctionCallee Exit = M.getOrInsertFunction(
      "__piano_exit", FunctionType::get(VoidTy, {VoidPtr}, false), NoUnwind);
  FunctionCallee Register = M.getOrInsertFunction(
      "__piano_register", FunctionType::get(I32, {VoidPtr, I32, I32}, false),
      NoUnwind);
  for (FunctionCallee FC : {Enter, Exit, Register})
    if (auto *Decl = dyn_cast<Function>(FC.getCallee()))
      Decl->addFnAttr(Attribute::NoUnwind);
  // The hooks run on every call: reach them through the GOT, not a lazy PLT stub.
  for (FunctionCallee FC : {Enter, Exit})
    if (auto *Decl = dyn_cast<Function>(FC.getCallee()))
      Decl->addFnAttr(Attribute::NonLazyBind);

  // Hook(Site) right before Before (guarded below with PIANO_GUARD=1).
  std::vector<CallInst *> HookCalls;
  auto emitHook = [&](Instruction *Before, FunctionCallee Hook, Constant *Site,
                      DISubprogram *SP, DebugLoc DL) {
    // Calls to inlinable functions need a !dbg in functions with debug info.
    if (SP && !DL)
      DL = DILocation::get(Ctx, SP->getLine(), 0, SP);
    IRBuilder<> B(Before);
    B.SetCurrentDebugLocation(DL);
    CallInst *CI = B.CreateCall(Hook, {Site});
    HookCalls.push_back(CI);
    CI->setDoesNotThrow();
    // Never a sibling call: the runtime tells nested calls apart by the stack
    // position at each hook, which a tail-called exit hook would misreport.
    CI->setTailCallKind(CallInst::TCK_NoTail);
  };

  Constant *Personality = nullptr;
  for (Function &F : M)
    if (F.hasPersonalityFn() && !isScopedEHPersonality(classifyEHPersonality(
                                    F.getPersonalityFn()))) {
      Personality = F.getPersonalityFn();
      break;
    }

  for (size_t I = 0; I < Fns.size(); ++I) {
    Function &F = *Fns[I].F;
    DISubprogram *SP = F.getSubprogram();
    Constant *Site = SiteList[I];

    // Entry: after the leading allocas, so they stay static allocas.
    BasicBlock &EntryBB = F.getEntryBlock();
    BasicBlock::iterator IP = EntryBB.getFirstInsertionPt();
    while (IP != EntryBB.end() && isa<AllocaInst>(*IP))
      ++IP;
    DebugLoc EntryDL;
    if (SP)
      EntryDL = DILocation::get(
          Ctx, SP->getScopeLine() ? SP->getScopeLine() : SP->getLine(), 0, SP);
    // Placed before the escape enumerator runs: it replaces calls that may
    // throw by invokes, which would leave a pointer to such a call dangling.
    emitHook(&*IP, Enter, Site, SP, EntryDL);

    // Functions that may unwind get a cleanup landing pad below. Without a
    // personality EscapeEnumerator would pick the C one; reuse the module's
    // (C++: __gxx_personality_v0) so C++ code needs nothing extra to link.
    if (!F.doesNotThrow() && !F.hasPersonalityFn()) {
      if (!Personality && startsWith(StringRef(F.getName()), "_Z"))
        Personality = cast<Constant>(
            M.getOrInsertFunction("__gxx_personality_v0",
                                  FunctionType::get(I32, true))
                .getCallee());
      if (Personality)
        F.setPersonalityFn(Personality);
    }

    // Exits: before each ret / resume (or the musttail call preceding a ret),
    // plus a cleanup landing pad for calls that may throw.
    // Each hook is placed as soon as the enumerator yields its place, before
    // it goes on to rewrite calls.
    EscapeEnumerator EE(F, "piano_cleanup", /*HandleExceptions=*/true);
    while (IRBuilder<> *B = EE.Next())
      emitHook(&*B->GetInsertPoint(), Exit, Site, SP,
               B->getCurrentDebugLocation());

    F.addFnAttr(InstrumentedAttr);
  }

  // PIANO_GUARD=1: each hook call is skipped unless the runtime's __piano_on
  // is set, so that PIANO_DISABLE=1 costs a load and a branch per hook (under
  // 1 ns per call) instead of two calls (2-4 ns). The extra blocks cost
  // compile time (about +16% on a large file), hence an option. Guards are
  // added once the escape enumerator is done with the function: splitting
  // blocks under it would make it visit the moved returns again. Each guard
  // loads the flag itself (atomic, volatile: never merged into one value, so
  // the optimizer has no reason to clone a body into on and off copies).
  if (envFlag("PIANO_GUARD")) {
    Type *I8 = Type::getInt8Ty(Ctx);
    GlobalVariable *On = M.getGlobalVariable("__piano_on");
    if (!On)
      On = new GlobalVariable(M, I8, /*isConstant=*/false,
                              GlobalValue::ExternalLinkage, nullptr,
                              "__piano_on");
    MDNode *Likely = MDBuilder(Ctx).createBranchWeights(1000, 1);
    for (CallInst *CI : HookCalls) {
      IRBuilder<> B(CI);
      LoadInst *Flag = B.CreateLoad(I8, On, /*isVolatile=*/true, "piano_on");
      Flag->setAtomic(AtomicOrdering::Monotonic);
      Flag->setAlignment(Align(1));
      Instruction *Then = SplitBlockAndInsertIfThen(
          B.CreateICmpNE(Flag, ConstantInt::get(I8, 0)), CI,
          /*Unreachable=*/false, Likely);
      CI->moveBefore(*Then->getParent(), Then->getIterator());
    }
  }
  // Module constructor: __piano_register(sites, n, PIANO_ABI_VERSION).
  Function *Ctor = Function::Create(FunctionType::get(VoidTy, false),
                                    GlobalValue::InternalLinkage,
                                    "__piano_module_ctor", M);
  Ctor->addFnAttr(Attribute::NoUnwind);
  Ctor->addFnAttr(InstrumentedAttr);
  {
    IRBuilder<> B(BasicBlock::Create(Ctx, "entry", Ctor));
    B.CreateCall(Register, {ConstantExpr::getPointerCast(Sites, VoidPtr),
                            ConstantInt::get(I32, Fns.size()),
                            ConstantInt::get(I32, PianoAbiVersion)})
        ->setDoesNotThrow();
    B.CreateRetVoid();
  }
  appendToGlobalCtors(M, Ctor, 0);

  if (IsVerbose) {
    std::string Msg;
    raw_string_ostream OS(Msg);
    OS << "piano: " << M.getSourceFileName() << ": instrumented " << Fns.size()
       << " function(s): ";
    for (size_t I = 0; I < Fns.size(); ++I)
      OS << (I ? ", " : "") << Fns[I].Names.Display;
    OS << "\n";
    OS.flush();
    errs() << Msg;
  }
  return true;
}

// ---- Which LLVM loaded us ------------------------------------------------
//
// A plugin only works in the clang/opt of the LLVM major it was compiled
// against: it uses LLVM's C++ classes, whose layout and symbols change with
// every major. PassPlugin's own check (LLVM_PLUGIN_API_VERSION) only tells
// apart API version 1 (LLVM <= 21) from 2 (22): a plugin built for 14 loaded
// into clang-15 or -19 would crash or, worse, run and miscompile. So
// llvmGetPassPluginInfo compares the LLVM major it was built for with the one
// of the process that loads it and, when they differ, prints one line naming
// both and returns an API version (0) that every LLVM refuses: clang then
// fails with "unable to load plugin ... Wrong API version", opt ignores the
// plugin. None of the plugin's LLVM code runs, and no LLVM symbol is needed
// before that: the plugin is linked with lazy binding (pass/CMakeLists.txt).

#define PIANO_STR2(X) #X
#define PIANO_STR(X) PIANO_STR2(X)

// Read by piano-cc (tools/cc/piano-cc.c) to check that a PianoPass.so suits
// its clang.
extern "C" __attribute__((used, visibility("default")))
const char piano_built_for_llvm[] =
    "piano-built-for-llvm=" PIANO_STR(LLVM_VERSION_MAJOR);

// The LLVM major of the process, 0 when it cannot be told (a statically
// linked clang exporting no C API). LLVMGetVersion (C API, so callable
// whatever the version) exists from LLVM 16 on; before that, Debian's (and
// upstream's) libLLVM-N.so version their symbols "LLVM_N".
unsigned hostLLVMMajor() {
  using GetVersionFn = void (*)(unsigned *, unsigned *, unsigned *);
  if (void *Sym = dlsym(RTLD_DEFAULT, "LLVMGetVersion")) {
    unsigned Major = 0, Minor = 0, Patch = 0;
    reinterpret_cast<GetVersionFn>(Sym)(&Major, &Minor, &Patch);
    return Major;
  }
  for (unsigned N = 3; N < 16; ++N) {
    char Node[16];
    std::snprintf(Node, sizeof Node, "LLVM_%u", N);
    if (dlvsym(RTLD_DEFAULT, "LLVMContextCreate", Node))
      return N;
  }
  return 0;
}

unsigned HostMajor = 0; // set when the plugin is loaded
__attribute__((constructor)) void findHostLLVM() { HostMajor = hostLLVMMajor(); }

bool hostMatches() { return HostMajor == 0 || HostMajor == LLVM_VERSION_MAJOR; }

void reportMismatch() {
  Dl_info Info;
  const char *Path = dladdr(reinterpret_cast<void *>(&reportMismatch), &Info) &&
                             Info.dli_fname
                         ? Info.dli_fname
                         : "PianoPass.so";
  std::fprintf(stderr,
               "piano: %s is built for LLVM %u, not for the LLVM %u that "
               "loads it: use lib/piano/llvm-%u/PianoPass.so (or piano-cc) "
               "of a piano built with -DLLVM_DIR=/usr/lib/llvm-%u/lib/cmake/llvm\n",
               Path, (unsigned)LLVM_VERSION_MAJOR, HostMajor, HostMajor,
               HostMajor);
}

void registerCallbacks(PassBuilder &PB) {
  // PIANO_AFTER_INLINING=1: instrument at the end of the optimisation
  // pipeline, what survives inlining (as -pg and XRay do), instead of at its
  // start. The callback's parameters differ across LLVM majors (20 added the
  // LTO phase): a generic lambda fits them all.
  if (envFlag("PIANO_AFTER_INLINING")) {
    PB.registerOptimizerLastEPCallback(
        [](ModulePassManager &MPM, OptimizationLevel, auto...) {
          MPM.addPass(PianoPass());
        });
  } else {
    PB.registerPipelineStartEPCallback(
        [](ModulePassManager &MPM, OptimizationLevel) {
          MPM.addPass(PianoPass());
        });
  }
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (Name != "piano")
          return false;
        MPM.addPass(PianoPass());
        return true;
      });
}

constexpr const char *PluginVersion = "0.1.0";

} // namespace

extern "C" {

// What the host's PassPlugin::Load calls (through dlsym).
#if LLVM_PLUGIN_API_VERSION >= 2
// LLVM 22 added a field to PassPluginLibraryInfo, which is returned by value:
// returning the 22 layout to an older clang would write past its buffer. So
// llvmGetPassPluginInfo is a GNU indirect function: when the plugin is looked
// up, pianoSelectInfo (run by the dynamic loader, after findHostLLVM) hands
// out pianoInfo, or pianoInfoForOldLLVM with the API-1 layout.
struct PianoInfoV1 { // llvm::PassPluginLibraryInfo of LLVM <= 21
  uint32_t APIVersion;
  const char *PluginName;
  const char *PluginVersion;
  void (*RegisterPassBuilderCallbacks)(PassBuilder &);
};
__attribute__((visibility("hidden"))) PianoInfoV1 pianoInfoForOldLLVM() {
  reportMismatch();
  return {0, "piano", PluginVersion, nullptr};
}
#endif

__attribute__((visibility("hidden"))) ::llvm::PassPluginLibraryInfo
pianoInfo() {
  if (!hostMatches()) {
    reportMismatch();
    return {0, "piano", PluginVersion, nullptr};
  }
  return {LLVM_PLUGIN_API_VERSION, "piano", PluginVersion, registerCallbacks};
}

#if LLVM_PLUGIN_API_VERSION >= 2
using PianoInfoFn = ::llvm::PassPluginLibraryInfo (*)();
__attribute__((visibility("hidden"))) PianoInfoFn pianoSelectInfo() {
  if (HostMajor != 0 && HostMajor < 22)
    return reinterpret_cast<PianoInfoFn>(
        reinterpret_cast<void (*)()>(&pianoInfoForOldLLVM));
  return &pianoInfo;
}
__attribute__((visibility("default"), ifunc("pianoSelectInfo")))
::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo();
#else
__attribute__((visibility("default"))) ::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return pianoInfo();
}
#endif

} // extern "C"
