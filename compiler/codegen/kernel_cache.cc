#include "compiler/codegen/kernel_cache.h"

#include "compiler/codegen/host_backend.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/hlo/canonical.h"
#include "support/sha256.h"

namespace tilesmith::codegen {

Expected<KernelKey> KernelKey::For(const hlo::HloComputation& fusion,
                                   const emitters::KernelIR& kernel,
                                   const emitters::Target& target) {
  TS_ASSIGN_OR_RETURN(std::string fingerprint, Sha256Hex(hlo::CanonicalText(fusion)));
  return KernelKey{std::move(fingerprint), kernel.emitter + " " + kernel.config_json,
                   target.ToString()};
}

KernelCache<HostKernel>& HostKernelCache() {
  // Each host kernel holds a JIT instance and its code: fewer of them.
  static KernelCache<HostKernel> cache(128);
  return cache;
}

KernelCache<NvptxKernel>& NvptxKernelCache() {
  // An entry is its PTX and cubin, tens of kilobytes.
  static KernelCache<NvptxKernel> cache(1024);
  return cache;
}

}  // namespace tilesmith::codegen
