#include "compiler/codegen/ordered_keys.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "compiler/hlo/hlo_module.h"

namespace tilesmith::codegen {

using hlo::HloOpcode;
using hlo::PrimitiveType;

std::optional<OrderedKeys> OrderedKeysOf(const hlo::HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce && reduce.opcode() != HloOpcode::kReduceWindow) {
    return std::nullopt;
  }
  if (reduce.operand_count() != 2 || reduce.called_computation() == nullptr) return std::nullopt;
  PrimitiveType type = reduce.operand(0)->shape().element_type();
  if (type != PrimitiveType::kF32 && type != PrimitiveType::kF64) return std::nullopt;
  const hlo::HloInstruction* root = reduce.called_computation()->root();
  if (root == nullptr || root->operand_count() != 2 ||
      (root->opcode() != HloOpcode::kMaximum && root->opcode() != HloOpcode::kMinimum)) {
    return std::nullopt;
  }
  const hlo::HloInstruction* a = root->operand(0);
  const hlo::HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a->parameter_number() == b->parameter_number() || root->shape().element_type() != type) {
    return std::nullopt;
  }
  return OrderedKeys{root->opcode() == HloOpcode::kMaximum, type,
                     type == PrimitiveType::kF32 ? PrimitiveType::kS32 : PrimitiveType::kS64};
}

namespace {

// Flips the magnitude bits of a negative value's bits: its own inverse, and monotonic from
// float order to signed integer order.
llvm::Value* FlipNegative(llvm::IRBuilderBase& b, llvm::Value* bits) {
  unsigned width = bits->getType()->getIntegerBitWidth();
  llvm::Value* sign_fill = b.CreateAShr(bits, width - 1);
  llvm::Value* magnitude =
      llvm::ConstantInt::get(bits->getType(), llvm::APInt::getSignedMaxValue(width));
  return b.CreateXor(bits, b.CreateAnd(sign_fill, magnitude));
}

}  // namespace

ScalarValue EncodeKey(llvm::IRBuilderBase& b, const OrderedKeys& keys, const ScalarValue& value) {
  llvm::Type* float_type = value.value->getType();
  unsigned width = float_type->getPrimitiveSizeInBits();
  llvm::Type* int_type = b.getIntNTy(width);
  llvm::Value* key = FlipNegative(b, b.CreateBitCast(value.value, int_type));
  // NaN wins: above every key for max, below every key for min.
  llvm::Value* winner =
      llvm::ConstantInt::get(int_type, keys.is_max ? llvm::APInt::getSignedMaxValue(width)
                                                   : llvm::APInt::getSignedMinValue(width));
  return {b.CreateSelect(b.CreateFCmpUNO(value.value, value.value), winner, key), keys.key_type};
}

ScalarValue DecodeKey(llvm::IRBuilderBase& b, const OrderedKeys& keys, const ScalarValue& key) {
  llvm::Type* float_type =
      keys.float_type == PrimitiveType::kF32 ? b.getFloatTy() : b.getDoubleTy();
  // The winning NaN keys decode to all-ones magnitudes: NaNs.
  return {b.CreateBitCast(FlipNegative(b, key.value), float_type), keys.float_type};
}

ScalarValue CombineKeys(llvm::IRBuilderBase& b, const OrderedKeys& keys, const ScalarValue& lhs,
                        const ScalarValue& rhs) {
  llvm::Intrinsic::ID id = keys.is_max ? llvm::Intrinsic::smax : llvm::Intrinsic::smin;
  return {b.CreateBinaryIntrinsic(id, lhs.value, rhs.value), keys.key_type};
}

}  // namespace tilesmith::codegen
