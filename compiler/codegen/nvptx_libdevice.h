// libdevice, the CUDA toolkit's math library as LLVM bitcode, linked into NVPTX modules.
// Private to compiler/codegen.
#pragma once

#include <llvm/IR/Module.h>

#include "support/status.h"

namespace tilesmith::codegen {

/// Links into `module` the libdevice functions it calls (`__nv_expf`, …) and nothing else,
/// internalised so that they inline and vanish, and sets `nvvm-reflect-ftz` to 0 (no
/// flush-to-zero) for the NVVMReflect pass that resolves libdevice's `__nvvm_reflect`
/// branches during optimisation. Calls to the math functions are marked pure (`memory(none)
/// nounwind willreturn`). The bitcode is read from disk once per process. An `__nv_`
/// function libdevice does not define is an error naming it.
Status LinkLibdevice(llvm::Module& module);

}  // namespace tilesmith::codegen
