// Helpers shared by the AscGraph tests: paths, and comparing results with a dtype-aware
// tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/hlo/literal.h"

namespace tilesmith::ascgraph::testing {

/// A path inside the repository.
inline std::string SourcePath(const std::string& relative) {
  return std::string(TILESMITH_SOURCE_DIR) + "/" + relative;
}

/// The shared corpus folder ($TILESMITH_CORPUS_DIR, else ../shared/corpus), or "".
inline std::string CorpusDir() {
  if (const char* env = std::getenv("TILESMITH_CORPUS_DIR")) return env;
  if (std::filesystem::exists(TILESMITH_DEFAULT_CORPUS_DIR)) return TILESMITH_DEFAULT_CORPUS_DIR;
  return "";
}

/// Tuple results as one array per element, depth first.
inline void Flatten(const hlo::Literal& value, std::vector<const hlo::Literal*>& out) {
  if (value.shape().IsTuple()) {
    for (const hlo::Literal& element : value.tuple_elements()) Flatten(element, out);
  } else {
    out.push_back(&value);
  }
}

/// Integers and pred exactly; floats within a tolerance of their type (NumPy and the
/// evaluator may round transcendentals and sums differently in the last bits).
inline void ExpectNear(const hlo::Literal& actual, const hlo::Literal& expected) {
  ASSERT_EQ(actual.element_count(), expected.element_count());
  hlo::PrimitiveType type = expected.element_type();
  double rtol = 1e-5, atol = 1e-6;
  if (type == hlo::PrimitiveType::kF16) rtol = atol = 2e-3;
  if (type == hlo::PrimitiveType::kBF16) rtol = atol = 1.6e-2;
  if (type == hlo::PrimitiveType::kF64) rtol = atol = 1e-12;
  int failures = 0;
  for (int64_t i = 0; i < expected.element_count() && failures < 5; ++i) {
    if (!hlo::IsFloatingPoint(type)) {
      if (actual.GetInt(i) != expected.GetInt(i)) {
        ++failures;
        ADD_FAILURE() << "element " << i << ": " << actual.GetInt(i)
                      << " != " << expected.GetInt(i);
      }
      continue;
    }
    double a = actual.GetDouble(i), e = expected.GetDouble(i);
    bool same =
        (std::isnan(a) && std::isnan(e)) || a == e || std::abs(a - e) <= atol + rtol * std::abs(e);
    if (!same) {
      ++failures;
      ADD_FAILURE() << "element " << i << ": " << a << " vs expected " << e;
    }
  }
}

}  // namespace tilesmith::ascgraph::testing
