#include "compiler/codegen/nvptx_libdevice.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <mutex>

#include "compiler/codegen/cuda_toolkit.h"

namespace tilesmith::codegen {
namespace {

constexpr llvm::StringRef kLibdevicePrefix = "__nv_";

// The bitcode file's bytes, read once; each module parses what it needs from them lazily.
Expected<const llvm::MemoryBuffer*> LibdeviceBitcode() {
  static std::once_flag once;
  static std::unique_ptr<llvm::MemoryBuffer> buffer;
  static Error error;
  std::call_once(once, [] {
    auto path = LibdevicePath();
    if (!path) {
      error = path.error();
      return;
    }
    auto file = llvm::MemoryBuffer::getFile(path->string());
    if (!file) {
      error =
          Error{ErrorCode::kIo, "cannot read " + path->string() + ": " + file.getError().message()};
      return;
    }
    buffer = std::move(*file);
  });
  if (buffer == nullptr) return std::unexpected(error);
  return buffer.get();
}

bool CallsLibdevice(const llvm::Module& module) {
  for (const llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().startswith(kLibdevicePrefix)) return true;
  }
  return false;
}

// libdevice computes some functions with inline assembly (`rcp.approx.ftz.f32` in
// `__nv_tanhf`) that is pure but not marked `willreturn`. To LLVM such a call might never
// return, and an instruction that might not return ends the stretch of code in which the
// back end's LoadStoreVectorizer may combine loads and stores (this alone kept GELU's four
// bf16 loads four before the early vectoriser existed). Assembly without side effects that
// touches no memory always returns; say so.
void MarkPureAsmWillReturn(llvm::Module& module) {
  for (llvm::Function& function : module) {
    for (llvm::BasicBlock& block : function) {
      for (llvm::Instruction& instruction : block) {
        auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
        if (call == nullptr || !call->isInlineAsm()) continue;
        auto* assembly = llvm::cast<llvm::InlineAsm>(call->getCalledOperand());
        if (assembly->hasSideEffects() || !call->doesNotAccessMemory()) continue;
        call->addFnAttr(llvm::Attribute::WillReturn);
      }
    }
  }
}

// The math functions kernels call compute a value from their arguments and nothing else
// (the tables some read are constant): saying so at each call lets the early
// LoadStoreVectorizer (nvptx_backend.cc) combine the loads and stores of a thread's lanes
// across the calls, before inlining splits the code into the functions' branches.
void MarkMathCallsPure(llvm::Module& module) {
  for (llvm::Function& function : module) {
    if (!function.getName().startswith(kLibdevicePrefix)) continue;
    for (llvm::User* user : function.users()) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(user);
      if (call == nullptr || call->getCalledFunction() != &function) continue;
      call->setDoesNotAccessMemory();
      call->setDoesNotThrow();
      call->addFnAttr(llvm::Attribute::WillReturn);
    }
  }
}

}  // namespace

Status LinkLibdevice(llvm::Module& module) {
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  if (!CallsLibdevice(module)) return OkStatus();
  MarkMathCallsPure(module);
  TS_ASSIGN_OR_RETURN(const llvm::MemoryBuffer* bitcode, LibdeviceBitcode());
  auto library = llvm::getLazyBitcodeModule(bitcode->getMemBufferRef(), module.getContext());
  if (!library) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cannot parse libdevice: " + llvm::toString(library.takeError()));
  }
  // libdevice's own triple (nvptx64-nvidia-gpulibs) would make the linker warn.
  (*library)->setTargetTriple(module.getTargetTriple());
  (*library)->setDataLayout(module.getDataLayout());
  bool failed = llvm::Linker::linkModules(
      module, std::move(*library), llvm::Linker::Flags::LinkOnlyNeeded,
      [](llvm::Module& linked, const llvm::StringSet<>& imported) {
        llvm::internalizeModule(linked, [&imported](const llvm::GlobalValue& value) {
          return !value.hasName() || !imported.contains(value.getName());
        });
      });
  if (failed) return MakeError(ErrorCode::kInternal, "linking libdevice failed");
  MarkPureAsmWillReturn(module);
  for (const llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().startswith(kLibdevicePrefix)) {
      return Unimplemented("libdevice has no '" + function.getName().str() +
                           "' (a math function NVPTX cannot provide)");
    }
  }
  return OkStatus();
}

}  // namespace tilesmith::codegen
