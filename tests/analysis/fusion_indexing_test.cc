// Indexing through fused computations, checked against the evaluator: changing one
// parameter element must change exactly the outputs whose maps read it (only those, for
// fusions where every read matters), on small corpus-like fusions and on the XLA corpus.
#include "compiler/analysis/fusion_indexing.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/analysis/op_checks.h"

namespace tilesmith::analysis {
namespace {

using testing::DimsOf;
using testing::EvaluateOnIotas;
using testing::Evaluation;
using testing::ReadSet;

// The literal holding output `output` of a root (a tuple element, or the result itself).
const hlo::Literal& OutputLiteral(const hlo::Literal& result, int64_t output) {
  return result.shape().IsTuple() ? result.tuple_elements()[output] : result;
}

// For `changes` perturbed parameter elements (all of them when -1), the outputs that change
// must read the element. With `exact`, every output that reads an element of an array
// parameter must change too; scalars (padding values, offsets) are read where they may
// matter, so for them only the first direction holds. At most `max_outputs` outputs are
// checked per perturbation.
void ExpectMapsCoverDependencies(const Evaluation& e, int64_t output, bool exact,
                                 int64_t changes = -1, int64_t max_outputs = 1 << 30) {
  ASSERT_NE(e.computation, nullptr);
  const hlo::HloInstruction* root = e.computation->root();
  Expected<std::vector<std::vector<IndexingMap>>> maps =
      ComputeOutputToParameterIndexing(*e.computation, *root, output);
  ASSERT_TRUE(maps.has_value()) << maps.error().message;
  const hlo::Literal& before = OutputLiteral(e.result, output);
  std::vector<int64_t> out_dims = DimsOf(before.shape());
  auto reads = [&](int64_t param, std::span<const int64_t> out, int64_t element) {
    std::vector<int64_t> in_dims = DimsOf(e.args[param].shape());
    for (const IndexingMap& map : (*maps)[param]) {
      if (map.IsUndefined() || ReadSet(map, out, in_dims, e.args).count(element)) return true;
    }
    return false;
  };
  std::mt19937 rng(7);
  for (int64_t param = 0; param < static_cast<int64_t>(e.args.size()); ++param) {
    int64_t count = e.args[param].element_count();
    int64_t tries = changes < 0 ? count : std::min(changes, count);
    for (int64_t t = 0; t < tries; ++t) {
      int64_t j = changes < 0 ? t : std::uniform_int_distribution<int64_t>(0, count - 1)(rng);
      std::vector<hlo::Literal> args = e.args;
      if (hlo::IsFloatingPoint(args[param].element_type())) {
        args[param].SetDouble(j, args[param].GetDouble(j) + 1);
      } else {
        args[param].SetInt(j, args[param].GetInt(j) + 1);
      }
      hlo::Literal result = testing::MustEvaluate(*e.computation, args);
      const hlo::Literal& after = OutputLiteral(result, output);
      int64_t checked = 0;
      testing::ForEachIndex(out_dims, [&](std::span<const int64_t> out, int64_t linear) {
        bool changed = after.GetBits(linear) != before.GetBits(linear);
        if (!changed && (!exact || e.args[param].shape().rank() == 0)) return;
        if (checked++ >= max_outputs) return;
        ASSERT_EQ(reads(param, out, j), changed)
            << "parameter " << param << " element " << j << ", output "
            << ::testing::PrintToString(std::vector(out.begin(), out.end()))
            << (changed ? " changed" : " did not change");
      });
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

std::vector<std::string> ParameterMapTexts(const Evaluation& e, int64_t param, int64_t output = 0) {
  auto maps = ComputeOutputToParameterIndexing(*e.computation, *e.computation->root(), output);
  EXPECT_TRUE(maps.has_value());
  std::vector<std::string> texts;
  if (maps) {
    for (const IndexingMap& map : (*maps)[param]) texts.push_back(map.ToString());
  }
  return texts;
}

using Texts = std::vector<std::string>;

TEST(FusionIndexingTest, TransposeEpilogue) {
  Evaluation e = EvaluateOnIotas(R"(
fusion {
  p0 = s32[2,3,4] parameter(0)
  t = s32[2,4,3] transpose(p0), dimensions={0,2,1}
  ROOT n = s32[2,4,3] negate(t)
})");
  EXPECT_EQ(
      ParameterMapTexts(e, 0),
      Texts{"(d0, d1, d2) -> (d0, d2, d1), domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 2]"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

// The spec's partitioner example: add reads log at two different indices.
TEST(FusionIndexingTest, LogTransposeAddReadsTheParameterTwoWays) {
  Evaluation e = EvaluateOnIotas(R"(
fusion {
  p = s32[3,3] parameter(0)
  log = s32[3,3] negate(p)
  t = s32[3,3] transpose(log), dimensions={1,0}
  ROOT add = s32[3,3] add(log, t)
})");
  EXPECT_EQ(ParameterMapTexts(e, 0),
            (Texts{"(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 2]",
                   "(d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 2]"}));
  Expected<GroupedIndexing> grouped =
      ComputeGroupedOutputToInputIndexing(*e.computation, *e.computation->root());
  ASSERT_TRUE(grouped.has_value());
  const hlo::HloInstruction* log = e.computation->root()->operand(0);
  EXPECT_EQ(grouped->MapsTo(*log).size(), 2u);
  EXPECT_EQ(grouped->MapsTo(*e.computation->root()->operand(1)).size(), 1u);
  ExpectMapsCoverDependencies(e, 0, /*exact=*/false);
}

TEST(FusionIndexingTest, SameIndexTwiceIsOneMap) {
  Evaluation e = EvaluateOnIotas(R"(
fusion {
  p = s32[4] parameter(0)
  n = s32[4] negate(p)
  ROOT add = s32[4] add(n, p)
})");
  EXPECT_EQ(ParameterMapTexts(e, 0), Texts{"(d0) -> (d0), domain: d0 in [0, 3]"});
}

TEST(FusionIndexingTest, ReshapesCancel) {
  Evaluation e = EvaluateOnIotas(R"(
fusion {
  p = s32[4,6] parameter(0)
  flat = s32[24] reshape(p)
  b = s32[2,3,4] bitcast(flat)
  ROOT back = s32[4,6] reshape(b)
})");
  EXPECT_EQ(ParameterMapTexts(e, 0),
            Texts{"(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

TEST(FusionIndexingTest, RowReductionWithEpilogue) {
  Evaluation e = EvaluateOnIotas(R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
fusion {
  p0 = s32[4,6] parameter(0)
  p1 = s32[] parameter(1)
  n = s32[4,6] negate(p0)
  r = s32[4] reduce(n, p1), dimensions={1}, to_apply=add
  ROOT epilogue = s32[4] negate(r)
})");
  EXPECT_EQ(ParameterMapTexts(e, 0),
            Texts{"(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 5]"});
  EXPECT_EQ(ParameterMapTexts(e, 1), Texts{"(d0) -> (), domain: d0 in [0, 3]"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

TEST(FusionIndexingTest, ColumnReductionOfATranspose) {
  Evaluation e = EvaluateOnIotas(R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
fusion {
  p0 = s32[3,4,5] parameter(0)
  t = s32[5,4,3] transpose(p0), dimensions={2,1,0}
  z = s32[] constant(0)
  ROOT r = s32[4,3] reduce(t, z), dimensions={0}, to_apply=add
})");
  EXPECT_EQ(
      ParameterMapTexts(e, 0),
      Texts{"(d0, d1)[s0] -> (d1, d0, s0), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 4]"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

TEST(FusionIndexingTest, BroadcastIntoReduceDropsTheUnusedSymbol) {
  Evaluation e = EvaluateOnIotas(R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
fusion {
  p0 = s32[3] parameter(0)
  b = s32[3,5] broadcast(p0), dimensions={0}
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(b, z), dimensions={1}, to_apply=add
})");
  EXPECT_EQ(ParameterMapTexts(e, 0), Texts{"(d0) -> (d0), domain: d0 in [0, 2]"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

TEST(FusionIndexingTest, ConcatenateOfPadAndSlice) {
  Evaluation e = EvaluateOnIotas(R"(
fusion {
  p0 = s32[3] parameter(0)
  p1 = s32[10] parameter(1)
  p2 = s32[] parameter(2)
  pad = s32[6] pad(p0, p2), padding=1_0_1
  slice = s32[4] slice(p1), slice={[2:10:2]}
  ROOT c = s32[10] concatenate(pad, slice), dimensions={0}
})");
  EXPECT_EQ(ParameterMapTexts(e, 0),
            Texts{"(d0) -> ((d0 - 1) floordiv 2), domain: d0 in [1, 5], (d0 - 1) mod 2 in [0, 0]"});
  EXPECT_EQ(ParameterMapTexts(e, 1), Texts{"(d0) -> (d0 * 2 - 10), domain: d0 in [6, 9]"});
  EXPECT_EQ(ParameterMapTexts(e, 2), Texts{"(d0) -> (), domain: d0 in [0, 5]"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

TEST(FusionIndexingTest, DynamicSliceOfAnElementwiseProducer) {
  Evaluation e = EvaluateOnIotas(R"(
fusion {
  p0 = s32[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  n = s32[8,6] negate(p0)
  ROOT ds = s32[3,2] dynamic-slice(n, p1, p2), dynamic_slice_sizes={3,2}
})",
                                 {{1, {4}}, {2, {9}}});
  EXPECT_EQ(ParameterMapTexts(e, 0),
            Texts{"(d0, d1)[s0, s1] -> (d0 + s0, d1 + s1), domain: d0 in [0, 2], d1 in [0, 1], "
                  "s0 in [0, 5] runtime, s1 in [0, 4] runtime"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

TEST(FusionIndexingTest, ReduceWindowOfAPad) {
  Evaluation e = EvaluateOnIotas(R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
fusion {
  p0 = s32[5] parameter(0)
  z = s32[] constant(0)
  pad = s32[9] pad(p0, z), padding=2_2
  ROOT w = s32[4] reduce-window(pad, z), window={size=3 stride=2}, to_apply=add
})");
  EXPECT_EQ(ParameterMapTexts(e, 0),
            Texts{"(d0)[s0] -> (d0 * 2 + s0 - 2), domain: d0 in [0, 3], s0 in [0, 2], d0 * 2 + "
                  "s0 in [2, 6]"});
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
}

TEST(FusionIndexingTest, MultiOutputRootsAndTuples) {
  Evaluation e = EvaluateOnIotas(R"(
fusion {
  p0 = s32[2,3] parameter(0)
  p1 = s32[3,2] parameter(1)
  t = s32[3,2] transpose(p0), dimensions={1,0}
  a = s32[3,2] add(t, p1)
  tup = (s32[3,2], s32[2,3]) tuple(a, p0)
  g = s32[3,2] get-tuple-element(tup), index=0
  ROOT r = (s32[3,2], s32[2,3]) tuple(g, p0)
})");
  EXPECT_EQ(ParameterMapTexts(e, 0, 0),
            Texts{"(d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]"});
  EXPECT_EQ(ParameterMapTexts(e, 1, 0),
            Texts{"(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 1]"});
  EXPECT_EQ(ParameterMapTexts(e, 0, 1),
            Texts{"(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]"});
  EXPECT_TRUE(ParameterMapTexts(e, 1, 1).empty());
  ExpectMapsCoverDependencies(e, 0, /*exact=*/true);
  ExpectMapsCoverDependencies(e, 1, /*exact=*/true);
}

TEST(FusionIndexingTest, RejectsARootFromElsewhere) {
  Evaluation a =
      EvaluateOnIotas("fusion {\n p = s32[2] parameter(0)\n ROOT n = s32[2] negate(p)\n}\n");
  Evaluation b =
      EvaluateOnIotas("fusion {\n p = s32[2] parameter(0)\n ROOT n = s32[2] negate(p)\n}\n");
  EXPECT_FALSE(
      ComputeGroupedOutputToInputIndexing(*a.computation, *b.computation->root()).has_value());
  EXPECT_FALSE(ComputeGroupedOutputToInputIndexing(*a.computation, *a.computation->root())
                   .value()
                   .MapsToParameter(3)
                   .size());
}

// Every file of the XLA corpus: maps exist for every output, and where the evaluator can
// run the fusion, changing sampled parameter elements changes only outputs that read them.
TEST(FusionIndexingCorpusTest, MapsCoverWhatTheEvaluatorReads) {
  const char* env = std::getenv("TILESMITH_CORPUS_DIR");
  std::filesystem::path dir =
      std::filesystem::path(env != nullptr ? env : TILESMITH_DEFAULT_CORPUS_DIR) / "xla";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int64_t checked = 0;
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    auto module = hlo::ParseHloModuleFile(file.string());
    ASSERT_TRUE(module.has_value()) << module.error().message;
    const hlo::HloComputation* fusion = (*module)->fusion();
    const hlo::HloInstruction* root = fusion->root();
    int64_t outputs = root->shape().IsTuple() ? root->shape().tuple_elements().size() : 1;
    for (int64_t output = 0; output < outputs; ++output) {
      auto maps = ComputeOutputToParameterIndexing(*fusion, *root, output);
      ASSERT_TRUE(maps.has_value()) << maps.error().message;
    }
    int64_t size = 0;
    for (const hlo::HloInstruction* p : fusion->parameters()) size += p->shape().ElementCount();
    if (size > (1 << 18)) continue;
    Expected<std::vector<hlo::Literal>> args = hlo::MakeRandomArguments(*fusion, 1);
    ASSERT_TRUE(args.has_value());
    Expected<hlo::Literal> result = hlo::Evaluate(*fusion, *args);
    if (!result.has_value()) continue;  // ops the evaluator lacks
    Evaluation e{nullptr, fusion, std::move(*args), std::move(*result)};
    for (int64_t output = 0; output < outputs; ++output) {
      if (OutputLiteral(e.result, output).shape().IsTuple()) continue;
      ExpectMapsCoverDependencies(e, output, /*exact=*/false, /*changes=*/6, /*max_outputs=*/16);
    }
    ++checked;
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace tilesmith::analysis
