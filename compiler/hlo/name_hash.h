// Hashing and looking up the short names of HLO text (instruction names, opcodes, element
// types), which the parser does for every instruction and shape. Private to compiler/hlo.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace tilesmith::hlo {

/// A fast hash of a short name, eight bytes at a time.
inline uint64_t HashName(std::string_view name) {
  const char* data = name.data();
  size_t size = name.size();
  uint64_t hash = size * 0x9e3779b97f4a7c15ull;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    hash = (hash ^ word) * 0xff51afd7ed558ccdull;
    hash ^= hash >> 32;
  }
  if (i < size) {
    uint64_t word = 0;
    std::memcpy(&word, data + i, size - i);
    hash = (hash ^ word) * 0xc4ceb9fe1a85ec53ull;
  }
  return hash ^ (hash >> 29);
}

/// A fixed map from names to values, filled once: open addressing over `kSlots` slots (a
/// power of two, at least twice the number of names), so a lookup is a hash and a probe or
/// two, without the division and node chasing of std::unordered_map.
template <typename Value, size_t kSlots>
class StaticNameMap {
  static_assert((kSlots & (kSlots - 1)) == 0, "kSlots must be a power of two");

 public:
  void Add(std::string_view name, Value value) {
    for (size_t i = HashName(name) & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      if (!slots_[i].used) {
        slots_[i] = {name, value, true};
        return;
      }
    }
  }

  std::optional<Value> Find(std::string_view name) const {
    for (size_t i = HashName(name) & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      const Slot& slot = slots_[i];
      if (!slot.used) return std::nullopt;
      if (slot.name == name) return slot.value;
    }
  }

 private:
  struct Slot {
    std::string_view name;
    Value value{};
    bool used = false;
  };
  std::array<Slot, kSlots> slots_{};
};

}  // namespace tilesmith::hlo
