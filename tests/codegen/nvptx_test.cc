// The NVPTX target: what the PTX of a kernel must show (vector width, maxntid, parameters,
// libdevice resolved) and what ptxas reports for its cubin. Needs the CUDA toolkit (no
// GPU); skips, saying so, without it.
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <regex>

#include "compiler/codegen/llvm_setup.h"
#include "compiler/codegen/nvptx_abi.h"
#include "compiler/codegen/nvptx_libdevice.h"
#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

using testing::CompileHloForNvptx;
using testing::CountLines;
using testing::ReadSourceFile;

// The global loads or stores of a PTX text, one per matching line.
std::vector<std::string> GlobalAccesses(const std::string& ptx, std::string_view op) {
  std::vector<std::string> accesses;
  std::istringstream lines(ptx);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(std::string(op) + ".global") != std::string::npos) accesses.push_back(line);
  }
  return accesses;
}

// An access of 8 bytes in one instruction: four 16-bit lanes, two 32-bit lanes or a 64-bit
// scalar.
bool IsEightByteAccess(const std::string& line) {
  static const std::regex kEightBytes(R"(\.(v4\.(u16|b16|f16|bf16)|v2\.(u32|b32|f32)|u64|b64)\s)");
  return std::regex_search(line, kEightBytes);
}

// One elementwise op on T[64] (binary ops take both parameters), as a fusion module.
std::string ElementwiseModule(std::string_view op, std::string_view type) {
  bool binary = op == "power" || op == "atan2" || op == "remainder";
  std::string t(type);
  std::string root = "ROOT %r = " + t + "[64] " + std::string(op) + (binary ? "(%p, %q)" : "(%p)");
  return "HloModule m\nf {\n  %p = " + t + "[64] parameter(0)\n  %q = " + t +
         "[64] parameter(1)\n  " + root + "\n}\nENTRY main {\n  %p = " + t +
         "[64] parameter(0)\n  %q = " + t + "[64] parameter(1)\n  ROOT fusion = " + t +
         "[64] fusion(%p, %q), kind=kLoop, calls=f\n}\n";
}

TEST(NvptxTest, GeluUsesOneEightByteLoadAndStorePerFourElements) {
  TS_SKIP_WITHOUT_CUBINS();
  auto result = CompileHloForNvptx(ReadSourceFile("configs/examples/gelu.hlo"));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_NE(result->kernel.config_json.find("\"vector\":4"), std::string::npos)
      << result->kernel.config_json;
  const std::string& ptx = result->compiled.ptx;
  std::vector<std::string> loads = GlobalAccesses(ptx, "ld");
  std::vector<std::string> stores = GlobalAccesses(ptx, "st");
  // Vector 4, one chunk: each thread reads four bf16s and writes four, once each.
  ASSERT_EQ(loads.size(), 1u) << ptx;
  ASSERT_EQ(stores.size(), 1u) << ptx;
  EXPECT_TRUE(IsEightByteAccess(loads[0])) << loads[0];
  EXPECT_TRUE(IsEightByteAccess(stores[0])) << stores[0];
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);

  const ResourceUsage& usage = result->compiled.cubin.usage;
  EXPECT_GT(usage.registers, 0);
  EXPECT_LE(usage.registers, 255);
  EXPECT_EQ(usage.spill_bytes(), 0);
  EXPECT_EQ(usage.stack_bytes, 0);
  EXPECT_EQ(usage.shared_bytes, 0);
  ASSERT_GE(result->compiled.cubin.bytes.size(), 4u);
  EXPECT_EQ(result->compiled.cubin.bytes.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_GT(result->compiled.timings.total_ms(), 0);
}

TEST(NvptxTest, VectorWidthFollowsTheConfig) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  std::string gelu = ReadSourceFile("configs/examples/gelu.hlo");
  auto scalar = CompileHloForNvptx(gelu, NvptxStage::kPtx, {{"vector", 1}});
  ASSERT_TRUE(scalar.has_value()) << scalar.error().message;
  auto pairs = CompileHloForNvptx(gelu, NvptxStage::kPtx, {{"vector", 2}});
  ASSERT_TRUE(pairs.has_value()) << pairs.error().message;
  for (const std::string& load : GlobalAccesses(scalar->compiled.ptx, "ld")) {
    EXPECT_NE(load.find(".u16"), std::string::npos) << load;
    EXPECT_EQ(load.find(".v"), std::string::npos) << load;
  }
  std::vector<std::string> loads = GlobalAccesses(pairs->compiled.ptx, "ld");
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_NE(loads[0].find(".v2.u16"), std::string::npos) << loads[0];
}

// From sm_80 a bf16 result is rounded by one cvt.rn.bf16.f32 instead of an integer
// sequence, and two lanes' roundings by one cvt.rn.bf16x2.f32; the conversions must not stop
// the loads and stores from being vectors.
TEST(NvptxTest, Bf16RoundingUsesTheConversionInstructionFromSm80) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  std::string gelu = ReadSourceFile("configs/examples/gelu.hlo");
  auto scalar = CompileHloForNvptx(gelu, NvptxStage::kPtx, {{"vector", 1}}, "cuda:sm_80");
  ASSERT_TRUE(scalar.has_value()) << scalar.error().message;
  // Nine ops, each rounded once.
  EXPECT_EQ(CountLines(scalar->compiled.ptx, "cvt.rn.bf16.f32"), 9) << scalar->compiled.ptx;
  EXPECT_EQ(CountLines(scalar->compiled.ptx, "cvt.rn.bf16x2.f32"), 0) << scalar->compiled.ptx;

  auto ampere = CompileHloForNvptx(gelu, NvptxStage::kPtx, {{"vector", 4}}, "cuda:sm_80");
  ASSERT_TRUE(ampere.has_value()) << ampere.error().message;
  const std::string& ptx = ampere->compiled.ptx;
  EXPECT_EQ(CountLines(ptx, "cvt.rn.bf16x2.f32"), 18) << ptx;
  EXPECT_EQ(CountLines(ptx, "cvt.rn.bf16.f32"), 0) << ptx;
  EXPECT_EQ(CountLines(ptx, "setp.nan.f32"), 0) << ptx;
  ASSERT_EQ(GlobalAccesses(ptx, "ld").size(), 1u) << ptx;
  ASSERT_EQ(GlobalAccesses(ptx, "st").size(), 1u) << ptx;

  auto turing = CompileHloForNvptx(gelu, NvptxStage::kPtx, {{"vector", 4}}, "cuda:sm_75");
  ASSERT_TRUE(turing.has_value()) << turing.error().message;
  EXPECT_EQ(CountLines(turing->compiled.ptx, "cvt.rn.bf16"), 0);
  EXPECT_GT(CountLines(turing->compiled.ptx, "setp.nan.f32"), 0);
}

// XLA's GELU kernel on sm_90: vector 8 moves 16 bytes per access, the widest there is
// (LLVM 16 alone splits eight 16-bit lanes into two 8-byte accesses), and every rounding
// is half of a packed conversion.
TEST(NvptxTest, Bf16GeluAtVector8IsPackedWithSixteenByteAccesses) {
  TS_SKIP_WITHOUT_CUBINS();
  auto result = CompileHloForNvptx(ReadSourceFile("configs/examples/gelu.hlo"), NvptxStage::kCubin,
                                   {{"vector", 8}});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  const std::string& ptx = result->compiled.ptx;
  EXPECT_EQ(CountLines(ptx, "cvt.rn.bf16x2.f32"), 36) << ptx;
  EXPECT_EQ(CountLines(ptx, "cvt.rn.bf16.f32"), 0) << ptx;
  std::vector<std::string> loads = GlobalAccesses(ptx, "ld");
  std::vector<std::string> stores = GlobalAccesses(ptx, "st");
  ASSERT_EQ(loads.size(), 1u) << ptx;
  ASSERT_EQ(stores.size(), 1u) << ptx;
  EXPECT_NE(loads[0].find("ld.global.nc.v4.u32"), std::string::npos) << loads[0];
  EXPECT_NE(stores[0].find("st.global.v4.u32"), std::string::npos) << stores[0];
  EXPECT_EQ(result->compiled.cubin.usage.spill_bytes(), 0);
  EXPECT_EQ(result->compiled.cubin.usage.stack_bytes, 0);
}

// The same GELU in f16: LLVM already computes the products and sums in f16, and they pair up
// into f16x2 arithmetic; the roundings of tanh's f32 result pair up into cvt.rn.f16x2.f32
// from sm_80 on.
TEST(NvptxTest, F16ArithmeticAndRoundingsArePacked) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  std::string gelu =
      std::regex_replace(ReadSourceFile("configs/examples/gelu.hlo"), std::regex("bf16"), "f16");
  auto hopper = CompileHloForNvptx(gelu, NvptxStage::kPtx, {{"vector", 8}});
  ASSERT_TRUE(hopper.has_value()) << hopper.error().message;
  const std::string& ptx = hopper->compiled.ptx;
  EXPECT_EQ(CountLines(ptx, "cvt.rn.f16x2.f32"), 4) << ptx;
  EXPECT_EQ(CountLines(ptx, "cvt.rn.f16.f32"), 0) << ptx;
  // Eight lanes of six products and two sums.
  EXPECT_EQ(CountLines(ptx, "mul.rn.f16x2"), 24) << ptx;
  EXPECT_EQ(CountLines(ptx, "add.rn.f16x2"), 8) << ptx;
  EXPECT_EQ(CountLines(ptx, "mul.rn.f16\t"), 0) << ptx;
  EXPECT_EQ(CountLines(ptx, "add.rn.f16\t"), 0) << ptx;
  std::vector<std::string> loads = GlobalAccesses(ptx, "ld");
  std::vector<std::string> stores = GlobalAccesses(ptx, "st");
  ASSERT_EQ(loads.size(), 1u) << ptx;
  ASSERT_EQ(stores.size(), 1u) << ptx;
  EXPECT_NE(loads[0].find(".v4.b32"), std::string::npos) << loads[0];
  EXPECT_NE(stores[0].find(".v4.b32"), std::string::npos) << stores[0];

  auto turing = CompileHloForNvptx(gelu, NvptxStage::kPtx, {{"vector", 8}}, "cuda:sm_75");
  ASSERT_TRUE(turing.has_value()) << turing.error().message;
  EXPECT_EQ(CountLines(turing->compiled.ptx, "cvt.rn.f16x2.f32"), 0);
  EXPECT_EQ(CountLines(turing->compiled.ptx, "cvt.rn.f16.f32"), 8);
}

// libdevice's erff branches: the lanes of a thread end up in different basic blocks, out of
// the back end's vectoriser's reach. The early vectoriser still combines them.
TEST(NvptxTest, LanesAroundBranchyMathAreStillVectorAccesses) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  std::string erf = ElementwiseModule("erf", "f32");
  for (size_t pos = erf.find("[64]"); pos != std::string::npos; pos = erf.find("[64]", pos)) {
    erf.replace(pos, 4, "[4096,1024]");
  }
  auto result = CompileHloForNvptx(erf, NvptxStage::kPtx, {{"vector", 4}});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  std::vector<std::string> loads = GlobalAccesses(result->compiled.ptx, "ld");
  std::vector<std::string> stores = GlobalAccesses(result->compiled.ptx, "st");
  ASSERT_EQ(loads.size(), 1u) << result->compiled.ptx;
  ASSERT_EQ(stores.size(), 1u) << result->compiled.ptx;
  EXPECT_NE(loads[0].find(".v4.f32"), std::string::npos) << loads[0];
  EXPECT_NE(stores[0].find(".v4.f32"), std::string::npos) << stores[0];
}

TEST(NvptxTest, MaxntidAndAnnotationsFollowTheBlock) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  auto result = CompileHloForNvptx(ReadSourceFile("configs/examples/gelu.hlo"), NvptxStage::kPtx,
                                   {{"threads_per_block", 256}, {"vector", 4}});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_NE(result->compiled.ptx.find(".maxntid 256, 1, 1"), std::string::npos);
  EXPECT_NE(result->compiled.ptx.find(".visible .entry gelu("), std::string::npos);
  EXPECT_EQ(result->compiled.launch.threads[0], 256);
  auto ir = CompileHloForNvptx(ReadSourceFile("configs/examples/gelu.hlo"), NvptxStage::kLlvm);
  ASSERT_TRUE(ir.has_value()) << ir.error().message;
  const std::string& text = ir->compiled.llvm_ir;
  EXPECT_NE(text.find("!\"kernel\", i32 1"), std::string::npos);
  EXPECT_NE(text.find("!\"maxntidx\", i32 128"), std::string::npos);
  EXPECT_NE(text.find("noalias"), std::string::npos);
  EXPECT_NE(text.find("llvm.nvvm.read.ptx.sreg.ctaid.x(), !range"), std::string::npos);
  EXPECT_EQ(text.find("__nvvm_reflect"), std::string::npos) << "NVVMReflect did not run";
}

TEST(NvptxTest, OneParameterPerBuffer) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  constexpr char kTwoOutputs[] = R"(HloModule m
f {
  %a = f32[32,16] parameter(0)
  %b = f32[32,16] parameter(1)
  %c = f32[16] parameter(2)
  %bc = f32[32,16] broadcast(%c), dimensions={1}
  %s = f32[32,16] add(%a, %b)
  %m = f32[32,16] multiply(%s, %bc)
  ROOT %t = (f32[32,16], f32[32,16]) tuple(%s, %m)
}
ENTRY main {
  %a = f32[32,16] parameter(0)
  %b = f32[32,16] parameter(1)
  %c = f32[16] parameter(2)
  ROOT fusion = (f32[32,16], f32[32,16]) fusion(%a, %b, %c), kind=kLoop, calls=f
})";
  auto result = CompileHloForNvptx(kTwoOutputs, NvptxStage::kPtx);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->compiled.buffers.size(), 5u);
  EXPECT_EQ(CountLines(result->compiled.ptx, ".param .u64"), 5) << result->compiled.ptx;
}

TEST(NvptxTest, EveryMathOpResolvesThroughLibdevice) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  const std::vector<std::string> ops = {"exponential", "exponential-minus-one",
                                        "log",         "log-plus-one",
                                        "tanh",        "sin",
                                        "cos",         "tan",
                                        "erf",         "cbrt",
                                        "acos",        "acosh",
                                        "asin",        "asinh",
                                        "atanh",       "cosh",
                                        "sinh",        "logistic",
                                        "sqrt",        "rsqrt",
                                        "power",       "atan2",
                                        "remainder"};
  for (std::string_view type : {"f32", "f64", "bf16"}) {
    for (const std::string& op : ops) {
      SCOPED_TRACE(std::string(type) + " " + op);
      auto result = CompileHloForNvptx(ElementwiseModule(op, type), NvptxStage::kPtx);
      ASSERT_TRUE(result.has_value()) << result.error().message;
      EXPECT_EQ(result->compiled.ptx.find("__nv_"), std::string::npos);
      EXPECT_EQ(result->compiled.ptx.find(".extern"), std::string::npos);
    }
  }
}

// Every name TargetHooks::MathFunction may be asked for exists in libdevice for float and
// double, whether or not an op uses it yet.
TEST(NvptxTest, LibdeviceDefinesEveryMathFunctionName) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  InitializeLlvm();
  llvm::LLVMContext context;
  llvm::Module module("math", context);
  module.setTargetTriple("nvptx64-nvidia-cuda");
  NvptxHooks hooks;
  const std::vector<std::string> names = {
      "exp",  "expm1", "exp2", "log",   "log1p", "log2",  "log10",  "tanh",   "sin",      "cos",
      "tan",  "erf",   "erfc", "cbrt",  "acos",  "acosh", "asin",   "asinh",  "atan",     "atanh",
      "cosh", "sinh",  "pow",  "atan2", "fmod",  "hypot", "lgamma", "tgamma", "remainder"};
  for (llvm::Type* type : {llvm::Type::getFloatTy(context), llvm::Type::getDoubleTy(context)}) {
    for (const std::string& name : names) hooks.MathFunction(module, name, type);
  }
  Status linked = LinkLibdevice(module);
  ASSERT_TRUE(linked.has_value()) << linked.error().message;
  for (const llvm::Function& function : module) {
    EXPECT_FALSE(function.isDeclaration() && function.getName().startswith("__nv_"))
        << function.getName().str();
  }
}

TEST(NvptxTest, NewerArchitecturesGetTheNewestPtxTarget) {
  EXPECT_EQ(PtxTargetFor(90).value(), 90);
  EXPECT_EQ(PtxTargetFor(80).value(), 80);
  EXPECT_EQ(PtxTargetFor(100).value(), 90);
  EXPECT_EQ(PtxTargetFor(88).value(), 87);
  EXPECT_FALSE(PtxTargetFor(35).has_value());
}

TEST(NvptxTest, EntryNamesAreValidPtxIdentifiers) {
  emitters::KernelIR kernel;
  kernel.name = "fusion.1-x";
  EXPECT_EQ(NvptxEntryName(kernel), "fusion_1_x");
  kernel.name = "1st";
  EXPECT_EQ(NvptxEntryName(kernel), "_1st");
}

TEST(NvptxTest, Sm80CubinsToo) {
  TS_SKIP_WITHOUT_CUBINS();
  auto result = CompileHloForNvptx(ReadSourceFile("configs/examples/gelu.hlo"), NvptxStage::kCubin,
                                   nullptr, "cuda:sm_80");
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_NE(result->compiled.ptx.find(".target sm_80"), std::string::npos);
  EXPECT_GT(result->compiled.cubin.usage.registers, 0);
}

}  // namespace
}  // namespace tilesmith::codegen
