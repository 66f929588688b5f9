#include "compiler/codegen/math_library.h"

#include <array>
#include <vector>

namespace tilesmith::codegen {

int MathArity(std::string_view name) {
  constexpr std::array<std::string_view, 9> kBinary = {
      "atan2", "pow", "fmod", "hypot", "remainder", "fdim", "fmax", "fmin", "copysign"};
  for (std::string_view binary : kBinary) {
    if (name == binary) return 2;
  }
  return 1;
}

std::string LibmSymbol(std::string_view name, llvm::Type* type) {
  std::string symbol(name);
  if (type->isFloatTy()) symbol += 'f';
  return symbol;
}

llvm::FunctionCallee DeclareMathFunction(llvm::Module& module, std::string_view prefix,
                                         std::string_view name, llvm::Type* type) {
  std::vector<llvm::Type*> arguments(MathArity(name), type);
  std::string symbol = std::string(prefix) + LibmSymbol(name, type);
  return module.getOrInsertFunction(symbol, llvm::FunctionType::get(type, arguments, false));
}

}  // namespace tilesmith::codegen
