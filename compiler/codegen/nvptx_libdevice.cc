#include "compiler/codegen/nvptx_libdevice.h"

#include <llvm/Bitcode/BitcodeReader.h>
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
      error = Error{ErrorCode::kIo,
                    "cannot read " + path->string() + ": " + file.getError().message()};
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

}  // namespace

Status LinkLibdevice(llvm::Module& module) {
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", 0);
  if (!CallsLibdevice(module)) return OkStatus();
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
  for (const llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().startswith(kLibdevicePrefix)) {
      return Unimplemented("libdevice has no '" + function.getName().str() +
                           "' (a math function NVPTX cannot provide)");
    }
  }
  return OkStatus();
}

}  // namespace tilesmith::codegen
