// The elemental emitter's driver: memoisation, parameters, constants, iota, tuples and the
// dispatch to op families (elementwise math in elemental_math*.cc, index-moving and
// reducing ops in elemental_structural*.cc).
#include "compiler/codegen/elemental.h"

#include "compiler/analysis/indexing_map.h"
#include "compiler/codegen/elemental_internal.h"

namespace tilesmith::codegen {

using analysis::AffineExpr;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

llvm::Type* ComputeType(llvm::LLVMContext& context, PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return llvm::Type::getInt1Ty(context);
    case PrimitiveType::kF32:
      return llvm::Type::getFloatTy(context);
    case PrimitiveType::kF64:
      return llvm::Type::getDoubleTy(context);
    case PrimitiveType::kC64:
      return llvm::StructType::get(context,
                                   {llvm::Type::getFloatTy(context), llvm::Type::getFloatTy(context)});
    case PrimitiveType::kC128:
      return llvm::StructType::get(
          context, {llvm::Type::getDoubleTy(context), llvm::Type::getDoubleTy(context)});
    default:
      if (hlo::IsNarrowFloat(type)) return llvm::Type::getFloatTy(context);
      if (hlo::IsIntegral(type)) return llvm::IntegerType::get(context, hlo::BitWidth(type));
      return nullptr;
  }
}

size_t ElementalEmitter::KeyHash::operator()(const Key& key) const {
  size_t hash = std::hash<const void*>()(key.instruction) ^ (std::hash<int64_t>()(key.tuple_index) << 1);
  for (const AffineExpr& expr : key.index) hash = hash * 31 + expr.hash();
  return hash;
}

ElementalEmitter::ElementalEmitter(llvm::IRBuilder<>& builder, TargetHooks& hooks, IndexEnv& env,
                                   std::vector<BufferRef> parameters)
    : builder_(builder), hooks_(hooks), env_(env), parameters_(std::move(parameters)) {}

llvm::Module& ElementalEmitter::module() { return *builder_.GetInsertBlock()->getModule(); }

void ElementalEmitter::PushScope() {
  memo_.emplace_back();
  env_.PushScope();
}

void ElementalEmitter::PopScope() {
  if (memo_.size() > 1) memo_.pop_back();
  env_.PopScope();
}

AffineExpr ElementalEmitter::Simplify(const AffineExpr& expr) const {
  if (expr.IsConstant() || expr.IsSymbol()) return expr;
  std::vector<analysis::SymbolVar> symbols;
  for (int64_t i = 0; i < env_.variable_count(); ++i) {
    symbols.push_back({env_.RangeOf(AffineExpr::Symbol(i))});
  }
  analysis::IndexingMap map({}, std::move(symbols), {expr});
  map.Simplify();
  return map.IsKnownEmpty() || map.IsUndefined() ? expr : map.result(0);
}

Expected<ScalarValue> ElementalEmitter::EmitElement(const HloInstruction& instruction,
                                                    std::span<const AffineExpr> index,
                                                    int64_t tuple_index) {
  // Parameters bound by a scalar computation call shadow memory.
  if (instruction.opcode() == HloOpcode::kParameter && !bound_parameters_.empty()) {
    auto it = bound_parameters_.back().find(&instruction);
    if (it != bound_parameters_.back().end()) return it->second;
  }
  Key key{&instruction, tuple_index, {}};
  key.index.reserve(index.size());
  for (const AffineExpr& expr : index) key.index.push_back(Simplify(expr));
  for (auto scope = memo_.rbegin(); scope != memo_.rend(); ++scope) {
    auto it = scope->find(key);
    if (it != scope->end()) return it->second;
  }
  TS_ASSIGN_OR_RETURN(ScalarValue value, EmitUncached(instruction, key.index, tuple_index));
  memo_.back().emplace(std::move(key), value);
  return value;
}

Expected<std::vector<ScalarValue>> ElementalEmitter::CallScalarComputation(
    const hlo::HloComputation& computation, std::span<const ScalarValue> args) {
  if (static_cast<int64_t>(args.size()) != computation.parameter_count()) {
    return MakeError(ErrorCode::kInternal, "wrong argument count calling '" + computation.name() + "'");
  }
  std::unordered_map<const HloInstruction*, ScalarValue> bound;
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    bound[computation.parameter(i)] = args[i];
  }
  bound_parameters_.push_back(std::move(bound));
  // Values computed for these arguments must not leak to the next call.
  memo_.emplace_back();
  std::vector<ScalarValue> results;
  const HloInstruction* root = computation.root();
  Status status = OkStatus();
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) {
      auto value = EmitElement(*operand, {});
      if (!value) {
        status = std::unexpected(value.error());
        break;
      }
      results.push_back(*value);
    }
  } else {
    auto value = EmitElement(*root, {});
    if (value) {
      results.push_back(*value);
    } else {
      status = std::unexpected(value.error());
    }
  }
  memo_.pop_back();
  bound_parameters_.pop_back();
  if (!status) return std::unexpected(status.error());
  return results;
}

Expected<ScalarValue> ElementalEmitter::EmitUncached(const HloInstruction& instruction,
                                                     std::span<const AffineExpr> index,
                                                     int64_t tuple_index) {
  HloOpcode opcode = instruction.opcode();
  switch (opcode) {
    case HloOpcode::kParameter: {
      int64_t number = instruction.parameter_number();
      if (number >= static_cast<int64_t>(parameters_.size()) || parameters_[number].base == nullptr) {
        return MakeError(ErrorCode::kInternal,
                         "parameter " + std::to_string(number) + " has no buffer");
      }
      return Load(parameters_[number], index);
    }
    case HloOpcode::kConstant:
      return EmitConstantElement(*this, instruction, index);
    case HloOpcode::kIota:
      return EmitIotaElement(*this, instruction, index);
    case HloOpcode::kGetTupleElement: {
      const HloInstruction& operand = *instruction.operand(0);
      if (operand.opcode() == HloOpcode::kTuple) {
        return EmitElement(*operand.operand(instruction.tuple_index()), index);
      }
      return EmitElement(operand, index, instruction.tuple_index());
    }
    case HloOpcode::kTuple:
      if (tuple_index < 0) return Unimplemented("a tuple has no single element");
      return EmitElement(*instruction.operand(tuple_index), index);
    default:
      break;
  }
  if (hlo::IsElementwise(opcode) || opcode == HloOpcode::kCopy) {
    std::vector<ScalarValue> operands;
    for (const HloInstruction* operand : instruction.operands()) {
      // Scalar operands of select and clamp broadcast implicitly.
      std::span<const AffineExpr> operand_index =
          operand->shape().rank() == 0 ? std::span<const AffineExpr>() : index;
      TS_ASSIGN_OR_RETURN(ScalarValue value, EmitElement(*operand, operand_index));
      operands.push_back(value);
    }
    if (opcode == HloOpcode::kCopy) return operands[0];
    return EmitElementwise(instruction, operands);
  }
  return EmitStructuralElement(*this, instruction, index, tuple_index);
}

}  // namespace tilesmith::codegen
