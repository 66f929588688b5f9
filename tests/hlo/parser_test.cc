#include "compiler/hlo/parser.h"

#include <gtest/gtest.h>

#include "compiler/hlo/printer.h"

namespace tilesmith::hlo {
namespace {

std::unique_ptr<HloModule> MustParse(std::string_view text) {
  auto module = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

std::string ParseError(std::string_view text) {
  auto module = ParseHloModule(text, "bad.hlo");
  EXPECT_FALSE(module.has_value()) << "parsed although it should not:\n" << text;
  return module ? "" : module.error().message;
}

// print(parse(text)) is a fixed point of print . parse.
void ExpectFixedPoint(std::string_view text) {
  auto first = MustParse(text);
  ASSERT_NE(first, nullptr);
  std::string printed = PrintModule(*first);
  auto second = MustParse(printed);
  ASSERT_NE(second, nullptr) << printed;
  EXPECT_EQ(PrintModule(*second), printed);
}

TEST(ParserTest, InstructionLineFromTheSpec) {
  auto module = MustParse(R"(
    fused {
      exponential.183 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} parameter(0)
      broadcast.3115 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} parameter(1)
      ROOT add.936 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} add(exponential.183, broadcast.3115)
    })");
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry()->root();
  EXPECT_EQ(root->name(), "add.936");
  EXPECT_EQ(root->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(ShapeToString(root->shape()), "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}");
  EXPECT_EQ(root->operand(1)->name(), "broadcast.3115");
}

TEST(ParserTest, FusionWithOperandShapesAndMemorySpace) {
  auto module = MustParse(R"(
    %all-reduce-scatter.3 {
      p = bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)} parameter(0)
      ROOT s = bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)} slice(p), slice={[0:32], [0:32], [0:4096]}
    }
    ENTRY e {
      %fusion.32 = bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)} parameter(0)
      ROOT %fusion.3 = bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)} fusion(bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)} %fusion.32), kind=kCustom, calls=%all-reduce-scatter.3
    })");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "e");
  EXPECT_EQ(module->fusion()->name(), "all-reduce-scatter.3");
  const HloInstruction* fusion = module->entry()->root();
  EXPECT_EQ(fusion->attributes().fusion_kind, FusionKind::kCustom);
  EXPECT_EQ(fusion->shape().layout().memory_space, 1);
}

// What `--xla_dump_to` writes today: stack-frame tables between the header and the
// computations. They are read over; the module is the same as without them.
TEST(ParserTest, XlaDumpStackFrameTablesAreReadOver) {
  std::string body = "\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n";
  std::string with_tables =
      "HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\n"
      "FileNames\n1 \"/tmp/model.py\"\n2 \"/usr/lib/jax/core.py\"\n\n"
      "FunctionNames\n1 \"f\"\n\n"
      "FileLocations\n1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=5 "
      "end_column=20}\n\n"
      "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n" +
      body;
  auto module = ParseHloModule(with_tables);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  auto plain =
      ParseHloModule("HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n" + body);
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  EXPECT_EQ(PrintModule(**module), PrintModule(**plain));
}

TEST(ParserTest, RootDefaultsToLastInstructionAndEntryToLastComputation) {
  auto module = MustParse(
      "a {\n p = f32[] parameter(0)\n}\nb {\n x = f32[2] parameter(0)\n"
      " y = f32[2] negate(x)\n}\n");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "b");
  EXPECT_EQ(module->entry()->root()->name(), "y");
  EXPECT_FALSE(module->entry_is_explicit());
}

TEST(ParserTest, ForwardReferencesAndOmittedShapes) {
  auto module = MustParse(R"(
    c {
      ROOT t = tuple(n, p)
      n = f32[4]{0} negate(p)
      p = f32[4]{0} parameter(0)
    })");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ShapeToString(module->entry()->root()->shape()), "(f32[4]{0}, f32[4]{0})");
}

TEST(ParserTest, AttributesOfTheGrammar) {
  auto module = MustParse(R"(
    HloModule m, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}
    add {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT s = f32[] add(a, b)
    }
    ENTRY main {
      p = f32[8,6] parameter(0)
      i = s32[] parameter(1)
      ds = f32[2,3] dynamic-slice(p, i, i), dynamic_slice_sizes={2,3}
      pad = f32[10,12] pad(p, c), padding=1_1x0_1_1
      c = f32[] constant(0)
      sl = f32[4,2] slice(p), slice={[0:8:2], [1:5:2]}
      cmp = pred[8,6] compare(p, p), direction=LT, type=TOTALORDER
      r = f32[8] reduce(p, c), dimensions={1}, to_apply=add, metadata={op_name="x" source_line=3}
      rw = f32[8,3] reduce-window(p, c), window={size=1x2 stride=1x2}, to_apply=add
      it = s32[3,4] iota(), iota_dimension=1
      g = s32[] get-tuple-element(t), index=1
      t = (f32[8], s32[]) tuple(r, i), sharding={replicated}
      cc = f32[8] custom-call(r), custom_call_target="MyOp", backend_config="{\"k\": 1}", api_version=API_VERSION_TYPED_FFI
      ROOT out = f32[8] negate(cc), frontend_attributes={_xla="1"}, backend_config={"operation_queue_id":"0"}
    })");
  ASSERT_NE(module, nullptr);
  const HloComputation& entry = *module->entry();
  auto find = [&](std::string_view name) -> const HloInstruction* {
    for (const auto& instruction : entry.instructions()) {
      if (instruction->name() == name) return instruction.get();
    }
    return nullptr;
  };
  EXPECT_EQ(module->header_attributes().size(), 2u);
  EXPECT_EQ(find("ds")->attributes().dynamic_slice_sizes, (std::vector<int64_t>{2, 3}));
  const auto& padding = *find("pad")->attributes().padding;
  EXPECT_EQ(padding[1], (PadDim{0, 1, 1}));
  EXPECT_EQ((*find("sl")->attributes().slice)[0], (SliceDim{0, 8, 2}));
  EXPECT_EQ(find("cmp")->attributes().comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(find("r")->called_computation()->name(), "add");
  EXPECT_EQ(find("r")->attributes().metadata, "{op_name=\"x\" source_line=3}");
  EXPECT_EQ((*find("rw")->attributes().window)[1].stride, 2);
  EXPECT_EQ(find("cc")->attributes().custom_call_target, "MyOp");
  ASSERT_EQ(find("cc")->attributes().opaque.size(), 1u);
  EXPECT_EQ(find("cc")->attributes().opaque[0].value, "API_VERSION_TYPED_FFI");
  EXPECT_EQ(find("t")->attributes().sharding, "{replicated}");
  EXPECT_EQ(find("out")->attributes().backend_config, "{\"operation_queue_id\":\"0\"}");
}

TEST(ParserTest, ConstantLiterals) {
  auto module = MustParse(R"(
    ENTRY c {
      a = f32[] constant(-inf)
      b = pred[2] constant({true, false})
      c = c64[2] constant({(2.0, 0.0), (0.0, 2.0)})
      d = s4[3]{0:E(4)} constant({-2, -3, -4})
      e = s32[2,1] constant({{0}, {1}})
      f = f32[] constant(-1.70141173e+38)
      g = bf16[4] constant({...})
      h = f32[0] constant({})
      ROOT t = (f32[], pred[2], c64[2], s4[3]{0:E(4)}, s32[2,1], f32[], bf16[4], f32[0]) tuple(a, b, c, d, e, f, g, h)
    })");
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0)->literal()->ToString(), "-inf");
  EXPECT_EQ(root->operand(1)->literal()->ToString(), "{true, false}");
  EXPECT_EQ(root->operand(2)->literal()->ToString(), "{(2, 0), (0, 2)}");
  EXPECT_EQ(root->operand(3)->literal()->GetInt(2), -4);
  EXPECT_EQ(root->operand(4)->literal()->ToString(), "{{0}, {1}}");
  EXPECT_EQ(root->operand(5)->literal()->GetDouble(0), static_cast<double>(-1.70141173e+38f));
  EXPECT_TRUE(root->operand(6)->literal()->elided());
  EXPECT_EQ(root->operand(7)->literal()->ToString(), "{}");
}

TEST(ParserTest, CompareTypeEqualToTheDefaultIsDropped) {
  auto explicit_type = MustParse(
      "c {\n p = f32[2] parameter(0)\n"
      " ROOT r = pred[2] compare(p, p), direction=EQ, type=FLOAT\n}");
  auto implicit_type = MustParse(
      "c {\n p = f32[2] parameter(0)\n"
      " ROOT r = pred[2] compare(p, p), direction=EQ\n}");
  EXPECT_EQ(PrintModule(*explicit_type), PrintModule(*implicit_type));
}

TEST(ParserTest, PrintingIsAFixedPoint) {
  ExpectFixedPoint(R"(
    HloModule m, input_output_alias={ {0}: (0, {}) }
    %add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
    ENTRY %main.1 (p: f32[8,6]) -> f32[8] {
      /* block comment */ p = f32[8,6]{0,1} parameter(0)  // trailing comment
      c = f32[] constant(0.1)
      ROOT r = f32[8]{0} reduce(f32[8,6]{0,1} p, c), dimensions={1}, to_apply=%add
    })");
  ExpectFixedPoint(R"(
    s { a = f32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = s32[] parameter(3)
        ROOT t = tuple(c, d) }
    fusion {
      o1 = f32[50,5] parameter(0)
      o2 = s32[50,5] parameter(1)
      idx = s32[24,1] iota(), iota_dimension=0
      u1 = f32[24,1,3] parameter(2)
      u2 = s32[24,1,3] parameter(3)
      ROOT sc = (f32[50,5], s32[50,5]) scatter(o1, o2, idx, u1, u2), update_window_dims={1,2},
        inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
        unique_indices=true, to_apply=s
    })");
}

TEST(ParserTest, ErrorsNameLineColumnAndWhatWasExpected) {
  EXPECT_EQ(ParseError("f {\n  p = f32[4] parameter(0)\n  ROOT t = f32[4] tanhh(p)\n}"),
            "bad.hlo:3:19: error: unknown opcode 'tanhh'");
  EXPECT_EQ(ParseError("f {\n  p = f32[4] parameter(0)\n  ROOT t = f32[4] tanh(q)\n}"),
            "bad.hlo:3:24: error: unknown operand 'q' in computation 'f'");
  EXPECT_EQ(ParseError("f {\n  p = f32[4] parameter(0)\n  ROOT t = f32[5] tanh(p)\n}"),
            "bad.hlo:3:3: error: 't' is declared as f32[5] but its operands give f32[4]");
  EXPECT_EQ(ParseError("f {\n  p = f33[4] parameter(0)\n}"),
            "bad.hlo:2:7: error: unknown element type 'f33'");
  EXPECT_EQ(ParseError("f {\n  p = f32[4]{0,1} parameter(0)\n}"),
            "bad.hlo:2:13: error: layout {0,1} has 2 dimensions but the shape has 1");
  EXPECT_EQ(ParseError("f {\n  p = f32[4] parameter(0)\n  ROOT t = f32[4] add(p p)\n}"),
            "bad.hlo:3:25: error: expected ',' or ')' in the operand list, found 'p'");
}

TEST(ParserTest, StructuralErrors) {
  EXPECT_NE(
      ParseError("f {\n p = f32[] parameter(0)\n p = f32[] parameter(1)\n}").find("defined twice"),
      std::string::npos);
  EXPECT_NE(ParseError("f {\n a = f32[] negate(b)\n b = f32[] negate(a)\n}").find("cycle"),
            std::string::npos);
  EXPECT_NE(
      ParseError("f {\n p = f32[] parameter(1)\n}").find("but the computation has 1 parameters"),
      std::string::npos);
  EXPECT_NE(ParseError("f {\n p = f32[2] parameter(0)\n ROOT r = f32[] reduce(p, p), "
                       "dimensions={0}, to_apply=nowhere\n}")
                .find("unknown computation 'nowhere'"),
            std::string::npos);
  EXPECT_NE(ParseError("f {\n p = f32[2,3] parameter(0)\n ROOT t = f32[3,2] transpose(p), "
                       "dimensions={0,0}\n}")
                .find("repeats dimension 0"),
            std::string::npos);
  EXPECT_NE(ParseError("f {\n p = f32[2] constant({1, 2, 3})\n}").find("has 2 elements"),
            std::string::npos);
  EXPECT_NE(ParseError("f {\n p = s8[] constant(300)\n}").find("does not fit in s8"),
            std::string::npos);
  EXPECT_NE(ParseError("f {\n p = f32[2] parameter(0)\n").find("missing its closing"),
            std::string::npos);
  EXPECT_NE(ParseError("").find("at least one computation"), std::string::npos);
}

TEST(ParserTest, ShapesParseAndPrintCanonically) {
  struct Case {
    const char* text;
    const char* printed;
  };
  for (const Case& c : std::vector<Case>{
           {"f32[3,5]", "f32[3,5]{1,0}"},
           {"f32[]", "f32[]"},
           {"f32[3, 5]{0,1}", "f32[3,5]{0,1}"},
           {"s4[8]{0:E(4)}", "s4[8]{0:E(4)}"},
           {"f32[<=8,?]", "f32[<=8,?]{1,0}"},
           {"(f32[], (s32[2], token[]))", "(f32[], (s32[2]{0}, token[]))"},
           {"f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"},
           {"bf16[8]{0:S(5)E(16)L(4)T(8)}", "bf16[8]{0:T(8)L(4)E(16)S(5)}"},
           {"f32[4]{0:D(C+)#(u16)*(u32)SC(0:2)P(f32[4]{0})M(8)}",
            "f32[4]{0:D(C+)#(u16)*(u32)SC(0:2)P(f32[4]{0})M(8)}"},
           {"f8e4m3b11fnuz[2]", "f8e4m3b11fnuz[2]{0}"},
           {"f32[]{:S(1)}", "f32[]{:S(1)}"},
       }) {
    auto shape = ParseShape(c.text);
    ASSERT_TRUE(shape.has_value()) << c.text << ": " << shape.error().message;
    EXPECT_EQ(ShapeToString(*shape), c.printed) << c.text;
    auto again = ParseShape(ShapeToString(*shape));
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, *shape);
  }
  EXPECT_FALSE(ParseShape("f32[3]{0:T(*)}").has_value());
  EXPECT_FALSE(ParseShape("f32[-1]").has_value());
  EXPECT_FALSE(ParseShape("f32[4611686018427387904,4]").has_value());
}

}  // namespace
}  // namespace tilesmith::hlo
