// Pins the learned model's feature vector (names, order and values) for kernels of several
// emitters: the emitter one-hot and the config columns are derived from the emitter registry,
// and a stored model of this schema version must keep seeing the same columns.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "costmodel/features.h"
#include "costmodel/gpu_model.h"
#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;

constexpr char kRowReduce[] = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[256,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(p0, z), dimensions={1}, to_apply=add
})";

// FNV-1a over bytes: a fingerprint that is the same on every run and build.
uint64_t Fingerprint(const void* data, size_t size, uint64_t hash = 1469598103934665603ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

std::string Hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string NamesFingerprint() {
  uint64_t hash = 1469598103934665603ull;
  for (const std::string& name : FeatureNames()) {
    hash = Fingerprint(name.data(), name.size(), Fingerprint("|", 1, hash));
  }
  return Hex(hash);
}

std::string VectorFingerprint(std::string_view text, const nlohmann::json& config) {
  auto emitted = Emit(text, config);
  DeviceFigures device{testing::Device("cuda:sm_90"), 50 << 20};
  GpuModel model;
  auto prediction = model.Predict(emitted.kernel, device, nullptr);
  EXPECT_TRUE(prediction.has_value());
  if (!prediction) return "";
  std::vector<float> features = KernelFeatures(emitted.kernel, device, nullptr, *prediction);
  return Hex(Fingerprint(features.data(), features.size() * sizeof(float)));
}

// The first columns were captured from the feature code before they were derived from the
// registry; schema 8 added the host code's constant divisions, gather lanes and f16/bf16
// lanes (`code.constant_divisions`, … after `code.instructions_per_element`); schema 9 the
// machine instructions and float divisions (`code.machine_instructions`,
// `code.float_divisions`, `code.machine_instructions_per_element`, after them); schema 10
// the machine code's lane moves (`code.lane_moves`, `code.lane_moves_per_element`, after
// those).
TEST(FeatureSchemaPinTest, TheSchemaTenColumnsKeepTheirNamesAndOrder) {
  ASSERT_EQ(kFeatureSchemaVersion, 10) << "a new schema version: capture its columns here anew";
  const std::vector<std::string> first = {"cfg.threads_per_block",
                                          "cfg.vector",
                                          "cfg.chunks",
                                          "cfg.blocks_y",
                                          "cfg.threads_x",
                                          "cfg.threads_y",
                                          "cfg.elements_per_thread",
                                          "cfg.split",
                                          "cfg.tile_in",
                                          "cfg.tile_out",
                                          "cfg.rows_per_pass",
                                          "cfg.threads",
                                          "cfg.shared_padding",
                                          "emitter.loop",
                                          "emitter.transpose",
                                          "emitter.concatenate",
                                          "emitter.dynamic_update_slice",
                                          "emitter.input_slices",
                                          "emitter.reduction",
                                          "emitter.scatter",
                                          "launch.blocks"};
  ASSERT_EQ(FeatureNames().size(), 134u);
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(FeatureNames()[i], first[i]) << i;
  EXPECT_EQ(NamesFingerprint(), "c99ed3f4bb05e093");
}

TEST(FeatureSchemaPinTest, TheSchemaTenValuesStayBitForBit) {
  EXPECT_EQ(VectorFingerprint(testing::kElementwise, {{"threads_per_block", 256}, {"vector", 4}}),
            "bd2ce92a702c4dcd");
  EXPECT_EQ(VectorFingerprint(testing::kElementwise, nullptr), "c05d7e01f4a73efc");
  EXPECT_EQ(VectorFingerprint(testing::kTranspose, nullptr), "c3f2f10af5203416");
  EXPECT_EQ(VectorFingerprint(testing::kTranspose, {{"shared_padding", 0}}), "56646185270235d6");
  EXPECT_EQ(VectorFingerprint(kRowReduce, nullptr), "77c10d7f273f0223");
  EXPECT_EQ(VectorFingerprint(kRowReduce, {{"split", 4}, {"second_pass", "tree"}}),
            "60487d8b9d29b492");
}

}  // namespace
}  // namespace tilesmith::costmodel
