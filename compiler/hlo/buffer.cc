#include "compiler/hlo/buffer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "compiler/hlo/tiling.h"

namespace tilesmith::hlo {
namespace {

// Rejects what has no single dense buffer, then computes the layout's element placement.
Expected<PhysicalLayout> DenseLayoutOf(const Shape& shape) {
  if (!shape.IsArray()) {
    std::string message = "only arrays have a raw buffer, not ";
    message += ShapeToString(shape);
    return InvalidArgument(message);
  }
  if (!shape.layout().dim_level_types.empty()) {
    std::string message = "sparse layouts have no dense buffer: ";
    message += ShapeToString(shape);
    return Unimplemented(message);
  }
  return PhysicalLayout::Create(shape);
}

// Copies `bits` bits from `src` (starting at bit 0) to `dst` starting at bit `dst_bit`,
// least significant bit first. `dst` must be zero there: bits are only ever set.
void PutBits(uint8_t* dst, int64_t dst_bit, const uint8_t* src, int64_t bits) {
  for (int64_t b = 0; b < bits; ++b) {
    if ((src[b / 8] >> (b % 8)) & 1) {
      int64_t at = dst_bit + b;
      dst[at / 8] |= static_cast<uint8_t>(1u << (at % 8));
    }
  }
}

// Reads `bits` bits of `src` starting at bit `src_bit` into `dst` (zeroed) from bit 0.
void GetBits(const uint8_t* src, int64_t src_bit, uint8_t* dst, int64_t bits) {
  for (int64_t b = 0; b < bits; ++b) {
    int64_t at = src_bit + b;
    if ((src[at / 8] >> (at % 8)) & 1) dst[b / 8] |= static_cast<uint8_t>(1u << (b % 8));
  }
}

// Whether the buffer holds exactly the literal's bytes: a row-major layout whose slots are
// as wide as the unpacked values, with no bits of a slot unused (pred is normalised to 0/1
// on the way in, so its callers exclude it there).
bool SameBytes(const PhysicalLayout& physical, int64_t value_bits, int64_t unpacked_bytes) {
  return physical.is_row_major() && physical.element_bits() == 8 * unpacked_bytes &&
         value_bits == physical.element_bits();
}

}  // namespace

Expected<std::vector<uint8_t>> ToPhysicalBuffer(const Literal& literal) {
  if (literal.elided()) {
    std::string message = "constant of ";
    message += ShapeToString(literal.shape());
    message += " has elided contents ({...}); it has no buffer";
    return InvalidArgument(message);
  }
  TS_ASSIGN_OR_RETURN(PhysicalLayout physical, DenseLayoutOf(literal.shape()));
  std::vector<uint8_t> buffer(static_cast<size_t>(physical.byte_size()), 0);
  const int64_t slot_bits = physical.element_bits();
  const int64_t value_bits = BitWidth(literal.element_type());
  const int64_t unpacked_bytes = literal.element_bytes();
  // Sub-byte values keep only their own bits; the unpacked byte may be sign-extended.
  const uint8_t low_mask = value_bits < 8 ? static_cast<uint8_t>((1u << value_bits) - 1) : 0xFF;
  std::span<const uint8_t> data = literal.bytes();
  if (SameBytes(physical, value_bits, unpacked_bytes)) {
    if (!data.empty()) std::memcpy(buffer.data(), data.data(), data.size());
    return buffer;
  }
  std::vector<int64_t> slots = physical.SlotOfEveryElement();
  for (size_t i = 0; i < slots.size(); ++i) {
    const uint8_t* value = data.data() + i * unpacked_bytes;
    if (slot_bits % 8 == 0) {
      uint8_t* dst = buffer.data() + slots[i] * (slot_bits / 8);
      std::memcpy(dst, value, static_cast<size_t>(unpacked_bytes));
      dst[0] &= unpacked_bytes == 1 ? low_mask : 0xFF;
      continue;
    }
    std::array<uint8_t, 16> masked{};
    std::memcpy(masked.data(), value, static_cast<size_t>(unpacked_bytes));
    masked[0] &= unpacked_bytes == 1 ? low_mask : 0xFF;
    PutBits(buffer.data(), slots[i] * slot_bits, masked.data(), value_bits);
  }
  return buffer;
}

Expected<Literal> FromPhysicalBuffer(const Shape& shape, std::span<const uint8_t> bytes) {
  TS_ASSIGN_OR_RETURN(PhysicalLayout physical, DenseLayoutOf(shape));
  if (static_cast<int64_t>(bytes.size()) != physical.byte_size()) {
    std::string message = "buffer has ";
    message += std::to_string(bytes.size());
    message += " bytes but ";
    message += ShapeToString(shape);
    message += " occupies ";
    message += std::to_string(physical.byte_size());
    return InvalidArgument(message);
  }
  Literal literal(shape);
  const PrimitiveType type = shape.element_type();
  const int64_t slot_bits = physical.element_bits();
  // Pred reads its whole first byte (or narrower slot): any set bit means true.
  const int64_t value_bits =
      type == PrimitiveType::kPred ? std::min<int64_t>(slot_bits, 8) : BitWidth(type);
  const int64_t unpacked_bytes = literal.element_bytes();
  if (type != PrimitiveType::kPred && SameBytes(physical, value_bits, unpacked_bytes)) {
    if (!bytes.empty()) std::memcpy(literal.bytes().data(), bytes.data(), bytes.size());
    return literal;
  }
  std::vector<int64_t> slots = physical.SlotOfEveryElement();
  for (size_t i = 0; i < slots.size(); ++i) {
    std::array<uint8_t, 16> raw{};
    if (slot_bits % 8 == 0 && value_bits % 8 == 0) {
      std::memcpy(raw.data(), bytes.data() + slots[i] * (slot_bits / 8),
                  static_cast<size_t>(value_bits / 8));
    } else {
      GetBits(bytes.data(), slots[i] * slot_bits, raw.data(), value_bits);
    }
    if (type == PrimitiveType::kPred) {
      literal.bytes()[i] = raw[0] != 0 ? 1 : 0;
    } else if (unpacked_bytes <= 8) {
      uint64_t bits = 0;
      std::memcpy(&bits, raw.data(), sizeof(bits));
      literal.SetBits(static_cast<int64_t>(i), bits);  // sign-extends narrow signed types
    } else {
      std::memcpy(literal.bytes().data() + i * unpacked_bytes, raw.data(),
                  static_cast<size_t>(unpacked_bytes));
    }
  }
  return literal;
}

Expected<std::vector<uint8_t>> FilledPhysicalBuffer(const Shape& shape, double value) {
  Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetDouble(i, value);
  return ToPhysicalBuffer(literal);
}

}  // namespace tilesmith::hlo
