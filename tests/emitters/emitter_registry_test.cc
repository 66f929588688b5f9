// The registry is the one list of emitters: names are unique and find their emitter again,
// shared config fields are declared alike, and every field a config holds is declared (so
// the learned model's columns, derived from the declarations, miss none silently).
#include "compiler/emitters/emitter_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::Parse;

TEST(EmitterRegistryTest, NamesAreUniqueAndFindTheirEmitter) {
  std::set<std::string_view> names;
  ASSERT_FALSE(RegisteredEmitters().empty());
  for (const Emitter* emitter : RegisteredEmitters()) {
    EXPECT_FALSE(emitter->name().empty());
    EXPECT_TRUE(names.insert(emitter->name()).second) << emitter->name() << " is registered twice";
    EXPECT_EQ(FindEmitter(emitter->name()), emitter) << emitter->name();
  }
  EXPECT_NE(FindEmitter("loop"), nullptr) << "the loop emitter is every fusion's fallback";
  EXPECT_EQ(FindEmitter("no_such_emitter"), nullptr);
}

TEST(EmitterRegistryTest, SharedConfigFieldsAreDeclaredAlike) {
  std::map<std::string_view, const ConfigField*> first;
  for (const Emitter* emitter : RegisteredEmitters()) {
    std::set<std::string_view> own;
    for (const ConfigField& field : emitter->config_fields()) {
      EXPECT_TRUE(own.insert(field.name).second)
          << emitter->name() << " declares " << field.name << " twice";
      EXPECT_EQ(field.encoding == FeatureEncoding::kOneHot, !field.values.empty())
          << emitter->name() << "." << field.name << ": a one-hot field needs its values";
      auto [it, inserted] = first.emplace(field.name, &field);
      if (inserted) continue;
      EXPECT_EQ(it->second->encoding, field.encoding) << field.name << " in " << emitter->name();
      EXPECT_TRUE(std::equal(it->second->values.begin(), it->second->values.end(),
                             field.values.begin(), field.values.end()))
          << field.name << " in " << emitter->name();
    }
  }
}

// Fusions that reach the emitters with config fields of their own.
constexpr const char* kFusions[] = {
    R"(f {
  p0 = f32[4096,256] parameter(0)
  ROOT e = f32[4096,256] exponential(p0)
})",
    R"(f {
  p0 = f32[64,1024,1024] parameter(0)
  ROOT t = f32[64,1024,1024] transpose(p0), dimensions={0,2,1}
})",
    R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[256,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(p0, z), dimensions={1}, to_apply=add
})"};

TEST(EmitterRegistryTest, EveryFieldOfADefaultOrSpaceConfigIsDeclared) {
  for (const char* text : kFusions) {
    auto module = Parse(text);
    ASSERT_NE(module, nullptr);
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    const Emitter& emitter = EmitterFor(analysis);
    std::set<std::string_view> declared;
    for (const ConfigField& field : emitter.config_fields()) declared.insert(field.name);
    std::vector<nlohmann::json> configs = {emitter.DefaultConfig(analysis, H100())};
    for (const SpaceEntry& entry : emitter.Space(analysis, H100())) configs.push_back(entry.config);
    for (const nlohmann::json& config : configs) {
      for (const auto& [key, value] : config.items()) {
        EXPECT_TRUE(declared.contains(key))
            << emitter.name() << " config field '" << key << "' is not in config_fields()";
      }
    }
  }
}

}  // namespace
// A reduce or reduce-window inside a loop fusion is folded by elemental code with several
// accumulators, not in the evaluator's order: its outputs are compared with the tolerance of
// that many reassociated terms (a sum of 1024 f32 values differed from the evaluator's by
// 5e-5 relative, which the plain tolerance of 1e-5 called a wrong result).
TEST(EmitterRegistryTest, ReductionsInsideLoopFusionsCountTheirReassociatedTerms) {
  auto terms = [](std::string_view text) {
    auto module = Parse(text);
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    auto kernel = EmitKernel(analysis, nullptr, DeviceInfo::ForTarget(Target::Host()));
    EXPECT_TRUE(kernel.has_value()) << kernel.error().message;
    return kernel ? std::make_pair(kernel->emitter, ReassociatedTerms(analysis, *kernel))
                  : std::make_pair(std::string(), int64_t{0});
  };
  auto reduce = terms(R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
f {
  p0 = f32[32,64,32,16] parameter(0)
  z = f32[] constant(0)
  s = f32[32,32] reduce(p0, z), dimensions={1,3}, to_apply=add
  ROOT e = f32[32,32] exponential(s)
})");
  EXPECT_EQ(reduce.first, "loop");
  EXPECT_EQ(reduce.second, 64 * 16);
  auto window = terms(R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
f {
  p0 = f32[64,64] parameter(0)
  z = f32[] constant(0)
  ROOT w = f32[62,61] reduce-window(p0, z), window={size=3x4}, to_apply=add
})");
  EXPECT_EQ(window.second, 12);
  auto plain = terms(R"(f {
  p0 = f32[4096,256] parameter(0)
  ROOT e = f32[4096,256] exponential(p0)
})");
  EXPECT_EQ(plain.second, 1);
}

}  // namespace tilesmith::emitters
