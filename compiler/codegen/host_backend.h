// The host target: Kernel IR compiled for this machine's CPU through LLVM's ORC JIT, run
// with its blocks spread over a thread pool. It is a real target with its own timings, and
// how every kernel's semantics are executed where there is no GPU.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/codegen/code_counts.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/hlo/literal.h"
#include "support/status.h"

namespace tilesmith::codegen {

/// Code generation statistics of one compilation.
struct CompileStats {
  double emit_ms = 0;      // Kernel IR -> LLVM IR
  double optimize_ms = 0;  // LLVM optimisation pipeline
  double codegen_ms = 0;   // machine code (JIT) or PTX + cubin
  double total_ms() const { return emit_ms + optimize_ms + codegen_ms; }
};

/// How a kernel is compiled for the host.
struct HostOptions {
  /// Complex functions call the C library as the evaluator does (bit-exact); false uses
  /// the portable formulas of targets without one, so that the host can test them.
  bool complex_library = true;
  /// exp, tanh, log, log1p, expm1, erf, atan2 and pow on f32 (and the narrow floats,
  /// computed in f32) are inline polynomial code the loop vectoriser can widen (within the
  /// bounds codegen/vector_math.h states), instead of scalar libm calls. false calls libm
  /// exactly as the evaluator does (bit-exact results).
  bool vector_math = true;
};

/// A kernel compiled for the host, ready to run.
class HostKernel {
 public:
  ~HostKernel();
  HostKernel(const HostKernel&) = delete;
  HostKernel& operator=(const HostKernel&) = delete;

  /// Runs the kernel on raw buffers (one per Kernel IR buffer, in order, laid out as their
  /// shapes say, 64-byte aligned), all blocks, using up to `threads` worker threads
  /// (0: one per core).
  void Run(std::span<void* const> buffers, int threads = 0) const;

  /// Runs on literals: arguments are laid out into physical buffers by their parameter's
  /// layout, outputs read back. Returns one literal per fusion output.
  Expected<std::vector<hlo::Literal>> Run(std::span<const hlo::Literal> arguments,
                                          int threads = 0) const;

  const emitters::KernelIR& kernel() const { return kernel_; }
  /// The optimised LLVM IR that was compiled.
  const std::string& llvm_ir() const { return llvm_ir_; }
  const CompileStats& stats() const { return stats_; }

 private:
  friend Expected<std::unique_ptr<HostKernel>> CompileForHost(emitters::KernelIR kernel,
                                                              const HostOptions& options);
  HostKernel() = default;

 public:
  using EntryPoint = void (*)(void* const* buffers, int64_t first_block, int64_t end_block);
  struct JitState;

 private:
  emitters::KernelIR kernel_;
  std::string llvm_ir_;
  CompileStats stats_;
  EntryPoint entry_ = nullptr;
  std::unique_ptr<JitState> jit_;
};

/// Compiles `kernel` (its fusion must outlive the result) for the host CPU.
Expected<std::unique_ptr<HostKernel>> CompileForHost(emitters::KernelIR kernel,
                                                     const HostOptions& options = {});

/// The LLVM IR of `kernel` for the host, optimised, without compiling it to machine code.
Expected<std::string> HostLlvmIr(const emitters::KernelIR& kernel);

/// What the optimised host code of `kernel` executes per block (code_counts.h), counted
/// without compiling it to machine code.
Expected<CodeCounts> CountHostCode(const emitters::KernelIR& kernel);

/// The code generator host kernels are compiled with, e.g. `LLVM 16.0.6`.
std::string HostToolchainVersion();

}  // namespace tilesmith::codegen
