#include "compiler/hlo/canonical.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "support/sha256.h"

namespace tilesmith::hlo {
namespace {

constexpr std::string_view kBase = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p0 = f32[8,16]{1,0} parameter(0)
  p1 = f32[8] parameter(1)
  c = f32[] constant(0)
  e = f32[8,16]{1,0} exponential(p0)
  r = f32[8] reduce(e, c), dimensions={1}, to_apply=add
  ROOT o = f32[8] multiply(r, p1)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  y = f32[8] parameter(1)
  ROOT f = f32[8] fusion(x, y), kind=kInput, calls=fused
}
)";

std::string Fingerprint(std::string_view text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  if (!module) return "";
  auto fingerprint = FusionFingerprint(**module);
  EXPECT_TRUE(fingerprint.has_value());
  return fingerprint.value_or("");
}

std::string Replace(std::string_view text, std::string_view from, std::string_view to) {
  std::string result(text);
  size_t at = result.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) result.replace(at, from.size(), to);
  return result;
}

TEST(CanonicalTest, CanonicalTextIsPositionalAndPostOrdered) {
  auto module = ParseHloModule(kBase);
  ASSERT_TRUE(module.has_value());
  EXPECT_EQ(CanonicalFusionText(**module),
            "comp_0 {\n"
            "  tmp_0 = f32[] parameter(0)\n"
            "  tmp_1 = f32[] parameter(1)\n"
            "  ROOT tmp_2 = f32[] add(tmp_0, tmp_1)\n"
            "}\n"
            "fusion {\n"
            "  tmp_0 = f32[8,16]{1,0} parameter(0)\n"
            "  tmp_1 = f32[8,16]{1,0} exponential(tmp_0)\n"
            "  tmp_2 = f32[] constant(0)\n"
            "  tmp_3 = f32[8]{0} reduce(tmp_1, tmp_2), dimensions={1}, to_apply=comp_0\n"
            "  tmp_4 = f32[8]{0} parameter(1)\n"
            "  ROOT tmp_5 = f32[8]{0} multiply(tmp_3, tmp_4)\n"
            "}\n");
}

TEST(CanonicalTest, FingerprintIsSha256Hex) {
  std::string fingerprint = Fingerprint(kBase);
  EXPECT_EQ(fingerprint.size(), 64u);
  EXPECT_EQ(fingerprint.find_first_not_of("0123456789abcdef"), std::string::npos);
  auto empty = Sha256Hex("");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(*empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(CanonicalTest, NamesMetadataAndOrderDoNotChangeTheFingerprint) {
  std::string base = Fingerprint(kBase);
  // Renamed instructions and computations.
  std::string renamed = Replace(Replace(Replace(kBase, "e = f32[8,16]{1,0} exponential(p0)",
                                                "exp.7 = f32[8,16]{1,0} exponential(p0)"),
                                        "r = f32[8] reduce(e, c)", "r = f32[8] reduce(exp.7, c)"),
                                "add {", "sum.3 {");
  renamed = Replace(renamed, "to_apply=add", "to_apply=sum.3");
  EXPECT_EQ(Fingerprint(renamed), base);
  // Metadata, backend_config, frontend attributes, sharding.
  std::string annotated =
      Replace(kBase, "ROOT o = f32[8] multiply(r, p1)",
              "ROOT o = f32[8] multiply(r, p1), metadata={op_name=\"jit(f)/mul\"}, "
              "backend_config={\"x\":1}, frontend_attributes={a=\"b\"}, sharding={replicated}");
  EXPECT_EQ(Fingerprint(annotated), base);
  // Independent lines in another order; default layouts written out or not.
  std::string reordered =
      Replace(Replace(kBase, "  p1 = f32[8] parameter(1)\n", ""), "  c = f32[] constant(0)\n",
              "  c = f32[] constant(0)\n  p1 = f32[8]{0} parameter(1)\n");
  EXPECT_EQ(Fingerprint(reordered), base);
  // The wrapper around the fusion (kind, entry names) is not part of the key.
  EXPECT_EQ(Fingerprint(Replace(kBase, "kind=kInput", "kind=kLoop")), base);
}

TEST(CanonicalTest, SemanticChangesChangeTheFingerprint) {
  std::string base = Fingerprint(kBase);
  std::vector<std::string> variants = {
      // shape
      Replace(Replace(Replace(kBase, "p0 = f32[8,16]{1,0}", "p0 = f32[8,17]{1,0}"),
                      "e = f32[8,16]{1,0}", "e = f32[8,17]{1,0}"),
              "x = f32[8,16]", "x = f32[8,17]"),
      // layout
      Replace(Replace(kBase, "p0 = f32[8,16]{1,0}", "p0 = f32[8,16]{0,1}"), "e = f32[8,16]{1,0}",
              "e = f32[8,16]{0,1}"),
      // constant
      Replace(kBase, "constant(0)", "constant(1)"),
      // opcode
      Replace(kBase, "ROOT o = f32[8] multiply(r, p1)", "ROOT o = f32[8] subtract(r, p1)"),
      // reducer body
      Replace(kBase, "ROOT s = f32[] add(a, b)", "ROOT s = f32[] maximum(a, b)"),
      // operand order
      Replace(kBase, "multiply(r, p1)", "multiply(p1, r)"),
  };
  for (const std::string& variant : variants) EXPECT_NE(Fingerprint(variant), base) << variant;
  std::string tiled = Replace(kBase, "p0 = f32[8,16]{1,0}", "p0 = f32[8,16]{1,0:T(8,128)}");
  EXPECT_NE(Fingerprint(tiled), base);
  // attribute
  std::string reduced_dims = Replace(Replace(kBase, "dimensions={1}", "dimensions={0}"),
                                     "r = f32[8] reduce", "r = f32[16] reduce");
  reduced_dims = Replace(reduced_dims, "p1 = f32[8] parameter(1)", "p1 = f32[16] parameter(1)");
  reduced_dims = Replace(reduced_dims, "ROOT o = f32[8] multiply", "ROOT o = f32[16] multiply");
  reduced_dims = Replace(reduced_dims, "y = f32[8] parameter(1)", "y = f32[16] parameter(1)");
  reduced_dims = Replace(reduced_dims, "ROOT f = f32[8] fusion", "ROOT f = f32[16] fusion");
  EXPECT_NE(Fingerprint(reduced_dims), base);
}

}  // namespace
}  // namespace tilesmith::hlo
