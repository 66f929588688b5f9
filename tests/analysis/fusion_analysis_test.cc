// Emitter choice: the XLA corpus is sorted into folders by the emitter XLA uses, so each
// file's folder is its expected emitter kind; plus hand-written cases for each rule.
#include "compiler/analysis/fusion_analysis.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "compiler/hlo/parser.h"

namespace tilesmith::analysis {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<hlo::HloModule> Parse(std::string_view text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

std::string_view KindOf(std::string_view text) {
  return AnalyzeFusion(*Parse(text)->fusion()).emitter;
}

fs::path CorpusDir() {
  if (const char* env = std::getenv("TILESMITH_CORPUS_DIR")) return env;
  for (fs::path candidate :
       {fs::path(TILESMITH_DEFAULT_CORPUS_DIR), fs::path("/work/shared/corpus")}) {
    if (fs::is_directory(candidate / "xla")) return candidate;
  }
  return {};
}

TEST(FusionAnalysisTest, CorpusFilesGetTheEmitterOfTheirFolder) {
  fs::path corpus = CorpusDir();
  if (corpus.empty()) GTEST_SKIP() << "no corpus (set TILESMITH_CORPUS_DIR)";
  // The spec sends fusions with types narrower than 8 bits to the loop emitter (or input
  // slices); XLA has since taught its other emitters packed types, and these corpus files
  // sit in those emitters' folders.
  const std::set<std::string> sub_byte_divergences = {
      "concatenate/concat_s4.hlo", "reduce_row/side_output_s4.hlo",
      "scatter/scatter_s4_unique_indices.hlo", "transpose/packed_transpose_s4.hlo",
      "transpose/partial_tile_s4.hlo"};
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(corpus / "xla")) {
    if (entry.path().extension() != ".hlo") continue;
    std::string folder = entry.path().parent_path().filename();
    std::string name = folder + "/" + entry.path().filename().string();
    auto module = hlo::ParseHloModuleFile(entry.path());
    ASSERT_TRUE(module.has_value()) << module.error().message;
    FusionAnalysis analysis = AnalyzeFusion(*(*module)->fusion());
    std::string expected = folder.starts_with("reduce") ? "reduction"
                           : folder == "convert"        ? "loop"
                                                        : folder;
    if (sub_byte_divergences.contains(name)) expected = "loop";
    EXPECT_EQ(analysis.emitter, expected) << name << ": " << analysis.reason;
    ++checked;
  }
  EXPECT_GT(checked, 80);
}

TEST(FusionAnalysisTest, ReductionDimensionsFollowTheLayout) {
  auto row = Parse(R"(
    add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
    f { p = f32[7,100,128] parameter(0)  c = f32[] constant(0)
        ROOT r = f32[100] reduce(p, c), dimensions={0,2}, to_apply=add })");
  ReductionDimensions dims = GetReductionDimensions(*row->fusion()->root());
  EXPECT_TRUE(dims.is_row_reduction);
  EXPECT_EQ(dims.dimensions, (std::array<int64_t, 3>{7, 100, 128}));

  auto column = Parse(R"(
    add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
    f { p = f32[3,128,4] parameter(0)  c = f32[] constant(0)
        ROOT r = f32[3,4] reduce(p, c), dimensions={1}, to_apply=add })");
  dims = GetReductionDimensions(*column->fusion()->root());
  EXPECT_FALSE(dims.is_row_reduction);
  EXPECT_EQ(dims.dimensions, (std::array<int64_t, 3>{3, 128, 4}));

  // The same logical reduction over a column-major input is a row reduction.
  auto transposed = Parse(R"(
    add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
    f { p = f32[16,784]{0,1} parameter(0)  c = f32[] constant(0)
        ROOT r = f32[784] reduce(p, c), dimensions={0}, to_apply=add })");
  dims = GetReductionDimensions(*transposed->fusion()->root());
  EXPECT_TRUE(dims.is_row_reduction);
  EXPECT_EQ(dims.dimensions, (std::array<int64_t, 3>{1, 784, 16}));

  // A kept dim of size 1 ahead of the reduced one changes nothing: still a column
  // reduction of 8 rows of 12 (a split's per-device shard of f32[4,8,12] on 4 devices).
  auto unit_kept = Parse(R"(
    add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
    f { p = f32[1,8,12] parameter(0)  c = f32[] constant(0)
        ROOT r = f32[1,12] reduce(p, c), dimensions={1}, to_apply=add })");
  dims = GetReductionDimensions(*unit_kept->fusion()->root());
  EXPECT_FALSE(dims.is_row_reduction);
  EXPECT_EQ(dims.dimensions, (std::array<int64_t, 3>{1, 8, 12}));
}

TEST(FusionAnalysisTest, RulesInOrder) {
  // A small reduction is faster as a loop.
  EXPECT_EQ(KindOf(R"(
    add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
    f { p = f32[4,3] parameter(0)  c = f32[] constant(0)
        ROOT r = f32[4] reduce(p, c), dimensions={1}, to_apply=add })"),
            "loop");
  // A transpose that only moves size-1 dims is a bitcast, not a transpose hero.
  EXPECT_EQ(KindOf(R"(f { p = f32[1,64,1,64] parameter(0)
        ROOT t = f32[64,1,64,1] transpose(p), dimensions={1,0,3,2} })"),
            "loop");
  EXPECT_EQ(KindOf(R"(f { p = f32[64,64] parameter(0)
        e = f32[64,64] exponential(p)
        ROOT t = f32[64,64] transpose(e), dimensions={1,0} })"),
            "transpose");
  // Five concatenated operands are too many for the concatenate emitter.
  EXPECT_EQ(KindOf(R"(f { a = f32[8] parameter(0)  b = f32[8] parameter(1)
        c = f32[8] parameter(2)  d = f32[8] parameter(3)  e = f32[8] parameter(4)
        ROOT r = f32[40] concatenate(a, b, c, d, e), dimensions={0} })"),
            "loop");
  EXPECT_EQ(KindOf(R"(f { p = f32[100] parameter(0)
        a = f32[10] slice(p), slice={[0:10]}
        b = f32[20] slice(p), slice={[10:30]}
        ROOT t = (f32[10], f32[20]) tuple(a, b) })"),
            "input_slices");
  // A dynamic-update-slice whose updated operand has another non-elementwise user cannot
  // write in place.
  EXPECT_EQ(KindOf(R"(f { p = f32[8] parameter(0)  u = f32[2] parameter(1)
        i = s32[] parameter(2)
        d = f32[8] dynamic-update-slice(p, u, i)
        r = f32[8] reverse(p), dimensions={0}
        ROOT t = (f32[8], f32[8]) tuple(d, r) })"),
            "loop");
}

}  // namespace
}  // namespace tilesmith::analysis
