// The readers as fuzz targets, one function each, shared by the seeded gtest loops
// (reader_fuzz_test.cc) and the libFuzzer entry points (libfuzzer_*.cc). Each returns what
// the back end can take further: the HLO text of a module that parsed, else nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "compiler/ascgraph/lower.h"
#include "compiler/ascgraph/reader.h"
#include "compiler/hlo/npy.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/shape.h"

namespace tilesmith::fuzz {

/// HLO text through the parser: the text itself when it parses.
inline std::optional<std::string> ReadHloTarget(std::string_view text) {
  auto module = hlo::ParseHloModule(text, "fuzz.hlo");
  if (!module) return std::nullopt;
  return std::string(text);
}

/// An AscGraph request (text format, or JSON when `json`) read, its unbound size variables
/// bound to `size`, then validated and lowered: the lowered HLO text when all of that works.
inline std::optional<std::string> ReadAscGraphTarget(std::string_view bytes, bool json,
                                                     int64_t size = 4) {
  ascgraph::ReadOptions options;
  options.format = json ? ascgraph::RequestFormat::kJson : ascgraph::RequestFormat::kText;
  auto request =
      ascgraph::ReadRequest(bytes, json ? "fuzz.ascgraph.json" : "fuzz.ascgraph.txt", options);
  if (!request) return std::nullopt;
  for (const std::string& name : request->graph.size_vars) request->sizes.try_emplace(name, size);
  auto text = ascgraph::LowerToHloText(*request);
  if (!text) return std::nullopt;
  return *text;
}

/// `.npy` bytes decoded as they come, then against an expected f32[2,3] and s4[5]; true when
/// the first decode worked.
inline bool ReadNpyTarget(std::span<const uint8_t> bytes) {
  bool parsed = hlo::ParseNpy(bytes).has_value();
  for (std::string_view shape : {"f32[2,3]", "s4[5]"}) {
    if (auto expected = hlo::ParseShape(shape)) (void)hlo::ParseNpy(bytes, *expected);
  }
  return parsed;
}

}  // namespace tilesmith::fuzz
