// The input slices emitter's config validation. XLA's default (no unrolling beyond filling
// bytes), the one pass over the sliced shape with each store predicated on its slice, and host
// runs of overlapping, unaligned and packed slices are data: tests/data/emitters/input_slices/.
#include "compiler/emitters/input_slices_emitter.h"

#include <gtest/gtest.h>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::Parse;
using testing::Reason;

// Three slices of add(p0, p1); the last two overlap, none is aligned to a vector.
constexpr const char* kSlices = R"(f {
  p0 = f32[7,33] parameter(0)
  p1 = f32[7,33] parameter(1)
  add = f32[7,33] add(p0, p1)
  s0 = f32[3,33] slice(add), slice={[0:3], [0:33]}
  s1 = f32[4,10] slice(add), slice={[3:7], [5:15]}
  s2 = f32[2,20] slice(add), slice={[2:4], [13:33]}
  ROOT t = (f32[3,33], f32[4,10], f32[2,20]) tuple(s0, s1, s2)
})";

constexpr const char* kPackedSlices = R"(f {
  p0 = s4[9,5]{1,0:E(4)} parameter(0)
  s0 = s4[3,5]{1,0:E(4)} slice(p0), slice={[0:3], [0:5]}
  s1 = s4[5,3]{1,0:E(4)} slice(p0), slice={[3:8], [1:4]}
  ROOT t = (s4[3,5]{1,0:E(4)}, s4[5,3]{1,0:E(4)}) tuple(s0, s1)
})";

TEST(InputSlicesEmitterTest, InvalidConfigsSayWhy) {
  auto module = Parse(kSlices);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  EXPECT_EQ(Reason(emitter.Validate(analysis, {{"chunks", 2}}, H100())), "");
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"chunks", 0}}, H100())).find("chunks"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"vector", "4"}}, H100()))
                .find("'vector' must be an integer"),
            std::string::npos);
  auto packed = Parse(kPackedSlices);
  analysis::FusionAnalysis packed_analysis = analysis::AnalyzeFusion(*packed->fusion());
  EXPECT_NE(Reason(EmitterFor(packed_analysis).Validate(packed_analysis, {{"vector", 1}}, H100()))
                .find("splits bytes"),
            std::string::npos);
  // Slices of arrays with different dims are not one pass.
  auto mixed = Parse(R"(f {
  p0 = f32[8] parameter(0)
  p1 = f32[9] parameter(1)
  s0 = f32[4] slice(p0), slice={[0:4]}
  s1 = f32[4] slice(p1), slice={[0:4]}
  ROOT t = (f32[4], f32[4]) tuple(s0, s1)
})");
  EXPECT_NE(Reason(ValidateInputSlicesConfig({32, 1, 1, 1},
                                             analysis::AnalyzeFusion(*mixed->fusion()), H100()))
                .find("slice 's1' reads f32[9]"),
            std::string::npos);
}

}  // namespace
}  // namespace tilesmith::emitters
