// Ops that re-read bits: bitcast-convert (logical: an element's bits, little-endian, re-split
// or joined along a minor dim, as hlo::Evaluate does) and bitcast (physical: the bytes of
// the operand's buffer read under the result's layout). Both go through the storage bits of
// elements (ToStorageBits / FromStorageBits), so every element type is handled alike.
#include "compiler/analysis/layout_indexing.h"
#include "compiler/analysis/op_indexing.h"
#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"
#include "compiler/hlo/tiling.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;
using hlo::HloInstruction;
using hlo::PrimitiveType;

// `value` (an integer) shifted right by the i64 `amount` and cut to `bits`.
llvm::Value* ExtractBits(llvm::IRBuilderBase& b, llvm::Value* value, llvm::Value* amount,
                         int64_t bits) {
  llvm::Value* shift = b.CreateZExtOrTrunc(amount, value->getType());
  return b.CreateTrunc(b.CreateLShr(value, shift), b.getIntNTy(static_cast<unsigned>(bits)));
}

// The bits of operand slot `slot` of a bitcast (`slot_bits` wide): zero for a padding slot.
Expected<llvm::Value*> OperandSlotBits(ElementalEmitter& emitter, const HloInstruction& operand,
                                       const analysis::IndexingMap& slot_to_index,
                                       const AffineExpr& slot, int64_t slot_bits) {
  std::vector<AffineExpr> at = {emitter.Simplify(slot)};
  std::vector<AffineExpr> index = ApplyMap(emitter, slot_to_index, at, {});
  auto read = [&]() -> Expected<llvm::Value*> {
    TS_ASSIGN_OR_RETURN(ScalarValue value, emitter.EmitElement(operand, index));
    return ToStorageBits(emitter.builder(), value, slot_bits);
  };
  llvm::Value* holds = ConstraintsHold(emitter, slot_to_index, at, {});
  if (holds == nullptr) return read();
  llvm::IRBuilder<>& b = emitter.builder();
  return EmitIfElse(
      b, holds,
      [&]() -> Expected<llvm::Value*> {
        emitter.PushScope();
        auto bits = read();
        emitter.PopScope();
        return bits;
      },
      [&]() -> Expected<llvm::Value*> { return b.getIntN(static_cast<unsigned>(slot_bits), 0); });
}

// A bitcast between element types of different storage: output index -> output slot ->
// its bits in the buffer -> the operand slots holding them -> those elements' bits.
Expected<ScalarValue> BitcastThroughMemory(ElementalEmitter& emitter, const HloInstruction& bitcast,
                                           std::span<const AffineExpr> index) {
  const HloInstruction& operand = *bitcast.operand(0);
  const hlo::Shape& from = operand.shape();
  const hlo::Shape& to = bitcast.shape();
  TS_ASSIGN_OR_RETURN(hlo::PhysicalLayout from_layout, hlo::PhysicalLayout::Create(from));
  TS_ASSIGN_OR_RETURN(hlo::PhysicalLayout to_layout, hlo::PhysicalLayout::Create(to));
  TS_ASSIGN_OR_RETURN(analysis::IndexingMap slot_to_index, analysis::LinearToLogicalIndexing(from));
  const analysis::IndexingMap& to_slot = SlotMap(to);
  if (to_slot.IsUndefined()) return Unimplemented("no layout map for " + hlo::ShapeToString(to));
  int64_t in_bits = from_layout.element_bits();
  int64_t out_bits = to_layout.element_bits();
  AffineExpr slot = emitter.Simplify(to_slot.result(0).Substitute(index, {}));
  llvm::IRBuilder<>& b = emitter.builder();
  llvm::Value* bits = nullptr;
  if (out_bits % in_bits == 0) {
    // Several operand slots make one output slot, the first in the low bits.
    int64_t pieces = out_bits / in_bits;
    bits = b.getIntN(static_cast<unsigned>(out_bits), 0);
    for (int64_t k = 0; k < pieces; ++k) {
      TS_ASSIGN_OR_RETURN(llvm::Value * piece, OperandSlotBits(emitter, operand, slot_to_index,
                                                               slot * pieces + k, in_bits));
      piece = b.CreateShl(b.CreateZExt(piece, bits->getType()), k * in_bits);
      bits = b.CreateOr(bits, piece);
    }
  } else if (in_bits % out_bits == 0) {
    // One operand slot holds several output slots.
    int64_t pieces = in_bits / out_bits;
    TS_ASSIGN_OR_RETURN(llvm::Value * whole, OperandSlotBits(emitter, operand, slot_to_index,
                                                             slot.FloorDiv(pieces), in_bits));
    AffineExpr shift = emitter.Simplify(slot.Mod(pieces) * out_bits);
    bits = ExtractBits(b, whole, emitter.env().Emit(shift), out_bits);
  } else {
    return Unimplemented("bitcast '" + bitcast.name() + "' between " + std::to_string(in_bits) +
                         "-bit and " + std::to_string(out_bits) + "-bit elements");
  }
  return FromStorageBits(b, bits, to.element_type());
}

}  // namespace

Expected<ScalarValue> EmitBitcastElement(ElementalEmitter& emitter,
                                         const hlo::HloInstruction& bitcast,
                                         std::span<const AffineExpr> index) {
  std::vector<analysis::IndexingMap> maps = analysis::OutputToInputIndexing(bitcast);
  if (maps[0].IsUndefined()) return BitcastThroughMemory(emitter, bitcast, index);
  // Equal storage: the map finds the operand element, whose slot bits are re-read.
  std::vector<AffineExpr> operand_index = ApplyMap(emitter, maps[0], index, {});
  TS_ASSIGN_OR_RETURN(ScalarValue value, emitter.EmitElement(*bitcast.operand(0), operand_index));
  PrimitiveType to = bitcast.shape().element_type();
  if (value.type == to) return value;
  TS_ASSIGN_OR_RETURN(hlo::PhysicalLayout layout, hlo::PhysicalLayout::Create(bitcast.shape()));
  llvm::IRBuilder<>& b = emitter.builder();
  return FromStorageBits(b, ToStorageBits(b, value, layout.element_bits()), to);
}

Expected<ScalarValue> EmitBitcastConvertElement(ElementalEmitter& emitter,
                                                const HloInstruction& instruction,
                                                std::span<const AffineExpr> index) {
  const HloInstruction& operand = *instruction.operand(0);
  PrimitiveType from = operand.shape().element_type();
  PrimitiveType to = instruction.shape().element_type();
  if (from == PrimitiveType::kPred || to == PrimitiveType::kPred) {
    return UnsupportedOp(instruction.opcode(), PrimitiveType::kPred);
  }
  int64_t from_bits = hlo::BitWidth(from);
  int64_t to_bits = hlo::BitWidth(to);
  llvm::IRBuilder<>& b = emitter.builder();
  llvm::Value* bits = nullptr;
  if (from_bits == to_bits) {
    TS_ASSIGN_OR_RETURN(ScalarValue value, emitter.EmitElement(operand, index));
    bits = ToStorageBits(b, value, from_bits);
  } else if (from_bits > to_bits) {
    // The result's minor dim picks a piece of the operand element, low-order first.
    std::span<const AffineExpr> outer = index.first(index.size() - 1);
    TS_ASSIGN_OR_RETURN(ScalarValue value, emitter.EmitElement(operand, outer));
    llvm::Value* shift = emitter.env().Emit(emitter.Simplify(index.back() * to_bits));
    bits = ExtractBits(b, ToStorageBits(b, value, from_bits), shift, to_bits);
  } else {
    // The operand's minor dim holds the pieces of one result element.
    int64_t pieces = to_bits / from_bits;
    std::vector<AffineExpr> inner(index.begin(), index.end());
    inner.push_back(AffineExpr::Constant(0));
    bits = b.getIntN(static_cast<unsigned>(to_bits), 0);
    for (int64_t k = 0; k < pieces; ++k) {
      inner.back() = AffineExpr::Constant(k);
      TS_ASSIGN_OR_RETURN(ScalarValue piece, emitter.EmitElement(operand, inner));
      bits = b.CreateOr(bits, b.CreateShl(ToStorageBits(b, piece, to_bits), k * from_bits));
    }
  }
  return FromStorageBits(b, bits, to);
}

}  // namespace tilesmith::codegen
