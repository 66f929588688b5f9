// The C math library's names for the functions elemental code calls through
// TargetHooks::MathFunction: the host links libm (`expf`, `exp`), NVPTX links libdevice,
// whose functions are the same names prefixed `__nv_` (`__nv_expf`, `__nv_exp`).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <span>
#include <string>
#include <string_view>

#include "compiler/hlo/primitive_type.h"

namespace tilesmith::codegen {

/// How many arguments math function `name` takes (2 for atan2, pow, fmod, hypot, …; else 1).
int MathArity(std::string_view name);

/// libm's symbol for `name` on `type`: `expf` for float, `exp` for double.
std::string LibmSymbol(std::string_view name, llvm::Type* type);

/// `prefix + LibmSymbol(name, type)` declared in `module` as `type (type…)`.
llvm::FunctionCallee DeclareMathFunction(llvm::Module& module, std::string_view prefix,
                                         std::string_view name, llvm::Type* type);

/// Calls the C runtime's complex function for `name` (TargetHooks::CallComplexFunction's
/// names: "exp" -> `cexpf`/`cexp`, "mul" -> `__mulsc3`/`__muldc3`, "div" -> `__divsc3`/
/// `__divdc3`) on {re, im} arguments of complex `type`, passing them as the x86-64 System V
/// ABI passes `float _Complex` (one <2 x float>) and `double _Complex` (two doubles).
/// Returns the {re, im} result, or null when the module targets another architecture.
llvm::Value* CallLibcComplexFunction(llvm::IRBuilderBase& builder, std::string_view name,
                                     hlo::PrimitiveType type,
                                     std::span<llvm::Value* const> arguments);

}  // namespace tilesmith::codegen
