// The C math library's names for the functions elemental code calls through
// TargetHooks::MathFunction: the host links libm (`expf`, `exp`), NVPTX links libdevice,
// whose functions are the same names prefixed `__nv_` (`__nv_expf`, `__nv_exp`).
#pragma once

#include <llvm/IR/Module.h>

#include <string>
#include <string_view>

namespace tilesmith::codegen {

/// How many arguments math function `name` takes (2 for atan2, pow, fmod, hypot, …; else 1).
int MathArity(std::string_view name);

/// libm's symbol for `name` on `type`: `expf` for float, `exp` for double.
std::string LibmSymbol(std::string_view name, llvm::Type* type);

/// `prefix + LibmSymbol(name, type)` declared in `module` as `type (type…)`.
llvm::FunctionCallee DeclareMathFunction(llvm::Module& module, std::string_view prefix,
                                         std::string_view name, llvm::Type* type);

}  // namespace tilesmith::codegen
