// The learned model's features: a fixed, named schema; the same kernel gives the same
// vector; the config, emitter, bytes, flops, occupancy and the analytic prediction land in
// their named columns, and what a target lacks is missing (NaN), never a made-up 0.
#include "costmodel/features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "compiler/emitters/emitter_registry.h"
#include "costmodel/gpu_model.h"
#include "costmodel/kernel_facts.h"
#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;
using testing::kElementwise;
using testing::kTranspose;

DeviceFigures H100() { return {testing::Device("cuda:sm_90"), 50 << 20}; }

float Feature(const std::vector<float>& features, std::string_view name) {
  int column = FeatureIndex(name);
  EXPECT_GE(column, 0) << name;
  return column >= 0 ? features[column] : std::nanf("");
}

std::vector<float> FeaturesOf(const emitters::KernelIR& kernel, const DeviceFigures& device,
                              const ResourceUsage* usage = nullptr) {
  GpuModel model;
  auto prediction = model.Predict(kernel, device, usage);
  EXPECT_TRUE(prediction.has_value()) << prediction.error().message;
  return KernelFeatures(kernel, device, usage, *prediction);
}

TEST(FeaturesTest, TheSchemaIsNamedUniqueAndVersioned) {
  std::span<const std::string> names = FeatureNames();
  EXPECT_GT(names.size(), 80u);
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size()) << "feature names repeat";
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(FeatureIndex(names[i]), static_cast<int>(i));
  EXPECT_EQ(FeatureIndex("no.such.feature"), -1);
  EXPECT_GE(kFeatureSchemaVersion, 1);
  // Columns a stored model relies on keep their place within a schema version.
  EXPECT_EQ(names.front(), "cfg.threads_per_block");
  EXPECT_EQ(FeatureIndex("analytic.log_us") >= 0, true);
}

TEST(FeaturesTest, TheSameKernelGivesTheSameVectorBitForBit) {
  auto first = Emit(kElementwise, {{"threads_per_block", 256}, {"vector", 4}});
  auto second = Emit(kElementwise, {{"threads_per_block", 256}, {"vector", 4}});
  std::vector<float> a = FeaturesOf(first.kernel, H100());
  std::vector<float> b = FeaturesOf(second.kernel, H100());
  ASSERT_EQ(a.size(), FeatureNames().size());
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(FeaturesTest, ConfigEmitterBytesAndFlopsLandInTheirColumns) {
  auto loop = Emit(kElementwise, {{"threads_per_block", 256}, {"vector", 4}});
  std::vector<float> f = FeaturesOf(loop.kernel, H100());
  EXPECT_EQ(Feature(f, "cfg.threads_per_block"), 256);
  EXPECT_EQ(Feature(f, "cfg.vector"), 4);
  EXPECT_TRUE(std::isnan(Feature(f, "cfg.tile_in"))) << "a transpose field on a loop kernel";
  EXPECT_EQ(Feature(f, "emitter.loop"), 1);
  EXPECT_EQ(Feature(f, "emitter.transpose"), 0);
  EXPECT_EQ(Feature(f, "operands.inputs"), 2);
  EXPECT_EQ(Feature(f, "operands.outputs"), 1);
  EXPECT_EQ(Feature(f, "in0.bytes"), 4194304.0f * 4);
  EXPECT_EQ(Feature(f, "in0.minor_extent"), 4194304);
  EXPECT_TRUE(std::isnan(Feature(f, "in2.bytes"))) << "no third input";
  EXPECT_EQ(Feature(f, "bytes.total"), 3 * 4194304.0f * 4);
  EXPECT_EQ(Feature(f, "flops.transcendental"), 4194304.0f * kTranscendentalFlops);
  EXPECT_EQ(Feature(f, "flops.elementwise"), 4194304.0f);
  EXPECT_EQ(Feature(f, "flops.total"), static_cast<float>(KernelFlops(loop.kernel)));
  EXPECT_EQ(Feature(f, "launch.threads_per_block"), 256);
  EXPECT_GT(Feature(f, "occupancy.fraction"), 0);
  EXPECT_GE(Feature(f, "waves.count"), 1);
  EXPECT_TRUE(std::isnan(Feature(f, "resources.registers"))) << "no cubin, no registers";

  auto transpose = Emit(kTranspose);
  std::vector<float> t = FeaturesOf(transpose.kernel, H100());
  EXPECT_EQ(Feature(t, "emitter.transpose"), 1);
  EXPECT_FALSE(std::isnan(Feature(t, "cfg.tile_in")));
  EXPECT_GT(Feature(t, "shared.bytes"), 0);
}

TEST(FeaturesTest, TheAnalyticPredictionAndTheCubinAreFeatures) {
  auto loop = Emit(kElementwise);
  GpuModel model;
  ResourceUsage usage{.registers = 40, .shared_bytes = 0, .spill_bytes = 8};
  auto prediction = model.Predict(loop.kernel, H100(), &usage);
  ASSERT_TRUE(prediction.has_value());
  std::vector<float> f = KernelFeatures(loop.kernel, H100(), &usage, *prediction);
  EXPECT_FLOAT_EQ(Feature(f, "analytic.us"), static_cast<float>(prediction->microseconds));
  EXPECT_FLOAT_EQ(Feature(f, "analytic.log_us"),
                  static_cast<float>(std::log(prediction->microseconds)));
  EXPECT_FLOAT_EQ(Feature(f, "analytic.memory_us"),
                  prediction->breakdown["memory_us"].get<float>());
  EXPECT_EQ(Feature(f, "resources.registers"), 40);
  EXPECT_EQ(Feature(f, "resources.spill_bytes"), 8);
  EXPECT_TRUE(std::isnan(Feature(f, "analytic.simd_efficiency"))) << "a host-only term";
}

TEST(FeaturesTest, TheHostHasNoOccupancy) {
  auto loop = Emit(kElementwise, nullptr, "host");
  DeviceFigures host{testing::Device("host"), 32 << 20};
  host.info.sm_count = 0;  // as configs/devices/host.json says
  Prediction analytic{.microseconds = 100, .breakdown = {{"simd_efficiency", 0.5}}};
  std::vector<float> f = KernelFeatures(loop.kernel, host, nullptr, analytic);
  EXPECT_TRUE(std::isnan(Feature(f, "occupancy.fraction")));
  EXPECT_EQ(Feature(f, "analytic.simd_efficiency"), 0.5f);
  EXPECT_EQ(Feature(f, "analytic.us"), 100);
  EXPECT_TRUE(std::isnan(Feature(f, "code.instructions"))) << "not compiled, not counted";
}

TEST(FeaturesTest, TheHostCodeCountsAreFeatures) {
  auto loop = Emit(kElementwise, nullptr, "host");
  DeviceFigures host{testing::Device("host"), 32 << 20};
  ResourceUsage usage{.executed_instructions = 4000,
                      .executed_divisions = 40,
                      .executed_memory = 1000,
                      .executed_vector = 2000,
                      .executed_branches = 100,
                      .executed_constant_divisions = 30,
                      .executed_gather_lanes = 400,
                      .executed_half_lanes = 800};
  Prediction analytic{.microseconds = 100, .breakdown = {{"code_us", 12.5}}};
  std::vector<float> f = KernelFeatures(loop.kernel, host, &usage, analytic);
  float blocks = Feature(f, "launch.blocks");
  EXPECT_EQ(Feature(f, "code.instructions"), 4000);
  EXPECT_EQ(Feature(f, "code.divisions"), 40);
  EXPECT_EQ(Feature(f, "code.branches"), 100);
  EXPECT_EQ(Feature(f, "code.total_instructions"), 4000 * blocks);
  EXPECT_FLOAT_EQ(Feature(f, "code.division_share"), 0.01f);
  EXPECT_FLOAT_EQ(Feature(f, "code.memory_share"), 0.25f);
  EXPECT_FLOAT_EQ(Feature(f, "code.vector_share"), 0.5f);
  EXPECT_FLOAT_EQ(Feature(f, "code.instructions_per_element"), 4000 * blocks / 4194304.0f);
  EXPECT_EQ(Feature(f, "code.constant_divisions"), 30);
  EXPECT_FLOAT_EQ(Feature(f, "code.constant_division_share"), 0.75f);
  EXPECT_EQ(Feature(f, "code.gather_lanes"), 400);
  EXPECT_FLOAT_EQ(Feature(f, "code.gather_lanes_per_instruction"), 0.1f);
  EXPECT_EQ(Feature(f, "code.half_lanes"), 800);
  EXPECT_FLOAT_EQ(Feature(f, "code.half_lanes_per_instruction"), 0.2f);
  EXPECT_EQ(Feature(f, "analytic.code_us"), 12.5f);
  EXPECT_TRUE(std::isnan(Feature(f, "resources.registers"))) << "host code is not a cubin";
}

TEST(FeaturesTest, EveryRegisteredEmitterAndItsDeclaredFieldsAreColumns) {
  using emitters::FeatureEncoding;
  for (const emitters::Emitter* emitter : emitters::RegisteredEmitters()) {
    EXPECT_GE(FeatureIndex("emitter." + std::string(emitter->name())), 0) << emitter->name();
    for (const emitters::ConfigField& field : emitter->config_fields()) {
      std::string column = "cfg." + std::string(field.name);
      switch (field.encoding) {
        case FeatureEncoding::kNumeric:
        case FeatureEncoding::kBoolean:
          EXPECT_GE(FeatureIndex(column), 0) << emitter->name() << " " << column;
          break;
        case FeatureEncoding::kLog2:
          EXPECT_GE(FeatureIndex(column + ".log2"), 0) << emitter->name() << " " << column;
          break;
        case FeatureEncoding::kOneHot:
          for (std::string_view value : field.values) {
            EXPECT_GE(FeatureIndex(column + "." + std::string(value)), 0)
                << emitter->name() << " " << column << "." << value;
          }
          break;
        case FeatureEncoding::kNone:
          EXPECT_EQ(FeatureIndex(column), -1) << column << " is declared as no feature";
          break;
      }
    }
  }
}

TEST(FeaturesTest, AConfigFieldLandsInItsDeclaredColumn) {
  auto kernel = Emit(kTranspose, {{"shared_padding", 0}});
  std::vector<float> features = FeaturesOf(kernel.kernel, H100());
  EXPECT_EQ(Feature(features, "cfg.shared_padding"), 0);
  nlohmann::json config = nlohmann::json::parse(kernel.kernel.config_json);
  EXPECT_EQ(Feature(features, "cfg.tile_in"), config["tile_in"].get<float>());
  EXPECT_EQ(Feature(features, "emitter.transpose"), 1);
  EXPECT_EQ(Feature(features, "emitter.loop"), 0);
  EXPECT_TRUE(std::isnan(Feature(features, "cfg.threads_per_block"))) << "a loop field";
}

}  // namespace
}  // namespace tilesmith::costmodel
