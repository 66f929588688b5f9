// Elements in memory: addressing through layouts (tiles, E(n) packing), the bit codecs of
// the narrow float types, constants and iota.
#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <map>
#include <numeric>

#include "compiler/analysis/layout_indexing.h"
#include "compiler/codegen/elemental_internal.h"
#include "compiler/hlo/float_types.h"
#include "compiler/hlo/tiling.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;
using analysis::AffineExprKind;
using hlo::PrimitiveType;

// Tables of the one-byte float types: all 256 decoded values, and the encoding of every
// f32 by its top 16 bits plus a sticky bit (enough to round to at most 4 mantissa bits).
llvm::GlobalVariable* DecodeTable(llvm::Module& module, PrimitiveType type) {
  std::string name = "tilesmith." + std::string(hlo::PrimitiveTypeName(type)) + ".decode";
  if (auto* existing = module.getNamedGlobal(name)) return existing;
  llvm::LLVMContext& context = module.getContext();
  std::vector<llvm::Constant*> values;
  for (uint32_t bits = 0; bits < 256; ++bits) {
    values.push_back(llvm::ConstantFP::get(llvm::Type::getFloatTy(context),
                                           hlo::DecodeNarrowFloat(type, bits & 0xFF)));
  }
  auto* array_type = llvm::ArrayType::get(llvm::Type::getFloatTy(context), 256);
  return new llvm::GlobalVariable(module, array_type, /*isConstant=*/true,
                                  llvm::GlobalValue::InternalLinkage,
                                  llvm::ConstantArray::get(array_type, values), name);
}

llvm::GlobalVariable* EncodeTable(llvm::Module& module, PrimitiveType type) {
  std::string name = "tilesmith." + std::string(hlo::PrimitiveTypeName(type)) + ".encode";
  if (auto* existing = module.getNamedGlobal(name)) return existing;
  std::vector<uint8_t> codes(1 << 17);
  for (uint32_t key = 0; key < codes.size(); ++key) {
    // The representative f32 of the key: its top 16 bits, and a low bit when sticky.
    uint32_t bits = ((key >> 1) << 16) | (key & 1);
    codes[key] = static_cast<uint8_t>(hlo::EncodeNarrowFloat(type, std::bit_cast<float>(bits)));
  }
  auto* data = llvm::ConstantDataArray::get(module.getContext(), codes);
  return new llvm::GlobalVariable(module, data->getType(), true, llvm::GlobalValue::InternalLinkage,
                                  data, name);
}

llvm::Value* EncodeKey(llvm::IRBuilderBase& b, llvm::Value* value) {
  llvm::Value* bits = b.CreateBitCast(value, b.getInt32Ty());
  llvm::Value* high = b.CreateShl(b.CreateLShr(bits, 16), 1);
  llvm::Value* sticky =
      b.CreateZExt(b.CreateICmpNE(b.CreateAnd(bits, 0xFFFF), b.getInt32(0)), b.getInt32Ty());
  return b.CreateOr(high, sticky);
}

// The largest power-of-two factor every value of `expr` is known to have (capped).
int64_t KnownDivisor(const AffineExpr& expr) {
  constexpr int64_t kCap = 1 << 20;
  switch (expr.kind()) {
    case AffineExprKind::kConstant:
      return expr.value() == 0 ? kCap : std::min<int64_t>(kCap, expr.value() & -expr.value());
    case AffineExprKind::kAdd:
      return std::min(KnownDivisor(expr.lhs()), KnownDivisor(expr.rhs()));
    case AffineExprKind::kMul: {
      int64_t factor = std::abs(expr.value());
      return std::min<int64_t>(kCap, KnownDivisor(expr.lhs()) * (factor & -factor));
    }
    default:
      return 1;
  }
}

struct Address {
  llvm::Value* byte_pointer;  // i8*
  llvm::Value* bit_shift;     // within the byte, for packed elements; null otherwise
  int64_t bits;               // bits per element slot
  uint64_t alignment;         // bytes
};

Expected<Address> AddressOf(ElementalEmitter& emitter, const BufferRef& buffer,
                            std::span<const AffineExpr> index) {
  const hlo::Shape& shape = *buffer.shape;
  const analysis::IndexingMap& map = SlotMap(shape);
  if (map.IsUndefined()) {
    return Unimplemented("no layout map for " + hlo::ShapeToString(shape));
  }
  AffineExpr slot = emitter.Simplify(map.result(0).Substitute(index, {}));
  auto physical = hlo::PhysicalLayout::Create(shape);
  if (!physical) return std::unexpected(physical.error());
  int64_t bits = physical->element_bits();
  llvm::IRBuilder<>& b = emitter.builder();
  Address address{nullptr, nullptr, bits, 1};
  if (bits % 8 == 0) {
    AffineExpr offset = emitter.Simplify(slot * (bits / 8));
    // A constant part (an unrolled row or vector lane) becomes its own GEP off a base that
    // unrolled accesses share: the vectorisers then see consecutive addresses, which an
    // `or` that instcombine makes of a single sum would hide from them.
    AffineExpr variable = offset;
    int64_t constant = 0;
    if (offset.kind() == analysis::AffineExprKind::kAdd && offset.rhs().IsConstant()) {
      variable = offset.lhs();
      constant = offset.rhs().value();
    }
    llvm::Value* base =
        b.CreateInBoundsGEP(b.getInt8Ty(), buffer.base, emitter.env().Emit(variable));
    address.byte_pointer =
        constant == 0 ? base : b.CreateInBoundsGEP(b.getInt8Ty(), base, b.getInt64(constant));
    // Buffers are allocated 64-byte aligned.
    address.alignment = static_cast<uint64_t>(std::min<int64_t>(64, KnownDivisor(offset)));
    return address;
  }
  AffineExpr bit_offset = slot * bits;
  address.byte_pointer =
      b.CreateInBoundsGEP(b.getInt8Ty(), buffer.base, emitter.env().Emit(bit_offset.FloorDiv(8)));
  address.bit_shift = b.CreateTrunc(emitter.env().Emit(bit_offset.Mod(8)), b.getInt8Ty());
  return address;
}

}  // namespace

// Cached per shape text: layouts are the same for many loads.
const analysis::IndexingMap& SlotMap(const hlo::Shape& shape) {
  static thread_local std::map<std::string, analysis::IndexingMap> cache;
  std::string key = hlo::ShapeToString(shape);
  auto it = cache.find(key);
  if (it == cache.end()) {
    auto map = analysis::LogicalToLinearIndexing(shape);
    it = cache.emplace(key, map ? *map : analysis::IndexingMap::Undefined()).first;
  }
  return it->second;
}

llvm::Value* MakeComplex(llvm::IRBuilderBase& b, llvm::Value* re, llvm::Value* im) {
  llvm::Type* pair = llvm::StructType::get(b.getContext(), {re->getType(), im->getType()});
  return b.CreateInsertValue(b.CreateInsertValue(llvm::UndefValue::get(pair), re, 0), im, 1);
}

llvm::Value* DecodeNarrowFloatBits(llvm::IRBuilderBase& b, llvm::Value* bits, PrimitiveType type) {
  // Callers hand in the type's own bits (i4 for f4e2m1fn) or a wider slot's low bits.
  bits = b.CreateZExtOrTrunc(bits, b.getIntNTy(std::max(8, hlo::BitWidth(type))));
  if (type == PrimitiveType::kBF16) {
    llvm::Value* wide = b.CreateShl(b.CreateZExt(bits, b.getInt32Ty()), 16);
    return b.CreateBitCast(wide, b.getFloatTy());
  }
  if (type == PrimitiveType::kF16) {
    return b.CreateFPExt(b.CreateBitCast(bits, b.getHalfTy()), b.getFloatTy());
  }
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  llvm::GlobalVariable* table = DecodeTable(module, type);
  llvm::Value* position = b.CreateZExt(bits, b.getInt64Ty());
  llvm::Value* pointer =
      b.CreateInBoundsGEP(table->getValueType(), table, {b.getInt64(0), position});
  return b.CreateLoad(b.getFloatTy(), pointer);
}

llvm::Value* EncodeNarrowFloatBits(llvm::IRBuilderBase& b, llvm::Value* value, PrimitiveType type) {
  if (type == PrimitiveType::kBF16) {
    return b.CreateTrunc(b.CreateLShr(b.CreateBitCast(value, b.getInt32Ty()), 16), b.getInt16Ty());
  }
  if (type == PrimitiveType::kF16) {
    return b.CreateBitCast(b.CreateFPTrunc(value, b.getHalfTy()), b.getInt16Ty());
  }
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  llvm::GlobalVariable* table = EncodeTable(module, type);
  llvm::Value* key = b.CreateZExt(EncodeKey(b, value), b.getInt64Ty());
  llvm::Value* pointer = b.CreateInBoundsGEP(table->getValueType(), table, {b.getInt64(0), key});
  return b.CreateLoad(b.getInt8Ty(), pointer);
}

int NvptxSmOf(const llvm::Module& module) {
  auto* flag =
      llvm::mdconst::extract_or_null<llvm::ConstantInt>(module.getModuleFlag(kNvptxSmModuleFlag));
  return flag == nullptr ? 0 : static_cast<int>(flag->getZExtValue());
}

llvm::Value* RoundToNarrowFloat(llvm::IRBuilderBase& b, llvm::Value* value, PrimitiveType type) {
  if (type == PrimitiveType::kBF16 && NvptxSmOf(*b.GetInsertBlock()->getModule()) >= 80) {
    // sm_80 rounds in one instruction (cvt.rn.bf16.f32, nearest even) where the integer
    // sequence below takes eight; bf16-heavy loop fusions were bound by those. Its NaN is
    // the canonical one whatever the sign, which verification treats as any other NaN.
    // The intrinsic (not assembly) lets the NVPTX packing pass (nvptx_packing.h) pair two
    // into one cvt.rn.bf16x2.f32. LLVM 16 declares it without `willreturn` or `nounwind`:
    // said at the call, the load/store vectoriser and that pass look past it.
    llvm::CallInst* bits = b.CreateIntrinsic(llvm::Intrinsic::nvvm_f2bf16_rn, {}, {value});
    bits->setDoesNotThrow();
    bits->addFnAttr(llvm::Attribute::WillReturn);
    return DecodeNarrowFloatBits(b, bits, type);
  }
  if (type == PrimitiveType::kBF16) {
    // Round to nearest even on the 16 dropped bits; NaN becomes the quiet NaN of its sign.
    llvm::Value* bits = b.CreateBitCast(value, b.getInt32Ty());
    llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
    llvm::Value* rounded = b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7FFF)));
    rounded = b.CreateAnd(rounded, b.getInt32(0xFFFF0000u));
    llvm::Value* nan =
        b.CreateOr(b.CreateAnd(bits, b.getInt32(0x80000000u)), b.getInt32(0x7FC00000));
    llvm::Value* is_nan = b.CreateFCmpUNO(value, value);
    return b.CreateBitCast(b.CreateSelect(is_nan, nan, rounded), b.getFloatTy());
  }
  if (type == PrimitiveType::kF16) {
    return b.CreateFPExt(b.CreateFPTrunc(value, b.getHalfTy()), b.getFloatTy());
  }
  return DecodeNarrowFloatBits(b, EncodeNarrowFloatBits(b, value, type), type);
}

llvm::Value* ToStorageBits(llvm::IRBuilderBase& b, ScalarValue value, int64_t slot_bits) {
  PrimitiveType type = value.type;
  llvm::Value* bits;
  if (hlo::IsComplex(type)) {
    int part_bits = hlo::BitWidth(type) / 2;
    llvm::Type* part = b.getIntNTy(part_bits);
    llvm::Type* whole = b.getIntNTy(2 * part_bits);
    llvm::Value* re =
        b.CreateZExt(b.CreateBitCast(b.CreateExtractValue(value.value, 0), part), whole);
    llvm::Value* im =
        b.CreateZExt(b.CreateBitCast(b.CreateExtractValue(value.value, 1), part), whole);
    bits = b.CreateOr(re, b.CreateShl(im, part_bits));
  } else if (type == PrimitiveType::kF32 || type == PrimitiveType::kF64) {
    bits = b.CreateBitCast(value.value, b.getIntNTy(hlo::BitWidth(type)));
  } else if (hlo::IsNarrowFloat(type)) {
    bits = b.CreateZExtOrTrunc(EncodeNarrowFloatBits(b, value.value, type),
                               b.getIntNTy(hlo::BitWidth(type)));
  } else {
    bits = value.value;  // integers and pred (i1): their own bits
  }
  return b.CreateZExtOrTrunc(bits, b.getIntNTy(static_cast<unsigned>(slot_bits)));
}

ScalarValue FromStorageBits(llvm::IRBuilderBase& b, llvm::Value* bits, PrimitiveType type) {
  // Any set bit of a slot makes a pred true (hlo::FromPhysicalBuffer).
  if (type == PrimitiveType::kPred) {
    return {b.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0)), type};
  }
  int natural = hlo::BitWidth(type);
  bits = b.CreateZExtOrTrunc(bits, b.getIntNTy(natural));
  if (hlo::IsComplex(type)) {
    llvm::Type* part = natural == 64 ? b.getFloatTy() : b.getDoubleTy();
    llvm::Type* part_int = b.getIntNTy(natural / 2);
    llvm::Value* re = b.CreateBitCast(b.CreateTrunc(bits, part_int), part);
    llvm::Value* im =
        b.CreateBitCast(b.CreateTrunc(b.CreateLShr(bits, natural / 2), part_int), part);
    return {MakeComplex(b, re, im), type};
  }
  if (type == PrimitiveType::kF32 || type == PrimitiveType::kF64) {
    return {b.CreateBitCast(bits, ComputeType(b.getContext(), type)), type};
  }
  if (hlo::IsNarrowFloat(type)) return {DecodeNarrowFloatBits(b, bits, type), type};
  return {bits, type};
}

Expected<ScalarValue> ElementalEmitter::Load(const BufferRef& buffer,
                                             std::span<const AffineExpr> index) {
  TS_ASSIGN_OR_RETURN(Address address, AddressOf(*this, buffer, index));
  llvm::IRBuilder<>& b = builder_;
  llvm::Value* raw;
  if (address.bit_shift != nullptr) {
    llvm::Value* byte = b.CreateLoad(b.getInt8Ty(), address.byte_pointer);
    raw = b.CreateTrunc(b.CreateLShr(byte, address.bit_shift), b.getIntNTy(address.bits));
  } else {
    raw = b.CreateAlignedLoad(b.getIntNTy(address.bits), address.byte_pointer,
                              llvm::Align(address.alignment));
  }
  return FromStorageBits(b, raw, buffer.shape->element_type());
}

Status ElementalEmitter::Store(const BufferRef& buffer, std::span<const AffineExpr> index,
                               ScalarValue value) {
  if (value.type != buffer.shape->element_type()) {
    return MakeError(ErrorCode::kInternal, "storing a " +
                                               std::string(hlo::PrimitiveTypeName(value.type)) +
                                               " into " + hlo::ShapeToString(*buffer.shape));
  }
  TS_ASSIGN_OR_RETURN(Address address, AddressOf(*this, buffer, index));
  llvm::IRBuilder<>& b = builder_;
  llvm::Value* bits = ToStorageBits(b, value, address.bits);
  if (address.bit_shift != nullptr) {
    // A packed element shares its byte: read, replace our bits, write. The emitters give
    // each thread whole bytes, so this does not race.
    llvm::Value* byte = b.CreateLoad(b.getInt8Ty(), address.byte_pointer);
    llvm::Value* mask =
        b.CreateShl(b.getInt8(static_cast<uint8_t>((1u << address.bits) - 1)), address.bit_shift);
    llvm::Value* field = b.CreateShl(b.CreateZExt(bits, b.getInt8Ty()), address.bit_shift);
    llvm::Value* merged =
        b.CreateOr(b.CreateAnd(byte, b.CreateNot(mask)), b.CreateAnd(field, mask));
    b.CreateStore(merged, address.byte_pointer);
    return OkStatus();
  }
  b.CreateAlignedStore(bits, address.byte_pointer, llvm::Align(address.alignment));
  return OkStatus();
}

Status ElementalEmitter::StoreSlots(const BufferRef& buffer, std::span<const AffineExpr> index,
                                    llvm::Value* slots) {
  TS_ASSIGN_OR_RETURN(Address address, AddressOf(*this, buffer, index));
  if (address.bit_shift != nullptr) {
    return MakeError(ErrorCode::kInternal, "a vector store of sub-byte elements into " +
                                               hlo::ShapeToString(*buffer.shape));
  }
  builder_.CreateAlignedStore(slots, address.byte_pointer, llvm::Align(address.alignment));
  return OkStatus();
}

Expected<llvm::Value*> ElementalEmitter::AtomicUpdate(const BufferRef& buffer,
                                                      std::span<const AffineExpr> index, int op,
                                                      ScalarValue value, int ordering) {
  PrimitiveType type = buffer.shape->element_type();
  if (value.type != type) {
    return MakeError(ErrorCode::kInternal, "atomic update of " + hlo::ShapeToString(*buffer.shape) +
                                               " with a " +
                                               std::string(hlo::PrimitiveTypeName(value.type)));
  }
  bool supported = type == PrimitiveType::kF32 || type == PrimitiveType::kF64 ||
                   (hlo::IsIntegral(type) && hlo::BitWidth(type) >= 8);
  if (!supported) {
    return Unimplemented("atomics on " + std::string(hlo::PrimitiveTypeName(type)) + " elements");
  }
  TS_ASSIGN_OR_RETURN(Address address, AddressOf(*this, buffer, index));
  uint64_t natural = static_cast<uint64_t>(hlo::BitWidth(type) / 8);
  return builder_.CreateAtomicRMW(
      static_cast<llvm::AtomicRMWInst::BinOp>(op), address.byte_pointer, value.value,
      llvm::Align(std::max(address.alignment, natural)),
      ordering < 0 ? llvm::AtomicOrdering::Monotonic : static_cast<llvm::AtomicOrdering>(ordering));
}

llvm::Constant* ConstantScalar(llvm::LLVMContext& context, const hlo::Literal& literal, int64_t i) {
  PrimitiveType type = literal.element_type();
  llvm::Type* compute = ComputeType(context, type);
  if (hlo::IsComplex(type)) {
    std::complex<double> value = literal.GetComplex(i);
    llvm::Type* part = type == PrimitiveType::kC64 ? llvm::Type::getFloatTy(context)
                                                   : llvm::Type::getDoubleTy(context);
    return llvm::ConstantStruct::get(
        llvm::cast<llvm::StructType>(compute),
        {llvm::ConstantFP::get(part, value.real()), llvm::ConstantFP::get(part, value.imag())});
  }
  if (hlo::IsFloatingPoint(type)) return llvm::ConstantFP::get(compute, literal.GetDouble(i));
  return llvm::ConstantInt::get(compute, static_cast<uint64_t>(literal.GetInt(i)),
                                hlo::IsSignedIntegral(type));
}

ScalarValue ConstantOfType(llvm::IRBuilderBase& b, PrimitiveType type, double value) {
  hlo::Literal literal(hlo::Shape::Scalar(type));
  literal.SetDouble(0, value);
  return ScalarValue{ConstantScalar(b.getContext(), literal, 0), type};
}

Expected<ScalarValue> EmitConstantElement(ElementalEmitter& emitter,
                                          const hlo::HloInstruction& constant,
                                          std::span<const AffineExpr> index) {
  const hlo::Literal* literal = constant.literal();
  if (literal == nullptr || literal->elided()) {
    return InvalidArgument("constant '" + constant.name() + "' has no value ({...})");
  }
  llvm::LLVMContext& context = emitter.builder().getContext();
  PrimitiveType type = literal->element_type();
  if (literal->element_count() == 1) return ScalarValue{ConstantScalar(context, *literal, 0), type};
  llvm::Module& module = emitter.module();
  std::string name = "tilesmith.constant." + constant.name();
  llvm::GlobalVariable* global = module.getNamedGlobal(name);
  llvm::Type* element = ComputeType(context, type);
  if (type == PrimitiveType::kPred) element = llvm::Type::getInt8Ty(context);
  auto* array_type = llvm::ArrayType::get(element, literal->element_count());
  if (global == nullptr) {
    std::vector<llvm::Constant*> values;
    for (int64_t i = 0; i < literal->element_count(); ++i) {
      llvm::Constant* value = ConstantScalar(context, *literal, i);
      if (type == PrimitiveType::kPred) value = llvm::ConstantInt::get(element, literal->GetInt(i));
      values.push_back(value);
    }
    global = new llvm::GlobalVariable(module, array_type, true, llvm::GlobalValue::InternalLinkage,
                                      llvm::ConstantArray::get(array_type, values), name);
  }
  // Literals are stored in logical row-major order.
  const hlo::Shape& shape = literal->shape();
  AffineExpr linear = AffineExpr::Constant(0);
  for (int64_t d = 0; d < shape.rank(); ++d) linear = linear * shape.dim(d) + index[d];
  llvm::IRBuilder<>& b = emitter.builder();
  llvm::Value* pointer = b.CreateInBoundsGEP(
      array_type, global, {b.getInt64(0), emitter.env().Emit(emitter.Simplify(linear))});
  llvm::Value* value = b.CreateLoad(element, pointer);
  if (type == PrimitiveType::kPred) value = b.CreateICmpNE(value, b.getInt8(0));
  return ScalarValue{value, type};
}

Expected<ScalarValue> EmitIotaElement(ElementalEmitter& emitter, const hlo::HloInstruction& iota,
                                      std::span<const AffineExpr> index) {
  llvm::IRBuilder<>& b = emitter.builder();
  PrimitiveType type = iota.shape().element_type();
  llvm::Value* position = emitter.env().Emit(index[iota.attributes().iota_dimension]);
  llvm::Type* compute = ComputeType(b.getContext(), type);
  if (hlo::IsIntegral(type)) return ScalarValue{b.CreateTrunc(position, compute), type};
  if (type == PrimitiveType::kPred) {
    return ScalarValue{b.CreateICmpNE(position, b.getInt64(0)), type};
  }
  if (hlo::IsComplex(type)) {
    llvm::Type* part = compute->getStructElementType(0);
    return ScalarValue{
        MakeComplex(b, b.CreateSIToFP(position, part), llvm::ConstantFP::get(part, 0.0)), type};
  }
  llvm::Value* value = b.CreateSIToFP(position, compute);
  if (hlo::IsNarrowFloat(type)) value = RoundToNarrowFloat(b, value, type);
  return ScalarValue{value, type};
}

}  // namespace tilesmith::codegen
