//===- Instrument.cpp - the IR PianoPass emits ----------------------------===//
//
// What rt/piano_abi.h describes, for the functions chosen by Selection.cpp:
//   - one internal, writable struct piano_site {i32 id, i32 line, ptr name,
//     ptr file, ptr on} per function, listed in a private array; the name is
//     "display\0match\0system"; `on` points at the function's byte in the
//     module's internal array of bytes (all 1 as compiled);
//   - __piano_enter(&site) at function entry;
//   - __piano_exit(&site) before every ret, before a musttail call, and in a
//     cleanup landing pad when C++ exceptions unwind through the function;
//   - each of those calls made only while the function's byte is set;
//   - a module constructor calling __piano_register(list, n, PIANO_ABI_VERSION).
//
//===----------------------------------------------------------------------===//

#include "PianoPass.h"
#include "piano_abi.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/EscapeEnumerator.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

using namespace llvm;

namespace piano {
namespace {

// ---- The ABI: struct piano_site, checked against rt/piano_abi.h ------------

// The fields of struct piano_site as the pass builds them in IR, in order.
// The LLVM type is made from this list, and the list is checked against the
// header's struct below: neither can change without the other.
enum class FieldKind { U32, Ptr };
constexpr FieldKind SiteFields[] = {FieldKind::U32, FieldKind::U32,
                                    FieldKind::Ptr, FieldKind::Ptr,
                                    FieldKind::Ptr};
enum SiteField { SiteId, SiteLine, SiteName, SiteFile, SiteOn, NumSiteFields };
static_assert(sizeof SiteFields / sizeof SiteFields[0] == NumSiteFields,
              "one FieldKind per field of struct piano_site");

// Where the C compiler puts each field (natural alignment, as LLVM's data
// layouts do for i32 and pointers on the targets piano supports).
constexpr size_t fieldSize(FieldKind K) {
  return K == FieldKind::U32 ? sizeof(uint32_t) : sizeof(void *);
}
constexpr size_t alignUp(size_t N, size_t A) { return (N + A - 1) / A * A; }
constexpr size_t fieldOffset(size_t Field) {
  size_t Off = 0;
  for (size_t I = 0; I < Field; ++I)
    Off = alignUp(Off, fieldSize(SiteFields[I])) + fieldSize(SiteFields[I]);
  return alignUp(Off, fieldSize(SiteFields[Field]));
}
constexpr size_t siteAlign() {
  size_t A = 1;
  for (FieldKind K : SiteFields)
    A = fieldSize(K) > A ? fieldSize(K) : A;
  return A;
}
constexpr size_t siteSize() {
  return alignUp(fieldOffset(NumSiteFields - 1) +
                     fieldSize(SiteFields[NumSiteFields - 1]),
                 siteAlign());
}

static_assert(std::is_same<decltype(piano_site::id), uint32_t>::value &&
                  std::is_same<decltype(piano_site::line), uint32_t>::value &&
                  std::is_pointer<decltype(piano_site::name)>::value &&
                  std::is_pointer<decltype(piano_site::file)>::value &&
                  std::is_pointer<decltype(piano_site::on)>::value,
              "rt/piano_abi.h: struct piano_site is {u32, u32, ptr, ptr, ptr}");
static_assert(offsetof(piano_site, id) == fieldOffset(SiteId) &&
                  offsetof(piano_site, line) == fieldOffset(SiteLine) &&
                  offsetof(piano_site, name) == fieldOffset(SiteName) &&
                  offsetof(piano_site, file) == fieldOffset(SiteFile) &&
                  offsetof(piano_site, on) == fieldOffset(SiteOn),
              "rt/piano_abi.h: struct piano_site's fields moved");
static_assert(sizeof(piano_site) == siteSize() &&
                  alignof(piano_site) == siteAlign(),
              "rt/piano_abi.h: struct piano_site changed size");
// The hooks and the flag, as the pass declares them: void(ptr), void(ptr),
// i32(ptr, i32, i32) and i8.
using HookFn = void(piano_site *);
using RegisterFn = int(piano_site *const *, uint32_t, uint32_t);
static_assert(std::is_same<decltype(__piano_enter), HookFn>::value &&
                  std::is_same<decltype(__piano_exit), HookFn>::value &&
                  std::is_same<decltype(__piano_register), RegisterFn>::value &&
                  sizeof(int) == sizeof(uint32_t) &&
                  std::is_same<decltype(__piano_on), unsigned char>::value,
              "rt/piano_abi.h: the hooks' signatures changed");
// The IR below is that of ABI 3 (the hooks' signatures, the site and its
// byte `on`): a new version needs this file changed with it.
static_assert(PIANO_ABI_VERSION == 3,
              "rt/piano_abi.h: new ABI version, update Instrument.cpp");

// Every site is aligned to 8, whatever the target: enough for the struct.
constexpr unsigned SiteAlignment = 8;
static_assert(alignof(piano_site) <= SiteAlignment, "sites under-aligned");

// The generic pointer type used for the hooks' parameters.
Type *voidPtrTy(LLVMContext &Ctx) {
#if LLVM_VERSION_MAJOR >= 17
  return PointerType::getUnqual(Ctx);
#else
  return Type::getInt8PtrTy(Ctx);
#endif
}

// struct piano_site { i32 id; i32 line; ptr name; ptr file; }
StructType *siteType(LLVMContext &Ctx) {
  SmallVector<Type *, NumSiteFields> Types;
  for (FieldKind K : SiteFields)
    Types.push_back(K == FieldKind::U32 ? Type::getInt32Ty(Ctx)
                                        : voidPtrTy(Ctx));
  return StructType::get(Ctx, Types);
}

// ---- Sites -------------------------------------------------------------------

GlobalVariable *makeString(Module &M, StringRef S, const Twine &Name,
                           bool AddNull = true) {
  Constant *Init = ConstantDataArray::getString(M.getContext(), S, AddNull);
  auto *GV = new GlobalVariable(M, Init->getType(), /*isConstant=*/true,
                                GlobalValue::PrivateLinkage, Init, Name);
  GV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  GV->setAlignment(Align(1));
  return GV;
}

// The sites of a module: one per function (as generic pointers, in the
// order of Fns) and the array that lists them.
struct SiteTable {
  std::vector<Constant *> Sites;
  DenseMap<Constant *, Constant *> Bytes; // site -> its byte `on`
  GlobalVariable *List;
};

// One small global per site rather than one array: every instrumented
// function refers to its site, and LLVM's call-graph passes walk what a
// function refers to, so one shared array made compile time quadratic.
// Writable: the runtime stores the site id into it.
SiteTable createSites(Module &M, const std::vector<Chosen> &Fns) {
  // (Fns here: the functions to instrument, then each coroutine's pieces,
  // CoroPieces entries a coroutine: see instrumentFunctions.)
  LLVMContext &Ctx = M.getContext();
  Type *I8 = Type::getInt8Ty(Ctx);
  Type *I32 = Type::getInt32Ty(Ctx);
  Type *VoidPtr = voidPtrTy(Ctx);
  StructType *SiteTy = siteType(Ctx);
  // The bytes, side by side: an unselected call loads one byte of a few
  // cache lines, not one line per function (1,000 functions' sites span 375
  // lines).
  ArrayType *BytesTy = ArrayType::get(I8, Fns.size());
  SmallVector<uint8_t, 64> Ones(Fns.size(), 1);
  auto *Bytes = new GlobalVariable(
      M, BytesTy, /*isConstant=*/false, GlobalValue::InternalLinkage,
      ConstantDataArray::get(Ctx, Ones), "__piano_on_bytes");

  // The names, "display\0match\0system\0" each, side by side in one private
  // constant per module (each distinct text once), the sites pointing into
  // it: one global in place of one per function (each global costs the code
  // generator a symbol and its own emission; 500 functions' names: -1.2% of
  // the pass's extra instructions, bench/README.md). Holding NULs, a name was
  // never a C string the linker merges across objects (only one of 4, 8, 16
  // or 32 bytes went to a mergeable-constant section).
  std::string Blob;
  StringMap<size_t> NameAt;
  std::vector<size_t> NameOff;
  NameOff.reserve(Fns.size());
  for (const Chosen &C : Fns) {
    std::string Name = C.Names.Display;
    Name += '\0';
    Name += C.Names.Match;
    Name += '\0';
    Name += C.System ? '1' : '0';
    auto Ins = NameAt.try_emplace(Name, Blob.size());
    if (Ins.second) {
      Blob += Name;
      Blob += '\0';
    }
    NameOff.push_back(Ins.first->second);
  }
  GlobalVariable *Names = makeString(M, StringRef(Blob.data(), Blob.size()),
                                     "__piano_names", /*AddNull=*/false);
  Type *NamesTy = Names->getValueType();
  // Files: one private string per distinct file (C strings, which the linker
  // merges across objects).
  StringMap<Constant *> Files;
  SiteTable T;
  T.Sites.reserve(Fns.size());
  for (size_t I = 0; I < Fns.size(); ++I) {
    const Chosen &C = Fns[I];
    Constant *Fields[NumSiteFields];
    Constant *NameIdx[] = {ConstantInt::get(I32, 0),
                           ConstantInt::get(I32, NameOff[I])};
    Fields[SiteName] = ConstantExpr::getPointerCast(
        ConstantExpr::getInBoundsGetElementPtr(NamesTy, Names, NameIdx),
        VoidPtr);
    Constant *&File = Files[C.File];
    if (!File)
      File = ConstantExpr::getPointerCast(makeString(M, C.File, "__piano_file"),
                                          VoidPtr);
    Fields[SiteFile] = File;
    Fields[SiteId] = ConstantInt::get(I32, 0); // set by the runtime
    Fields[SiteLine] = ConstantInt::get(I32, C.Line);
    Constant *Idx[] = {ConstantInt::get(I32, 0),
                       ConstantInt::get(I32, T.Sites.size())};
    Constant *Byte =
        ConstantExpr::getInBoundsGetElementPtr(BytesTy, Bytes, Idx);
    Fields[SiteOn] = ConstantExpr::getPointerCast(Byte, VoidPtr);
    auto *Site = new GlobalVariable(M, SiteTy, /*isConstant=*/false,
                                    GlobalValue::InternalLinkage,
                                    ConstantStruct::get(SiteTy, Fields),
                                    "__piano_site");
    Site->setAlignment(Align(SiteAlignment));
    T.Sites.push_back(ConstantExpr::getPointerCast(Site, VoidPtr));
    T.Bytes[T.Sites.back()] = Byte;
  }
  ArrayType *ListTy = ArrayType::get(VoidPtr, Fns.size());
  T.List = new GlobalVariable(M, ListTy, /*isConstant=*/true,
                              GlobalValue::PrivateLinkage,
                              ConstantArray::get(ListTy, T.Sites),
                              "__piano_sites");
  return T;
}

// ---- Hooks -------------------------------------------------------------------

// The runtime's functions, declared in the module.
struct Hooks {
  FunctionCallee Enter, Exit, Register;
};

Hooks declareHooks(Module &M) {
  LLVMContext &Ctx = M.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  Type *VoidPtr = voidPtrTy(Ctx);
  Type *VoidTy = Type::getVoidTy(Ctx);
  AttributeList NoUnwind =
      AttributeList().addFnAttribute(Ctx, Attribute::NoUnwind);
  FunctionType *HookTy = FunctionType::get(VoidTy, {VoidPtr}, false);
  Hooks H;
  H.Enter = M.getOrInsertFunction("__piano_enter", HookTy, NoUnwind);
  H.Exit = M.getOrInsertFunction("__piano_exit", HookTy, NoUnwind);
  H.Register = M.getOrInsertFunction(
      "__piano_register", FunctionType::get(I32, {VoidPtr, I32, I32}, false),
      NoUnwind);
  for (FunctionCallee FC : {H.Enter, H.Exit, H.Register})
    if (auto *Decl = dyn_cast<Function>(FC.getCallee()))
      Decl->addFnAttr(Attribute::NoUnwind);
  // The hooks run on every call: reach them through the GOT, not a lazy PLT stub.
  for (FunctionCallee FC : {H.Enter, H.Exit})
    if (auto *Decl = dyn_cast<Function>(FC.getCallee()))
      Decl->addFnAttr(Attribute::NonLazyBind);
  return H;
}

// The first personality of the module that EscapeEnumerator handles, or null.
Constant *modulePersonality(Module &M) {
  for (Function &F : M)
    if (F.hasPersonalityFn() && !hasScopedPersonality(F))
      return F.getPersonalityFn();
  return nullptr;
}

// ---- Placement: the hooks of one function -------------------------------------

class HookPlacer {
public:
  HookPlacer(Module &M, const Hooks &H)
      : M(M), Ctx(M.getContext()), H(H), Personality(modulePersonality(M)) {}

  // Site: the function's site; F is marked as instrumented.
  void instrument(Function &F, Constant *Site) {
    placeEntryHook(F, Site);
    givePersonality(F);
    placeExitHooks(F, Site);
    F.addFnAttr(InstrumentedAttr);
  }

  // Every hook call placed so far.
  const std::vector<CallInst *> &hookCalls() const { return HookCalls; }

private:
  void emitHook(Instruction *Before, FunctionCallee Hook, Constant *Site,
                DISubprogram *SP, DebugLoc DL);
  void placeEntryHook(Function &F, Constant *Site);
  void givePersonality(Function &F);
  void placeExitHooks(Function &F, Constant *Site);

  Module &M;
  LLVMContext &Ctx;
  Hooks H;
  Constant *Personality;
  std::vector<CallInst *> HookCalls;
};

// Hook(Site) right before Before (guarded later by the site's byte).
void HookPlacer::emitHook(Instruction *Before, FunctionCallee Hook,
                          Constant *Site, DISubprogram *SP, DebugLoc DL) {
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
}

// Entry: after the leading allocas, so they stay static allocas. Placed
// before the escape enumerator runs: it replaces calls that may throw by
// invokes, which would leave a pointer to such a call dangling.
void HookPlacer::placeEntryHook(Function &F, Constant *Site) {
  DISubprogram *SP = F.getSubprogram();
  BasicBlock &EntryBB = F.getEntryBlock();
  BasicBlock::iterator IP = EntryBB.getFirstInsertionPt();
  while (IP != EntryBB.end() && isa<AllocaInst>(*IP))
    ++IP;
  DebugLoc EntryDL;
  if (SP)
    EntryDL = DILocation::get(
        Ctx, SP->getScopeLine() ? SP->getScopeLine() : SP->getLine(), 0, SP);
  emitHook(&*IP, H.Enter, Site, SP, EntryDL);
}

// Functions that may unwind get a cleanup landing pad. Without a personality
// EscapeEnumerator would pick the C one; reuse the module's (C++:
// __gxx_personality_v0) so C++ code needs nothing extra to link.
void HookPlacer::givePersonality(Function &F) {
  if (F.doesNotThrow() || F.hasPersonalityFn())
    return;
  if (!Personality && startsWith(F.getName(), "_Z"))
    Personality = cast<Constant>(
        M.getOrInsertFunction("__gxx_personality_v0",
                              FunctionType::get(Type::getInt32Ty(Ctx), true))
            .getCallee());
  if (Personality)
    F.setPersonalityFn(Personality);
}

// Exits: before each ret / resume (or the musttail call preceding a ret),
// plus a cleanup landing pad for calls that may throw. Each hook is placed as
// soon as the enumerator yields its place, before it goes on to rewrite calls.
void HookPlacer::placeExitHooks(Function &F, Constant *Site) {
  DISubprogram *SP = F.getSubprogram();
  EscapeEnumerator EE(F, "piano_cleanup", /*HandleExceptions=*/true);
  while (IRBuilder<> *B = EE.Next())
    emitHook(&*B->GetInsertPoint(), H.Exit, Site, SP,
             B->getCurrentDebugLocation());
}

// ---- Guard, constructor ----------------------------------------------------------

// The named metadata a module carries while its hook calls are not guarded
// yet (between PianoPass at the pipeline's start and PianoGuardPass at its end).
constexpr const char *UnguardedMD = "piano.unguarded";

// Each hook call is made only while its function's byte (the module's array
// __piano_on_bytes, the site's `on`) is set: 1 as compiled, cleared by the
// runtime when the run-time PIANO_FNS does not select the function or the run
// is off (PIANO_DISABLE). An unselected or disabled call then costs a load and
// a predictable branch per hook instead of two calls. Guards are added once
// the escape enumerator is done with the function (splitting blocks under it
// would make it visit the moved returns again), and, when the pass runs at the
// start of the pipeline, only at its end (PianoGuardPass): the optimizer then
// works on straight-line calls, not on four more blocks per function (the
// guards cost +21% of compile time at -O2 when they were placed at the start,
// bench/README.md "Run-time selection"). Each guard loads the byte itself
// (atomic, volatile: never merged into one value). Exits load it again rather
// than keep the entry's value in a register across the body: the runtime only
// ever clears it, while registering the site from the entry's own hook (which
// then records nothing), so an entry that recorded sees its exits' hooks run.
// Not one inline-asm statement per hook (test and call inside it, no blocks):
// the code generator looks up each of its ~36 clobbers by name over every
// register class, +96% compile time instead of +21% (bench/README.md, "One
// inline-assembly statement per hook"; bench/asm_guard.patch).
void guardHookCall(CallInst *CI, Value *OnPtr, MDNode *Likely) {
  Type *I8 = Type::getInt8Ty(CI->getContext());
  IRBuilder<> B(CI);
  LoadInst *Flag = B.CreateLoad(I8, OnPtr, /*isVolatile=*/true, "piano_on");
  Flag->setAtomic(AtomicOrdering::Monotonic);
  Flag->setAlignment(Align(1));
  Instruction *Then = SplitBlockAndInsertIfThen(
      B.CreateICmpNE(Flag, ConstantInt::get(I8, 0)), CI,
      /*Unreachable=*/false, Likely);
  CI->moveBefore(*Then->getParent(), Then->getIterator());
}

void guardHooks(Module &M, const std::vector<CallInst *> &HookCalls,
                const DenseMap<Constant *, Constant *> &Bytes) {
  MDNode *Likely = MDBuilder(M.getContext()).createBranchWeights(1000, 1);
  for (CallInst *CI : HookCalls)
    guardHookCall(CI, Bytes.lookup(cast<Constant>(CI->getArgOperand(0))),
                  Likely);
}

// The attributes the constructor takes from the module's functions: those
// that pick the code generator's subtarget (a function without them, where
// the others have them, makes LLVM build a second subtarget for it: ~1.5M
// instructions of the compiler per object, bench/README.md), the frame
// pointer and unwind tables the user asked for.
constexpr const char *CtorLikeAttrs[] = {
    "target-cpu",    "tune-cpu",    "target-features", "prefer-vector-width",
    "min-legal-vector-width", "frame-pointer", "use-soft-float"};

// Module constructor: __piano_register(sites, n, PIANO_ABI_VERSION), with
// the attributes above of Like (an instrumented function).
void addModuleCtor(Module &M, FunctionCallee Register, GlobalVariable *List,
                   size_t Count, const Function &Like) {
  LLVMContext &Ctx = M.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  Function *Ctor =
      Function::Create(FunctionType::get(Type::getVoidTy(Ctx), false),
                       GlobalValue::InternalLinkage, ModuleCtorName, M);
  for (const char *Kind : CtorLikeAttrs)
    if (Like.hasFnAttribute(Kind))
      Ctor->addFnAttr(Like.getFnAttribute(Kind));
  if (Like.hasFnAttribute(Attribute::UWTable))
    Ctor->addFnAttr(Like.getFnAttribute(Attribute::UWTable));
  Ctor->addFnAttr(Attribute::NoUnwind);
  Ctor->addFnAttr(InstrumentedAttr);
  IRBuilder<> B(BasicBlock::Create(Ctx, "entry", Ctor));
  B.CreateCall(Register, {ConstantExpr::getPointerCast(List, voidPtrTy(Ctx)),
                          ConstantInt::get(I32, Count),
                          ConstantInt::get(I32, PIANO_ABI_VERSION)})
      ->setDoesNotThrow();
  B.CreateRetVoid();
  appendToGlobalCtors(M, Ctor, 0);
}

} // namespace

void instrumentFunctions(Module &M, const std::vector<Chosen> &Fns,
                         bool GuardLater, const std::vector<Chosen> &Coros) {
  // Each coroutine's pieces have their sites now, named after it; their hooks
  // are placed once CoroSplit has made them (placeCoroutineHooks), and found
  // through the coroutine's metadata, which CoroSplit copies to its pieces.
  std::vector<Chosen> All = Fns;
  for (const Chosen &C : Coros)
    for (unsigned K = 0; K < CoroPieces; ++K) {
      All.push_back(C);
      All.back().Names.Display += CoroPieceSuffix[K].Display;
    }
  SiteTable Sites = createSites(M, All);
  Hooks H = declareHooks(M);
  HookPlacer Placer(M, H);
  for (size_t I = 0; I < Fns.size(); ++I)
    Placer.instrument(*Fns[I].F, Sites.Sites[I]);
  LLVMContext &Ctx = M.getContext();
  for (size_t I = 0; I < Coros.size(); ++I) {
    SmallVector<Metadata *, CoroPieces> Pieces;
    for (unsigned K = 0; K < CoroPieces; ++K)
      Pieces.push_back(ValueAsMetadata::get(
          Sites.Sites[Fns.size() + I * CoroPieces + K]));
    Coros[I].F->setMetadata(CoroSitesMD, MDNode::get(Ctx, Pieces));
  }
  if (GuardLater || !Coros.empty())
    M.getOrInsertNamedMetadata(UnguardedMD);
  else
    guardHooks(M, Placer.hookCalls(), Sites.Bytes);
  addModuleCtor(M, H.Register, Sites.List, All.size(),
                Fns.empty() ? *Coros.front().F : *Fns.front().F);
}

bool placeCoroutineHooks(Function &F) {
  // Not before the split (the CGSCC step also runs at -O0, before CoroSplit).
  if (F.isDeclaration() || F.hasFnAttribute(InstrumentedAttr) ||
      isPresplitCoroutine(F))
    return false;
  MDNode *Sites = F.getMetadata(CoroSitesMD);
  if (!Sites || Sites->getNumOperands() != CoroPieces)
    return false;
  // Which piece F is, by the suffix CoroSplit gave its name (none: the ramp,
  // which keeps the coroutine's).
  unsigned K = 0;
  for (unsigned I = 1; I < CoroPieces; ++I)
    if (endsWith(F.getName(), CoroPieceSuffix[I].IRName))
      K = I;
  auto *Site = dyn_cast_or_null<ConstantAsMetadata>(Sites->getOperand(K).get());
  if (!Site)
    return false;
  Module &M = *F.getParent();
  HookPlacer Placer(M, declareHooks(M));
  Placer.instrument(F, Site->getValue());
  return true;
}

bool guardModule(Module &M) {
  NamedMDNode *Pending = M.getNamedMetadata(UnguardedMD);
  if (!Pending)
    return false;
  M.eraseNamedMetadata(Pending);
  // Coroutine pieces the CGSCC step did not reach (-O0 has no such step).
  for (Function &F : M)
    placeCoroutineHooks(F);
  // The hook calls as the optimizer left them (moved, merged, inlined into
  // other functions): each names its site, whose field `on` is its byte
  // (null: a call whose site the optimizer made a phi or select of sites,
  // which reads the site's `on` at run time).
  std::vector<std::pair<CallInst *, Constant *>> Calls;
  for (const char *Name : {"__piano_enter", "__piano_exit"}) {
    Function *Hook = M.getFunction(Name);
    if (!Hook)
      continue;
    for (User *U : Hook->users()) {
      auto *CI = dyn_cast<CallInst>(U);
      if (!CI || CI->getCalledOperand() != Hook || CI->arg_size() != 1)
        continue;
      auto *Site = dyn_cast<GlobalVariable>(
          CI->getArgOperand(0)->stripPointerCasts());
      auto *Init = Site && Site->hasInitializer()
                       ? dyn_cast<ConstantStruct>(Site->getInitializer())
                       : nullptr;
      Calls.emplace_back(CI, Init && Init->getNumOperands() == NumSiteFields
                                 ? Init->getOperand(SiteOn)
                                 : nullptr);
    }
  }
  MDNode *Likely = MDBuilder(M.getContext()).createBranchWeights(1000, 1);
  StructType *SiteTy = siteType(M.getContext());
  for (auto &C : Calls) {
    Value *OnPtr = C.second;
    if (!OnPtr) {
      IRBuilder<> B(C.first);
      Value *Site = C.first->getArgOperand(0);
#if LLVM_VERSION_MAJOR < 17
      Site = B.CreatePointerCast(Site, SiteTy->getPointerTo());
#endif
      OnPtr = B.CreateLoad(voidPtrTy(M.getContext()),
                           B.CreateStructGEP(SiteTy, Site, SiteOn), "piano_on_ptr");
    }
    guardHookCall(C.first, OnPtr, Likely);
  }
  return !Calls.empty();
}

} // namespace piano
