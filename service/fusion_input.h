// Reading the fusion of an API request: HLO text (`fusion`) or an AscGraph request
// (`ascgraph`, text or JSON, with optional `sizes`), lowered to HLO and fingerprinted.
// Everything is parsed from memory; nothing a client sends names a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::service {

/// A request's fusion, parsed.
struct FusionInput {
  std::unique_ptr<hlo::HloModule> module;
  std::string fingerprint;
  std::string name;           ///< The fusion computation's name.
  std::string source_format;  ///< "hlo" or "ascgraph".
  std::string hlo_text;       ///< HLO text a worker can parse (the lowered AscGraph for those).
};

/// Parses `request.fusion` or `request.ascgraph` (+ `request.sizes`). Errors are
/// kInvalidArgument and carry the parser's `line:col` message; a module of more than
/// `max_instructions` instructions (0: no limit) is kResourceExhausted, naming the limit.
Expected<FusionInput> ReadFusion(const nlohmann::json& request, int64_t max_instructions = 0);

/// The fingerprint and name of a fusion, remembered by the SHA-256 of the request fields
/// that determine it, so a repeated query skips parsing. Bounded: cleared when full.
class FingerprintCache {
 public:
  explicit FingerprintCache(int64_t max_instructions = 0, size_t capacity = 200000)
      : max_instructions_(max_instructions), capacity_(capacity) {}
  struct Entry {
    std::string fingerprint;
    std::string name;
  };
  /// The entry for `request`, parsing on a miss.
  Expected<Entry> Lookup(const nlohmann::json& request);

 private:
  int64_t max_instructions_;
  size_t capacity_;
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace tilesmith::service
