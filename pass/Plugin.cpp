//===- Plugin.cpp - how clang and opt load PianoPass.so -------------------===//
//
// Registers the pass with the new pass manager: at the start of clang's
// pipeline (or, with PIANO_AFTER_INLINING=1, at its end), and as -passes=piano
// for opt. Refuses, with one clear line, to be loaded by the clang/opt of
// another LLVM than the one it is built for.
//
//===----------------------------------------------------------------------===//

#include "PianoPass.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Passes/PassBuilder.h"
#if LLVM_VERSION_MAJOR >= 22
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif

#include <cstdint>
#include <cstdio>
#include <dlfcn.h>

using namespace llvm;
using piano::PianoPass;

namespace {

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

// Whether to instrument at the end of the optimisation pipeline, what
// survives inlining (as -pg and XRay do), instead of at its start: by default
// when PIANO_FNS is unset ("where does the time go?": one-line helpers
// inlined at -O2 are counted in their callers instead of paying two hooks
// each), never when patterns name functions (they are instrumented as
// written). PIANO_AFTER_INLINING=1 or =0 decides either way.
bool afterInlining() {
  const char *Set = std::getenv("PIANO_AFTER_INLINING");
  if (Set && *Set)
    return piano::envFlag("PIANO_AFTER_INLINING");
  return std::getenv("PIANO_FNS") == nullptr;
}

// Places the hooks of the coroutine pieces of an SCC (Instrument.cpp,
// placeCoroutineHooks): a ramp and, with it, the pieces CoroSplit made of it
// when it split the ramp's SCC (the walk revisits that SCC, not the pieces'
// own, before it inlines them into the ramp's callers). Their calls go to
// declarations only: the call graph's edges between defined functions do not
// change; the pieces' function analyses are invalidated here.
struct PianoCoroutinePass : PassInfoMixin<PianoCoroutinePass> {
  PreservedAnalyses run(LazyCallGraph::SCC &C, CGSCCAnalysisManager &AM,
                        LazyCallGraph &CG, CGSCCUpdateResult &) {
    bool Changed = false;
    for (LazyCallGraph::Node &N : C) {
      Function &F = N.getFunction();
      Changed |= piano::placeCoroutineHooks(F);
      if (!F.getMetadata(piano::CoroSitesMD))
        continue;
      FunctionAnalysisManager &FAM =
          AM.getResult<FunctionAnalysisManagerCGSCCProxy>(C, CG).getManager();
      for (unsigned K = 1; K < piano::CoroPieces; ++K)
        if (Function *Piece = F.getParent()->getFunction(
                (F.getName() + piano::CoroPieceSuffix[K].IRName).str()))
          if (piano::placeCoroutineHooks(*Piece)) {
            FAM.invalidate(*Piece, PreservedAnalyses::none());
            Changed = true;
          }
    }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

void registerCallbacks(PassBuilder &PB) {
  // The callback's parameters differ across LLVM majors (20 added the LTO
  // phase): a generic lambda fits them all.
  if (afterInlining()) {
    PB.registerOptimizerLastEPCallback(
        [](ModulePassManager &MPM, OptimizationLevel, auto...) {
          MPM.addPass(PianoPass("after inlining"));
        });
  } else {
    // The guards are added at the end of the same pipeline (Instrument.cpp,
    // guardModule: compile time).
    PB.registerPipelineStartEPCallback(
        [](ModulePassManager &MPM, OptimizationLevel) {
          MPM.addPass(PianoPass("before inlining", /*GuardLater=*/true));
        });
    PB.registerOptimizerLastEPCallback(
        [](ModulePassManager &MPM, OptimizationLevel, auto...) {
          MPM.addPass(piano::PianoGuardPass());
        });
    // The pieces of selected C++20 coroutines get their hooks when the
    // inliner's walk reaches them after CoroSplit, before it inlines them
    // into their callers (a frame the compiler elides: a generator made and
    // destroyed in one function); at -O0, which has no such walk, at the end.
    PB.registerCGSCCOptimizerLateEPCallback(
        [](CGSCCPassManager &CGPM, OptimizationLevel) {
          CGPM.addPass(PianoCoroutinePass());
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
