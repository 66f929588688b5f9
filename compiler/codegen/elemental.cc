// The elemental emitter's driver: memoisation, parameters, tuples, calls and the dispatch
// to op families (elementwise math in elemental_math.cc and the files it names, bitcasts in
// elemental_bitcast.cc, index-moving and reducing ops in elemental_structural.cc).
#include "compiler/codegen/elemental.h"

#include "compiler/analysis/indexing_map.h"
#include "compiler/codegen/elemental_internal.h"
#include "compiler/emitters/kernel_ir.h"

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
      return llvm::StructType::get(
          context, {llvm::Type::getFloatTy(context), llvm::Type::getFloatTy(context)});
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
  size_t hash =
      std::hash<const void*>()(key.instruction) ^ (std::hash<int64_t>()(key.tuple_index) << 1);
  for (const AffineExpr& expr : key.index) hash = hash * 31 + expr.hash();
  return hash;
}

llvm::Value* TargetHooks::CallComplexFunction(llvm::IRBuilderBase&, std::string_view, PrimitiveType,
                                              std::span<llvm::Value* const>) {
  return nullptr;
}

ElementalEmitter::ElementalEmitter(llvm::IRBuilder<>& builder, TargetHooks& hooks, IndexEnv& env,
                                   std::vector<std::vector<BufferRef>> parameters)
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
  // Inside a called computation a parameter stands for what the caller bound to it: a
  // scalar, or an operand of the caller, memoised under that operand.
  if (instruction.opcode() == HloOpcode::kParameter && !bindings_.empty()) {
    return EmitParameter(instruction, index, tuple_index);
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

void ElementalEmitter::Bind(const HloInstruction& instruction, std::span<const AffineExpr> index,
                            ScalarValue value, int64_t tuple_index) {
  Key key{&instruction, tuple_index, {}};
  for (const AffineExpr& expr : index) key.index.push_back(Simplify(expr));
  memo_.back()[std::move(key)] = value;
}

Expected<ScalarValue> ElementalEmitter::EmitParameter(const HloInstruction& parameter,
                                                      std::span<const AffineExpr> index,
                                                      int64_t tuple_index) {
  if (!bindings_.empty()) {
    Binding& binding = bindings_.back();
    if (auto it = binding.scalars.find(&parameter); it != binding.scalars.end()) {
      return it->second;
    }
    if (auto it = binding.arrays.find(&parameter); it != binding.arrays.end()) {
      // The operand belongs to the caller: read it under the caller's bindings.
      Binding callee = std::move(binding);
      bindings_.pop_back();
      auto value = EmitElement(*it->second, index, tuple_index);
      bindings_.push_back(std::move(callee));
      return value;
    }
  }
  int64_t number = parameter.parameter_number();
  size_t leaf = static_cast<size_t>(std::max<int64_t>(tuple_index, 0));
  if (number >= static_cast<int64_t>(parameters_.size()) || parameters_[number].size() <= leaf ||
      parameters_[number][leaf].base == nullptr) {
    return MakeError(ErrorCode::kInternal, "parameter " + std::to_string(number) + " leaf " +
                                               std::to_string(leaf) + " has no buffer");
  }
  return Load(parameters_[number][leaf], index);
}

Expected<std::vector<ScalarValue>> ElementalEmitter::CallScalarComputation(
    const hlo::HloComputation& computation, std::span<const ScalarValue> args) {
  if (static_cast<int64_t>(args.size()) != computation.parameter_count()) {
    return MakeError(ErrorCode::kInternal,
                     "wrong argument count calling '" + computation.name() + "'");
  }
  Binding binding;
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    binding.scalars[computation.parameter(i)] = args[i];
  }
  bindings_.push_back(std::move(binding));
  // Values computed for these arguments must not leak to the next call.
  memo_.emplace_back();
  const HloInstruction* root = computation.root();
  int64_t results = root->shape().IsTuple()
                        ? static_cast<int64_t>(emitters::ArrayLeaves(root->shape()).size())
                        : 1;
  std::vector<ScalarValue> values;
  Status status = OkStatus();
  for (int64_t i = 0; i < results && status; ++i) {
    auto value = EmitElement(*root, {}, root->shape().IsTuple() ? i : -1);
    if (value) {
      values.push_back(*value);
    } else {
      status = std::unexpected(value.error());
    }
  }
  memo_.pop_back();
  bindings_.pop_back();
  if (!status) return std::unexpected(status.error());
  return values;
}

// A call (or a fusion inside the fused computation) is its callee emitted at the same
// index, with the callee's parameters standing for the call's operands.
Expected<ScalarValue> ElementalEmitter::EmitCall(const HloInstruction& call,
                                                 std::span<const AffineExpr> index,
                                                 int64_t tuple_index) {
  const hlo::HloComputation& callee = *call.called_computation(0);
  if (callee.parameter_count() != call.operand_count()) {
    return InvalidArgument("'" + call.name() + "' passes " + std::to_string(call.operand_count()) +
                           " operands to '" + callee.name() + "'");
  }
  Binding binding;
  for (int64_t i = 0; i < callee.parameter_count(); ++i) {
    binding.arrays[callee.parameter(i)] = call.operand(i);
  }
  bindings_.push_back(std::move(binding));
  // The same callee may be called with other operands elsewhere.
  memo_.emplace_back();
  auto value = EmitElement(*callee.root(), index, tuple_index);
  memo_.pop_back();
  bindings_.pop_back();
  return value;
}

// Tuples and get-tuple-element only route leaves: leaf k of a tuple is a leaf of the
// operand that holds it, and a get-tuple-element's leaves are a range of its operand's.
Expected<ScalarValue> ElementalEmitter::EmitTupleElement(const HloInstruction& instruction,
                                                         std::span<const AffineExpr> index,
                                                         int64_t tuple_index) {
  const HloInstruction& operand = *instruction.operand(0);
  if (instruction.opcode() == HloOpcode::kGetTupleElement) {
    int64_t leaf = emitters::LeafOffset(operand.shape(), instruction.tuple_index()) +
                   std::max<int64_t>(tuple_index, 0);
    return EmitElement(operand, index, leaf);
  }
  if (tuple_index < 0) return Unimplemented("a tuple has no single element");
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const hlo::Shape& element = instruction.operand(i)->shape();
    int64_t size = static_cast<int64_t>(emitters::ArrayLeaves(element).size());
    if (tuple_index < size) {
      return EmitElement(*instruction.operand(i), index, element.IsTuple() ? tuple_index : -1);
    }
    tuple_index -= size;
  }
  return MakeError(ErrorCode::kInternal, "leaf out of range in '" + instruction.name() + "'");
}

Expected<ScalarValue> ElementalEmitter::EmitUncached(const HloInstruction& instruction,
                                                     std::span<const AffineExpr> index,
                                                     int64_t tuple_index) {
  HloOpcode opcode = instruction.opcode();
  switch (opcode) {
    case HloOpcode::kParameter:
      return EmitParameter(instruction, index, tuple_index);
    case HloOpcode::kConstant:
      return EmitConstantElement(*this, instruction, index);
    case HloOpcode::kIota:
      return EmitIotaElement(*this, instruction, index);
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
      return EmitTupleElement(instruction, index, tuple_index);
    case HloOpcode::kCopy:
      return EmitElement(*instruction.operand(0), index, tuple_index);
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
      return EmitCall(instruction, index, tuple_index);
    case HloOpcode::kBitcastConvert:
      return EmitBitcastConvertElement(*this, instruction, index);
    default:
      break;
  }
  if (hlo::IsElementwise(opcode)) {
    std::vector<ScalarValue> operands;
    for (const HloInstruction* operand : instruction.operands()) {
      // Scalar operands of select and clamp broadcast implicitly.
      std::span<const AffineExpr> operand_index =
          operand->shape().rank() == 0 ? std::span<const AffineExpr>() : index;
      TS_ASSIGN_OR_RETURN(ScalarValue value, EmitElement(*operand, operand_index));
      operands.push_back(value);
    }
    return EmitElementwise(instruction, operands);
  }
  return EmitStructuralElement(*this, instruction, index, tuple_index);
}

}  // namespace tilesmith::codegen
