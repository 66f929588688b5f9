// The NVPTX target: Kernel IR -> LLVM IR (nvptx64-nvidia-cuda, libdevice linked) -> O3 ->
// PTX -> cubin with the resources ptxas assigned. Needs the CUDA toolkit, never a GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/nvptx_cubin.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/emitters/target.h"
#include "support/status.h"

namespace tilesmith::codegen {

/// How far CompileForNvptx goes.
enum class NvptxStage {
  kLlvm,   // optimised LLVM IR (kept as text)
  kPtx,    // PTX
  kCubin,  // PTX and the cubin with its resource usage
};

/// Milliseconds spent in each step of one compilation.
struct NvptxTimings {
  double emit_ms = 0;       // Kernel IR -> LLVM IR, verified
  double libdevice_ms = 0;  // linking the libdevice functions the kernel calls
  double optimize_ms = 0;   // the O3 pipeline (NVVMReflect included)
  double ptx_ms = 0;        // NVPTX code generation (LoadStoreVectorizer included)
  double cubin_ms = 0;      // nvJitLink or ptxas
  double total_ms() const { return emit_ms + libdevice_ms + optimize_ms + ptx_ms + cubin_ms; }
};

/// A kernel compiled for a CUDA GPU. Self-contained (it does not point into the fusion), so
/// it can be cached, stored or handed to a worker process.
struct NvptxKernel {
  std::string entry;                            // the PTX `.entry` name
  emitters::LaunchGrid launch;                  // grid and block to launch it with
  std::vector<emitters::KernelBuffer> buffers;  // its arguments, in order
  std::string ptx_target;                       // the PTX `.target` (sm_90 at most)
  std::string llvm_ir;                          // the optimised IR, at NvptxStage::kLlvm only
  std::string ptx;                              // at kPtx and kCubin
  Cubin cubin;                                  // at kCubin: bytes, resources, compiler
  NvptxTimings timings;
};

/// The newest `sm_XX` LLVM 16's NVPTX back end knows that is not newer than `sm_version`
/// (PTX for it runs on `sm_version`), or an error for architectures older than sm_50.
Expected<int> PtxTargetFor(int sm_version);

/// Compiles `kernel` for `target` (a cuda target) up to `stage`. PTX is ISA 7.8 (LLVM 16's
/// newest); the cubin is for the target's own architecture.
Expected<NvptxKernel> CompileForNvptx(const emitters::KernelIR& kernel,
                                      const emitters::Target& target,
                                      NvptxStage stage = NvptxStage::kCubin);

/// CompileForNvptx through NvptxKernelCache() (kernel_cache.h): an entry serves a request
/// when it went at least as far as `stage` (kPtx or kCubin; kLlvm is never cached).
/// `cached`, when given, says whether the result came from the cache.
Expected<std::shared_ptr<const NvptxKernel>> CompileForNvptxCached(
    const hlo::HloComputation& fusion, const emitters::KernelIR& kernel,
    const emitters::Target& target, NvptxStage stage, bool* cached = nullptr);

}  // namespace tilesmith::codegen
