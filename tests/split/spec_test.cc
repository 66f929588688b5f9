// Meshes and partition specs: parsing (text and JSON), printing back, validity rules with
// their messages, and the per-device shapes of the shard_map examples (seed 004).
#include <gtest/gtest.h>

#include <numeric>

#include "split/mesh.h"
#include "split/partition_spec.h"
#include "split/simulate.h"

namespace tilesmith::split {
namespace {

using hlo::Literal;

const std::string kMeshes = TILESMITH_SOURCE_DIR "/configs/meshes/";

Mesh Mesh42() { return UniformMesh({4, 2}, {"i", "j"}, 10, 1); }

PartitionSpec Spec(std::string_view text) {
  auto spec = ParseSpec(text);
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  return spec.value_or(PartitionSpec{});
}

// x = arange(12 * 12).reshape(12, 12), as the examples build it.
Literal Arange(std::vector<int64_t> dims) {
  hlo::Shape shape = hlo::Shape::Array(hlo::PrimitiveType::kF32, dims);
  std::vector<double> values(shape.ElementCount());
  std::iota(values.begin(), values.end(), 0.0);
  return hlo::LiteralFromDoubles(shape, values);
}

std::vector<Literal> Blocks(const Literal& full, const PartitionSpec& spec, const Mesh& mesh) {
  std::vector<Literal> blocks;
  for (int64_t device = 0; device < mesh.device_count(); ++device) {
    blocks.push_back(BlockOf(full, spec, mesh, device));
  }
  return blocks;
}

std::vector<int64_t> DimsOf(const Literal& literal) {
  return {literal.shape().dims().begin(), literal.shape().dims().end()};
}

TEST(SplitSpecTest, TextForms) {
  EXPECT_EQ(Spec("P('i', None)").dims, (std::vector<std::vector<std::string>>{{"i"}, {}}));
  EXPECT_EQ(Spec("P(('j','i'), None)").dims,
            (std::vector<std::vector<std::string>>{{"j", "i"}, {}}));
  EXPECT_TRUE(Spec("P()").dims.empty());
  EXPECT_EQ(Spec("PartitionSpec(\"i\", 'j',)").dims,
            (std::vector<std::vector<std::string>>{{"i"}, {"j"}}));
  EXPECT_EQ(Spec("P(('j',), ())").dims, (std::vector<std::vector<std::string>>{{"j"}, {}}));
}

TEST(SplitSpecTest, PrintsBackAndRoundTrips) {
  for (std::string text : {"P('i', None)", "P(('j', 'i'), None)", "P()", "P(None, 'j')",
                           "P('i', 'j')", "P(('i', 'j'))"}) {
    PartitionSpec spec = Spec(text);
    EXPECT_EQ(SpecToString(spec), text);
    EXPECT_EQ(Spec(SpecToString(spec)), spec);
    auto from_json = ParseSpecJson(SpecToJson(spec));
    ASSERT_TRUE(from_json.has_value()) << from_json.error().message;
    EXPECT_EQ(*from_json, spec) << SpecToJson(spec).dump();
  }
  EXPECT_EQ(SpecToJson(Spec("P(('j','i'), None)")).dump(), R"([["j","i"],null])");
  auto json_spec = ParseSpecJson(nlohmann::json::parse(R"(["i", null])"));
  ASSERT_TRUE(json_spec.has_value());
  EXPECT_EQ(SpecToString(*json_spec), "P('i', None)");
}

TEST(SplitSpecTest, ListsSeparatedBySemicolons) {
  auto specs = ParseSpecList("P('i',None);P('j',None)");
  ASSERT_TRUE(specs.has_value()) << specs.error().message;
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ(SpecToString((*specs)[1]), "P('j', None)");
}

TEST(SplitSpecTest, ParseErrorsNameTheColumn) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{{"Q('i')", "col 1: expected P(...)"},
                                         {"P('i' None)", "col 7: expected ',' or ')'"},
                                         {"P(i)", "col 3: expected None, a quoted axis name"},
                                         {"P('i", "unterminated axis name"},
                                         {"P('')", "empty axis name"},
                                         {"P('i') x", "unexpected text after the spec"}}) {
    auto spec = ParseSpec(c.text);
    ASSERT_FALSE(spec.has_value()) << c.text;
    EXPECT_NE(spec.error().message.find(c.message), std::string::npos) << spec.error().message;
  }
  auto bad_json = ParseSpecJson(nlohmann::json::parse(R"(["i", 3])"));
  ASSERT_FALSE(bad_json.has_value());
  EXPECT_NE(bad_json.error().message.find("entry 1"), std::string::npos);
  auto bad_list = ParseSpecList("P('i');P(x)");
  ASSERT_FALSE(bad_list.has_value());
  EXPECT_NE(bad_list.error().message.find("spec 1"), std::string::npos);
}

TEST(SplitSpecTest, ValidityRulesNameTheDimAndAxis) {
  const Mesh mesh = Mesh42();
  const std::vector<int64_t> dims = {12, 12};
  // The tiling of f2 along the first axis: (24,12) split over 'j' then 'i'.
  EXPECT_TRUE(ValidateSpec(Spec("P(('j','i'), None)"), std::vector<int64_t>{24, 12}, mesh));
  struct Case {
    std::string spec;
    std::vector<int64_t> dims;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"P('i', 'i')", dims, "mesh axis 'i' appears more than once"},
           {"P(('i','i'))", dims, "mesh axis 'i' appears more than once"},
           {"P('k')", dims, "dim 0 names axis 'k', which mesh (4,2) ('i','j') does not have"},
           {"P(None, None, 'i')", dims, "has 3 entries but the array has rank 2"},
           {"P(None, 'i')", {12, 6}, "dim 1 of size 6 is not divisible by mesh axis 'i' of size 4"},
           {"P(('i','j'))",
            {12, 12},
            "dim 0 of size 12 is not divisible by mesh axis 'i','j' of "
            "size 8"}}) {
    Status status = ValidateSpec(Spec(c.spec), c.dims, mesh, "parameter 0");
    ASSERT_FALSE(status.has_value()) << c.spec;
    EXPECT_NE(status.error().message.find(c.message), std::string::npos) << status.error().message;
    EXPECT_EQ(status.error().message.rfind("parameter 0", 0), 0u) << status.error().message;
  }
}

TEST(SplitMeshTest, ReadsTheShippedMeshes) {
  auto nvlink = LoadMeshFile(kMeshes + "h100x8-nvlink.json");
  ASSERT_TRUE(nvlink.has_value()) << nvlink.error().message;
  EXPECT_EQ(nvlink->device_count(), 8);
  EXPECT_EQ(nvlink->device, "h100_sxm");
  auto ib = LoadMeshFile(kMeshes + "h100-2x8-ib.json");
  ASSERT_TRUE(ib.has_value()) << ib.error().message;
  EXPECT_EQ(ib->ShapeString(), "(2,8) ('node','gpu')");
  EXPECT_LT(ib->axes[0].bandwidth_gbps, ib->axes[1].bandwidth_gbps);  // network < NVLink
  auto host = LoadMeshFile(kMeshes + "host-4x2.json");
  ASSERT_TRUE(host.has_value()) << host.error().message;
  EXPECT_EQ(host->ShapeString(), "(4,2) ('i','j')");
  EXPECT_EQ(host->DeviceAt({3, 1}), 7);
  EXPECT_EQ(host->Coordinates(5), (std::vector<int64_t>{2, 1}));
}

TEST(SplitMeshTest, ErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"{", "not valid JSON"},
           {R"({"axes": []})", "'device' must name a device description"},
           {R"({"device": "host", "axes": []})", "'axes' must be a non-empty array"},
           {R"({"device": "host", "axes": [{"name": "i", "size": 0, "bandwidth_gbps": 1,
               "latency_us": 1}]})",
            "axes[0] ('i'): 'size' must be an integer >= 1"},
           {R"({"device": "host", "axes": [{"name": "i", "size": 2, "latency_us": 1}]})",
            "axes[0] ('i'): missing 'bandwidth_gbps'"},
           {R"({"device": "host", "axes": [{"name": "i", "size": 2, "bandwidth_gbps": 0,
               "latency_us": 1}]})",
            "'bandwidth_gbps' must be a positive number"},
           {R"({"device": "host", "axes": [
               {"name": "i", "size": 2, "bandwidth_gbps": 1, "latency_us": 1},
               {"name": "i", "size": 2, "bandwidth_gbps": 1, "latency_us": 1}]})",
            "axes[1]: axis name 'i' is used twice"}}) {
    auto mesh = ParseMesh(c.json, "m.json");
    ASSERT_FALSE(mesh.has_value()) << c.json;
    EXPECT_NE(mesh.error().message.find(c.message), std::string::npos) << mesh.error().message;
    EXPECT_EQ(mesh.error().message.rfind("m.json", 0), 0u);
  }
  auto missing = LoadMeshFile(kMeshes + "no-such-mesh.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
}

// f1: x f32[12,12] with in_specs P('i', None) on the (4,2) mesh: every block prints (3,12),
// and the blocks are x's rows 3k..3k+2 whatever 'j' is.
TEST(SplitSeedExamplesTest, F1BlocksAre3By12) {
  const Mesh mesh = Mesh42();
  const Literal x = Arange({12, 12});
  const PartitionSpec spec = Spec("P('i', None)");
  EXPECT_EQ(BlockShape(spec, x.shape().dims(), mesh), (std::vector<int64_t>{3, 12}));
  std::vector<Literal> blocks = Blocks(x, spec, mesh);
  for (int64_t device = 0; device < mesh.device_count(); ++device) {
    ASSERT_EQ(DimsOf(blocks[device]), (std::vector<int64_t>{3, 12}));
    const int64_t i = mesh.Coordinates(device)[0];
    EXPECT_EQ(blocks[device].GetDouble(0), 3 * i * 12);
  }
  // out_specs P('i', 'j') concatenates the (3,12) blocks along both axes: (12,24).
  std::string disagreement;
  EXPECT_EQ(DimsOf(Assemble(blocks, Spec("P('i', 'j')"), mesh, 1, &disagreement)),
            (std::vector<int64_t>{12, 24}));
}

// f2: x tiled to (12,24) with P('i','j') also gives (3,12) blocks, the same as f1's.
TEST(SplitSeedExamplesTest, F2TiledInputGivesTheSameBlocks) {
  const Mesh mesh = Mesh42();
  const Literal x = Arange({12, 12});
  Literal tiled(hlo::Shape::Array(hlo::PrimitiveType::kF32, {12, 24}));
  for (int64_t r = 0; r < 12; ++r) {
    for (int64_t c = 0; c < 24; ++c) tiled.SetDouble(r * 24 + c, x.GetDouble(r * 12 + c % 12));
  }
  std::vector<Literal> f1 = Blocks(x, Spec("P('i', None)"), mesh);
  std::vector<Literal> f2 = Blocks(tiled, Spec("P('i', 'j')"), mesh);
  for (int64_t device = 0; device < mesh.device_count(); ++device) {
    EXPECT_EQ(DimsOf(f2[device]), (std::vector<int64_t>{3, 12}));
    EXPECT_EQ(f1[device], f2[device]) << "device " << device;
  }
}

// f3, f4, f5: psum over 'j', 'i', or both of the (3,6) blocks of P('i','j'), assembled by
// an out spec that leaves out the summed axes: (12,6), (3,12), (3,6).
TEST(SplitSeedExamplesTest, F3F4F5PsumShapes) {
  const Mesh mesh = Mesh42();
  const Literal x = Arange({12, 12});
  std::vector<Literal> blocks = Blocks(x, Spec("P('i', 'j')"), mesh);
  EXPECT_EQ(DimsOf(blocks[0]), (std::vector<int64_t>{3, 6}));
  auto psum = [&](std::vector<Literal> in, const std::string& axis) {
    Collective step{CollectiveKind::kPsum, axis};
    auto out = ApplyCollective(step, mesh, in);
    EXPECT_TRUE(out.has_value()) << out.error().message;
    return out.value_or(std::vector<Literal>{});
  };
  std::string disagreement;
  Literal y3 = Assemble(psum(blocks, "j"), Spec("P('i', None)"), mesh, 1, &disagreement);
  EXPECT_EQ(disagreement, "");
  EXPECT_EQ(DimsOf(y3), (std::vector<int64_t>{12, 6}));
  // y3[r, c] = x[r, c] + x[r, c + 6].
  for (int64_t r = 0; r < 12; ++r) {
    for (int64_t c = 0; c < 6; ++c) {
      EXPECT_EQ(y3.GetDouble(r * 6 + c), x.GetDouble(r * 12 + c) + x.GetDouble(r * 12 + c + 6));
    }
  }
  Literal y4 = Assemble(psum(blocks, "i"), Spec("P(None, 'j')"), mesh, 1, &disagreement);
  EXPECT_EQ(disagreement, "");
  EXPECT_EQ(DimsOf(y4), (std::vector<int64_t>{3, 12}));
  Literal y5 =
      Assemble(psum(psum(blocks, "i"), "j"), Spec("P(None, None)"), mesh, 1, &disagreement);
  EXPECT_EQ(disagreement, "");
  EXPECT_EQ(DimsOf(y5), (std::vector<int64_t>{3, 6}));
  double total = 0;
  for (int64_t i = 0; i < 144; ++i) total += (i % 12 % 6 == 0 && i / 12 % 3 == 0) ? i : 0;
  EXPECT_EQ(y5.GetDouble(0), total);
  // Without the psum, leaving 'j' out of the out spec is wrong, and assembly says so.
  Assemble(blocks, Spec("P('i', None)"), mesh, 1, &disagreement);
  EXPECT_NE(disagreement.find("should hold the same block"), std::string::npos);
}

}  // namespace
}  // namespace tilesmith::split
