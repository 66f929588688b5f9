// Partition specs in JAX's notation: for each array dim, the mesh axes it is split over
// (major first), or none. `P('i', None)`, `P(('j','i'), None)`, `P()`; in JSON
// `["i", null]`, `[["j","i"], null]`, `[]`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "split/mesh.h"
#include "support/status.h"

namespace tilesmith::split {

/// One spec. A spec shorter than the array's rank leaves the remaining dims unsplit, as in
/// JAX; `P()` is fully replicated.
struct PartitionSpec {
  /// Per dim, the axes it is split over, major first; empty: not split.
  std::vector<std::vector<std::string>> dims;

  /// The axes of dim `d` (empty past the end).
  const std::vector<std::string>& AxesOf(int64_t d) const;
  /// `dims` padded with unsplit dims to `rank`.
  PartitionSpec Padded(int64_t rank) const;
  /// Drops trailing unsplit dims, so equal splits print and compare equal.
  PartitionSpec Normalized() const;
  friend bool operator==(const PartitionSpec&, const PartitionSpec&) = default;
};

/// `P('i', None)`, `P(('j', 'i'), None)`, `P()`.
std::string SpecToString(const PartitionSpec& spec);
/// `["i", null]`, `[["j","i"], null]`.
nlohmann::json SpecToJson(const PartitionSpec& spec);

/// Parses the text notation; errors name the column. Axis names are quoted ('i' or "i").
Expected<PartitionSpec> ParseSpec(std::string_view text);
/// Parses the JSON notation; errors name the entry.
Expected<PartitionSpec> ParseSpecJson(const nlohmann::json& value);
/// `P('i',None);P('j',None)`: one spec per array, separated by ';'.
Expected<std::vector<PartitionSpec>> ParseSpecList(std::string_view text);

/// Checks `spec` for an array of `dims` on `mesh`: no more entries than dims, known axes,
/// each axis at most once, every split dim divisible by its axes' sizes. Messages name the
/// dim and the axis; `what` names the array ("parameter 0").
Status ValidateSpec(const PartitionSpec& spec, std::span<const int64_t> dims, const Mesh& mesh,
                    std::string_view what = "array");

/// How many blocks dim `d` is split into (product of its axes' sizes).
int64_t SplitFactor(const PartitionSpec& spec, int64_t d, const Mesh& mesh);

/// Each device's block: `dim / SplitFactor` per dim. The spec must be valid for `dims`.
std::vector<int64_t> BlockShape(const PartitionSpec& spec, std::span<const int64_t> dims,
                                const Mesh& mesh);

/// `(3,12)`.
std::string DimsToString(std::span<const int64_t> dims);

}  // namespace tilesmith::split
