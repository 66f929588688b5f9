#include "compiler/codegen/math_library.h"

#include <llvm/TargetParser/Triple.h>

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

llvm::Value* CallLibcComplexFunction(llvm::IRBuilderBase& b, std::string_view name,
                                     hlo::PrimitiveType type,
                                     std::span<llvm::Value* const> arguments) {
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  if (llvm::Triple(module.getTargetTriple()).getArch() != llvm::Triple::x86_64) return nullptr;
  bool is_float = type == hlo::PrimitiveType::kC64;
  llvm::Type* part = is_float ? b.getFloatTy() : b.getDoubleTy();
  llvm::Type* pair = is_float ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(part, 2))
                              : llvm::StructType::get(b.getContext(), {part, part});
  std::string symbol;
  std::vector<llvm::Value*> values;
  if (name == "mul" || name == "div") {
    // Annex G multiply and divide take the four parts as scalars.
    symbol = "__" + std::string(name) + (is_float ? "sc3" : "dc3");
    for (llvm::Value* argument : arguments) {
      values.push_back(b.CreateExtractValue(argument, 0));
      values.push_back(b.CreateExtractValue(argument, 1));
    }
  } else {
    symbol = "c" + std::string(name) + (is_float ? "f" : "");
    for (llvm::Value* argument : arguments) {
      llvm::Value* re = b.CreateExtractValue(argument, 0);
      llvm::Value* im = b.CreateExtractValue(argument, 1);
      if (is_float) {
        llvm::Value* vector = llvm::PoisonValue::get(pair);
        vector = b.CreateInsertElement(vector, re, uint64_t{0});
        values.push_back(b.CreateInsertElement(vector, im, uint64_t{1}));
      } else {
        values.push_back(re);
        values.push_back(im);
      }
    }
  }
  std::vector<llvm::Type*> types;
  for (llvm::Value* value : values) types.push_back(value->getType());
  llvm::FunctionCallee callee =
      module.getOrInsertFunction(symbol, llvm::FunctionType::get(pair, types, false));
  llvm::Value* result = b.CreateCall(callee, values);
  llvm::Value* re =
      is_float ? b.CreateExtractElement(result, uint64_t{0}) : b.CreateExtractValue(result, 0);
  llvm::Value* im =
      is_float ? b.CreateExtractElement(result, uint64_t{1}) : b.CreateExtractValue(result, 1);
  llvm::Type* complex = llvm::StructType::get(b.getContext(), {part, part});
  return b.CreateInsertValue(b.CreateInsertValue(llvm::UndefValue::get(complex), re, 0), im, 1);
}

}  // namespace tilesmith::codegen
