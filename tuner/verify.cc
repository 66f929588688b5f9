#include "tuner/verify.h"

#include <algorithm>

#include "compiler/hlo/literal_compare.h"

namespace tilesmith::tuner {
namespace {

void Flatten(const hlo::Literal& value, std::vector<const hlo::Literal*>& outputs) {
  if (value.shape().IsTuple()) {
    for (const hlo::Literal& element : value.tuple_elements()) Flatten(element, outputs);
  } else {
    outputs.push_back(&value);
  }
}

}  // namespace

std::vector<const hlo::Literal*> FlattenOutputs(const hlo::Literal& value) {
  std::vector<const hlo::Literal*> outputs;
  Flatten(value, outputs);
  return outputs;
}

OutputComparison CompareOutputs(std::span<const hlo::Literal> actual,
                                std::span<const hlo::Literal* const> expected,
                                int64_t reassociated_terms) {
  OutputComparison result;
  if (actual.size() != expected.size()) {
    result.matches = false;
    result.first_mismatch = std::to_string(actual.size()) + " outputs where the reference has " +
                            std::to_string(expected.size());
    return result;
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    hlo::Comparison comparison = hlo::CompareLiterals(actual[i], *expected[i], reassociated_terms);
    result.largest_error = std::max(result.largest_error, comparison.largest_error);
    result.relative_tolerance = std::max(result.relative_tolerance, comparison.tolerance.relative);
    result.absolute_tolerance = std::max(result.absolute_tolerance, comparison.tolerance.absolute);
    result.mismatches += comparison.mismatches;
    if (!comparison.matches && result.matches) {
      result.first_mismatch = "output " + std::to_string(i) + " " + comparison.first_mismatch;
    }
    result.matches = result.matches && comparison.matches;
  }
  return result;
}

}  // namespace tilesmith::tuner
