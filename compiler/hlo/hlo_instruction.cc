#include "compiler/hlo/hlo_instruction.h"

#include <array>

namespace tilesmith::hlo {
namespace {

constexpr std::array<std::string_view, 6> kDirections = {"EQ", "NE", "LT", "LE", "GT", "GE"};
constexpr std::array<std::string_view, 5> kComparisonTypes = {"", "FLOAT", "TOTALORDER", "SIGNED",
                                                              "UNSIGNED"};
constexpr std::array<std::string_view, 4> kFusionKinds = {"kLoop", "kInput", "kOutput", "kCustom"};

template <typename Enum, size_t N>
std::optional<Enum> FindName(const std::array<std::string_view, N>& names, std::string_view name,
                             size_t first = 0) {
  for (size_t i = first; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

const HloAttributes& HloInstruction::NoAttributes() {
  static const HloAttributes none;
  return none;
}

std::string_view ComparisonDirectionName(ComparisonDirection direction) {
  return kDirections[static_cast<size_t>(direction)];
}

std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view name) {
  return FindName<ComparisonDirection>(kDirections, name);
}

std::string_view ComparisonTypeName(ComparisonType type) {
  return kComparisonTypes[static_cast<size_t>(type)];
}

std::optional<ComparisonType> ParseComparisonType(std::string_view name) {
  return FindName<ComparisonType>(kComparisonTypes, name, /*first=*/1);
}

std::string_view FusionKindName(FusionKind kind) { return kFusionKinds[static_cast<size_t>(kind)]; }

std::optional<FusionKind> ParseFusionKind(std::string_view name) {
  return FindName<FusionKind>(kFusionKinds, name);
}

}  // namespace tilesmith::hlo
