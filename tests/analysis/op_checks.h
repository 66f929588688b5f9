// Checks of per-op indexing maps against the evaluator, shared by the op and fusion tests.
// Every parameter holds its own element ids (see `EvaluateOnIotas`), so an output value
// says which element it came from.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "compiler/analysis/op_indexing.h"
#include "tests/analysis/analysis_test_util.h"

namespace tilesmith::analysis::testing {

/// Small random numbers and the HLO text pieces the op tests build from them.
class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  std::vector<int64_t> Dims(int64_t min_rank, int64_t max_rank, int64_t max_size) {
    std::vector<int64_t> dims(Uniform(min_rank, max_rank));
    for (int64_t& d : dims) d = Uniform(1, max_size);
    return dims;
  }
  std::vector<int64_t> Permutation(int64_t n) {
    std::vector<int64_t> p(n);
    for (int64_t i = 0; i < n; ++i) p[i] = i;
    std::shuffle(p.begin(), p.end(), rng_);
    return p;
  }
  /// A sorted random subset of [0, n).
  std::vector<int64_t> Subset(int64_t n) {
    std::vector<int64_t> subset;
    for (int64_t i = 0; i < n; ++i) {
      if (Uniform(0, 1) == 1) subset.push_back(i);
    }
    return subset;
  }

 private:
  std::mt19937 rng_;
};

/// `1,2,3`.
inline std::string Join(std::span<const int64_t> values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

/// `s32[2,3]`.
inline std::string ShapeText(std::span<const int64_t> dims, const std::string& type = "s32") {
  return type + "[" + Join(dims) + "]";
}

/// Runs `root_line` (the ROOT instruction, named `r`) over parameters `p0…` of `params`.
inline Evaluation EvaluateOp(const std::vector<std::string>& params, const std::string& root_line,
                             const std::map<int64_t, std::vector<int64_t>>& overrides = {},
                             const std::string& helpers = "") {
  std::string text = helpers + "ENTRY e {\n";
  for (size_t k = 0; k < params.size(); ++k) {
    text +=
        "  p" + std::to_string(k) + " = " + params[k] + " parameter(" + std::to_string(k) + ")\n";
  }
  text += "  ROOT r = " + root_line + "\n}\n";
  SCOPED_TRACE(text);
  return EvaluateOnIotas(text, overrides);
}

inline std::vector<int64_t> DimsOf(const hlo::Shape& shape) {
  return shape.IsArray() ? std::vector<int64_t>(shape.dims().begin(), shape.dims().end())
                         : std::vector<int64_t>{};
}

/// Each output element is one operand element: the one the maps point to. With
/// `exclusive`, no other array operand's map reads anything there (its constraints exclude
/// the point); scalar operands (padding values, offsets) are not checked for that.
inline void ExpectSelects(const Evaluation& e, bool exclusive = true) {
  ASSERT_NE(e.computation, nullptr);
  const hlo::HloInstruction* root = e.computation->root();
  std::vector<IndexingMap> maps = OutputToInputIndexing(*root);
  ASSERT_EQ(static_cast<int64_t>(maps.size()), root->operand_count());
  std::vector<int64_t> out_dims = DimsOf(root->shape());
  int64_t failures = 0;
  ForEachIndex(out_dims, [&](std::span<const int64_t> out, int64_t linear) {
    if (failures > 3) return;
    int64_t value = e.result.GetInt(linear);
    int64_t source = value / kParameterStride - 1;
    for (int64_t q = 0; q < root->operand_count(); ++q) {
      const hlo::HloInstruction* operand = root->operand(q);
      std::vector<int64_t> dims = DimsOf(operand->shape());
      std::set<int64_t> reads = ReadSet(maps[q], out, dims, e.args);
      bool is_source = operand->parameter_number() == source;
      bool ok = is_source ? reads == std::set<int64_t>{value % kParameterStride}
                          : (!exclusive || dims.empty() || reads.empty());
      if (!ok) {
        ++failures;
        ADD_FAILURE() << "output " << ::testing::PrintToString(std::vector(out.begin(), out.end()))
                      << " holds " << value << "; operand " << q << " map " << maps[q].ToString()
                      << " reads " << ::testing::PrintToString(reads);
      }
    }
  });
}

/// Each output element is the sum over the operands of the elements their maps read (all
/// symbol values in the domain): reductions with `add`, elementwise `add`.
inline void ExpectSumOfReads(const Evaluation& e) {
  ASSERT_NE(e.computation, nullptr);
  const hlo::HloInstruction* root = e.computation->root();
  std::vector<IndexingMap> maps = OutputToInputIndexing(*root);
  int64_t failures = 0;
  ForEachIndex(DimsOf(root->shape()), [&](std::span<const int64_t> out, int64_t linear) {
    int64_t sum = 0;
    for (int64_t q = 0; q < root->operand_count(); ++q) {
      const hlo::Literal& arg = e.args[root->operand(q)->parameter_number()];
      for (int64_t i : ReadSet(maps[q], out, DimsOf(arg.shape()), e.args)) sum += arg.GetInt(i);
    }
    if (sum != e.result.GetInt(linear) && failures++ < 3) {
      ADD_FAILURE() << "output " << ::testing::PrintToString(std::vector(out.begin(), out.end()))
                    << " is " << e.result.GetInt(linear) << ", the maps read a sum of " << sum
                    << "; input map " << maps[0].ToString();
    }
  });
}

/// Changing one element of operand `q` changes only outputs whose map for `q` reads it.
inline void ExpectDependenciesCovered(const Evaluation& e, int64_t q) {
  ASSERT_NE(e.computation, nullptr);
  const hlo::HloInstruction* root = e.computation->root();
  IndexingMap map = OutputToInputIndexing(*root)[q];
  ASSERT_FALSE(map.IsUndefined());
  int64_t param = root->operand(q)->parameter_number();
  std::vector<int64_t> in_dims = DimsOf(e.args[param].shape());
  std::vector<int64_t> out_dims = DimsOf(root->shape());
  for (int64_t j = 0; j < e.args[param].element_count(); ++j) {
    std::vector<hlo::Literal> changed_args = e.args;
    hlo::Literal& arg = changed_args[param];
    if (hlo::IsFloatingPoint(arg.element_type())) {
      arg.SetDouble(j, arg.GetDouble(j) + 1);
    } else {
      arg.SetInt(j, arg.GetInt(j) + 1);
    }
    hlo::Literal changed = MustEvaluate(*e.computation, changed_args);
    ForEachIndex(out_dims, [&](std::span<const int64_t> out, int64_t linear) {
      if (changed.GetBits(linear) == e.result.GetBits(linear)) return;
      ASSERT_TRUE(ReadSet(map, out, in_dims, e.args).count(j))
          << "operand element " << j << " changes output "
          << ::testing::PrintToString(std::vector(out.begin(), out.end()))
          << " but the map does not read it: " << map.ToString();
    });
  }
}

/// InputToOutputIndexing(q) and OutputToInputIndexing()[q] describe the same pairs of
/// (operand element, output element).
inline void ExpectInverseRelations(const hlo::HloInstruction& root, int64_t q) {
  IndexingMap forward = OutputToInputIndexing(root)[q];
  IndexingMap backward = InputToOutputIndexing(root, q);
  ASSERT_FALSE(backward.IsUndefined()) << hlo::HloOpcodeName(root.opcode());
  std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> from_outputs, from_inputs;
  ForEachPointInBox(forward, [&](std::span<const int64_t> d, std::span<const int64_t> s) {
    if (forward.Contains(d, s)) {
      from_outputs.insert({forward.Evaluate(d, s), std::vector(d.begin(), d.end())});
    }
  });
  ForEachPointInBox(backward, [&](std::span<const int64_t> d, std::span<const int64_t> s) {
    if (backward.Contains(d, s)) {
      from_inputs.insert({std::vector(d.begin(), d.end()), backward.Evaluate(d, s)});
    }
  });
  EXPECT_EQ(from_outputs, from_inputs)
      << "output->input: " << forward.ToString() << "\ninput->output: " << backward.ToString();
}

}  // namespace tilesmith::analysis::testing
