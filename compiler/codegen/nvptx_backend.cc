#include "compiler/codegen/nvptx_backend.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Vectorize/LoadStoreVectorizer.h>

#include <array>
#include <chrono>

#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/kernel_cache.h"
#include "compiler/codegen/kernel_codegen.h"
#include "compiler/codegen/llvm_setup.h"
#include "compiler/codegen/nvptx_abi.h"
#include "compiler/codegen/nvptx_libdevice.h"
#include "compiler/codegen/nvptx_packing.h"

namespace tilesmith::codegen {
namespace {

constexpr char kTriple[] = "nvptx64-nvidia-cuda";
// The newest PTX ISA LLVM 16 emits; nvJitLink and ptxas of newer toolkits accept it.
constexpr char kPtxFeatures[] = "+ptx78";

class Stopwatch {
 public:
  /// Milliseconds since construction or the previous Lap.
  double Lap() {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

Expected<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(int ptx_sm) {
  InitializeLlvm();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition, "LLVM has no NVPTX target: " + error);
  }
  // Default options: FP contraction only where the IR asks for it, so results stay those
  // of the evaluator and the host target.
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(kTriple, "sm_" + std::to_string(ptx_sm), kPtxFeatures, options,
                                  llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (machine == nullptr) {
    return MakeError(ErrorCode::kInternal, "cannot create an NVPTX target machine");
  }
  return machine;
}

// Combines each thread's lane loads and stores into vector accesses before the inliner
// brings in libdevice's branches: after it, the lanes of a branchy function (erff, sinf)
// sit in different basic blocks, and the NVPTX back end's own LoadStoreVectorizer only
// combines accesses within one block. EarlyCSE and InstCombine first put the lanes'
// addresses into the base + constant form the vectoriser recognises.
void AddEarlyVectorizer(llvm::PassBuilder& builder) {
  builder.registerPipelineEarlySimplificationEPCallback(
      [](llvm::ModulePassManager& passes, llvm::OptimizationLevel) {
        llvm::FunctionPassManager function_passes;
        function_passes.addPass(llvm::EarlyCSEPass());
        function_passes.addPass(llvm::InstCombinePass());
        function_passes.addPass(llvm::LoadStoreVectorizerPass());
        passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(function_passes)));
      });
}

Expected<std::string> EmitPtx(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CGFT_AssemblyFile)) {
    return MakeError(ErrorCode::kInternal, "the NVPTX target cannot emit PTX");
  }
  passes.run(module);
  return std::string(ptx.str());
}

}  // namespace

Expected<int> PtxTargetFor(int sm_version) {
  constexpr std::array<int, 14> kKnown = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};
  for (auto it = kKnown.rbegin(); it != kKnown.rend(); ++it) {
    if (*it <= sm_version) return *it;
  }
  return InvalidArgument("sm_" + std::to_string(sm_version) + " is older than any NVPTX target");
}

Expected<NvptxKernel> CompileForNvptx(const emitters::KernelIR& kernel,
                                      const emitters::Target& target, NvptxStage stage) {
  if (!target.is_cuda()) return InvalidArgument(target.ToString() + " is not a cuda target");
  TS_ASSIGN_OR_RETURN(int ptx_sm, PtxTargetFor(target.sm_version));
  Stopwatch clock;
  NvptxKernel result;
  result.entry = NvptxEntryName(kernel);
  result.launch = kernel.launch;
  result.buffers = kernel.buffers;
  result.ptx_target = "sm_" + std::to_string(ptx_sm);
  TS_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, CreateTargetMachine(ptx_sm));

  llvm::LLVMContext context;
  llvm::Module module(kernel.name, context);
  module.setTargetTriple(kTriple);
  module.setDataLayout(machine->createDataLayout());
  module.addModuleFlag(llvm::Module::Warning, kNvptxSmModuleFlag, ptx_sm);
  NvptxAbi abi;
  TS_RETURN_IF_ERROR(EmitKernelFunction(kernel, module, abi));
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(module, &problem_stream)) {
    return MakeError(ErrorCode::kInternal,
                     "invalid LLVM IR for '" + kernel.name + "': " + problems);
  }
  result.timings.emit_ms = clock.Lap();

  TS_RETURN_IF_ERROR(LinkLibdevice(module));
  result.timings.libdevice_ms = clock.Lap();

  OptimizeModule(module, *machine, [ptx_sm](llvm::PassBuilder& builder) {
    AddEarlyVectorizer(builder);
    AddNvptxPacking(builder, ptx_sm);
  });
  // Our own late passes rewrite the optimised IR: a mistake there is an error, not a crash
  // in the back end.
  if (llvm::verifyModule(module, &problem_stream)) {
    return MakeError(ErrorCode::kInternal,
                     "invalid LLVM IR for '" + kernel.name + "' after optimisation: " + problems);
  }
  result.timings.optimize_ms = clock.Lap();
  if (stage == NvptxStage::kLlvm) {
    llvm::raw_string_ostream stream(result.llvm_ir);
    module.print(stream, nullptr);
    return result;
  }

  TS_ASSIGN_OR_RETURN(result.ptx, EmitPtx(module, *machine));
  result.timings.ptx_ms = clock.Lap();
  if (stage == NvptxStage::kPtx) return result;

  TS_ASSIGN_OR_RETURN(result.cubin, CompilePtxToCubin(result.ptx, target.sm_version, result.entry));
  result.timings.cubin_ms = clock.Lap();
  return result;
}

Expected<std::shared_ptr<const NvptxKernel>> CompileForNvptxCached(
    const hlo::HloComputation& fusion, const emitters::KernelIR& kernel,
    const emitters::Target& target, NvptxStage stage, bool* cached) {
  if (stage == NvptxStage::kLlvm) return InvalidArgument("LLVM IR is not cached");
  TS_ASSIGN_OR_RETURN(KernelKey key, KernelKey::For(fusion, kernel, target));
  KernelCache<NvptxKernel>& cache = NvptxKernelCache();
  std::shared_ptr<const NvptxKernel> found = cache.Find(key);
  if (found != nullptr && (stage == NvptxStage::kPtx || !found->cubin.bytes.empty())) {
    if (cached != nullptr) *cached = true;
    return found;
  }
  TS_ASSIGN_OR_RETURN(NvptxKernel compiled, CompileForNvptx(kernel, target, stage));
  auto value = std::make_shared<const NvptxKernel>(std::move(compiled));
  cache.Insert(key, value);
  if (cached != nullptr) *cached = false;
  return value;
}

}  // namespace tilesmith::codegen
