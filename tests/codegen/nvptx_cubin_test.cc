// PTX -> cubin through nvJitLink and through ptxas, and reading ptxas's resource report.
#include "compiler/codegen/nvptx_cubin.h"

#include <gtest/gtest.h>

#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

// nvJitLink's -verbose info log for a kernel calling a separately compiled function: the
// linker's summary (46 registers, 72 stack) is what the cubin holds.
constexpr char kNvJitLinkLog[] = R"(ptxas info    : 296 bytes gmem
ptxas info    : Function properties for __internal_trig_reduction_slowpathd
ptxas         .     40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compile time = 11.292 ms
ptxas info    : Compiling entry function 'f' for 'sm_90'
ptxas info    : Function properties for f
ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers
ptxas info    : Compile time = 11.427 ms
info    : 296 bytes gmem
info    : Function properties for 'f':
info    : used 46 registers, used 0 barriers, 72 stack, 0 bytes smem, 552 bytes cmem[0], 0 bytes lmem
)";

// nvJitLink's log for a kernel with a 32x33 f32 tile: the linker's summary adds sm_90's
// 1 KiB reserve to the kernel's 4,224 bytes.
constexpr char kNvJitLinkSharedLog[] = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'fused' for 'sm_90'
ptxas info    : Function properties for fused
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 4224 bytes smem
ptxas info    : Compile time = 8.240 ms
info    : 0 bytes gmem
info    : Function properties for 'fused':
info    : used 32 registers, used 1 barriers, 0 stack, 5248 bytes smem, 544 bytes cmem[0], 0 bytes lmem
)";

// `ptxas -v` for two kernels, the one asked for second.
constexpr char kPtxasLog[] = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    16 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 1056 bytes smem, 372 bytes cmem[0]
ptxas info    : Compile time = 3.1 ms
)";

TEST(PtxasReportTest, ReadsNvJitLinkSummary) {
  auto usage = ParsePtxasReport(kNvJitLinkLog, "f");
  ASSERT_TRUE(usage.has_value()) << usage.error().message;
  EXPECT_EQ(usage->registers, 46);
  EXPECT_EQ(usage->stack_bytes, 72);
  EXPECT_EQ(usage->shared_bytes, 0);
  EXPECT_EQ(usage->spill_bytes(), 0);
  EXPECT_EQ(usage->constant_bytes, 552);
}

// The shared bytes are the kernel's own allocation: the GPU model adds the reserve itself.
TEST(PtxasReportTest, SharedBytesLeaveOutTheLinkersReserve) {
  auto usage = ParsePtxasReport(kNvJitLinkSharedLog, "fused");
  ASSERT_TRUE(usage.has_value()) << usage.error().message;
  EXPECT_EQ(usage->shared_bytes, 4224);
  EXPECT_EQ(usage->registers, 32);
}

TEST(PtxasReportTest, ReadsTheKernelAskedFor) {
  auto usage = ParsePtxasReport(kPtxasLog, "k");
  ASSERT_TRUE(usage.has_value()) << usage.error().message;
  EXPECT_EQ(usage->registers, 40);
  EXPECT_EQ(usage->shared_bytes, 1056);
  EXPECT_EQ(usage->stack_bytes, 16);
  EXPECT_EQ(usage->spill_store_bytes, 12);
  EXPECT_EQ(usage->spill_load_bytes, 20);
  EXPECT_EQ(usage->spill_bytes(), 32);
  auto other = ParsePtxasReport(kPtxasLog, "other");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->registers, 255);
  EXPECT_EQ(other->shared_bytes, 4096);
}

TEST(PtxasReportTest, UnknownKernelIsNotFound) {
  auto usage = ParsePtxasReport(kPtxasLog, "missing");
  ASSERT_FALSE(usage.has_value());
  EXPECT_EQ(usage.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(ParsePtxasReport("", "k").has_value());
}

class CubinToolTest : public ::testing::TestWithParam<CubinTool> {};

TEST_P(CubinToolTest, BothToolsAgreeOnGelu) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  if (GetParam() == CubinTool::kNvJitLink && !HaveNvJitLink()) {
    GTEST_SKIP() << "this build does not link nvJitLink";
  }
  if (GetParam() == CubinTool::kPtxas && !PtxasPath()) GTEST_SKIP() << "no ptxas found";
  auto ptx = testing::CompileHloForNvptx(testing::ReadSourceFile("configs/examples/gelu.hlo"),
                                         NvptxStage::kPtx);
  ASSERT_TRUE(ptx.has_value()) << ptx.error().message;
  auto cubin = CompilePtxToCubin(ptx->compiled.ptx, 90, ptx->compiled.entry, GetParam());
  ASSERT_TRUE(cubin.has_value()) << cubin.error().message;
  EXPECT_EQ(cubin->bytes.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_GT(cubin->usage.registers, 0);
  EXPECT_EQ(cubin->usage.spill_bytes(), 0);
  EXPECT_FALSE(cubin->compiler.empty());
}

INSTANTIATE_TEST_SUITE_P(Tools, CubinToolTest,
                         ::testing::Values(CubinTool::kNvJitLink, CubinTool::kPtxas),
                         [](const ::testing::TestParamInfo<CubinTool>& info) {
                           return info.param == CubinTool::kNvJitLink ? "NvJitLink" : "Ptxas";
                         });

TEST(CubinTest, InvalidPtxIsAnErrorFromBothTools) {
  TS_SKIP_WITHOUT_CUBINS();
  auto cubin = CompilePtxToCubin(".version 7.8\n.target sm_90\nnot ptx at all\n", 90, "k");
  ASSERT_FALSE(cubin.has_value());
  EXPECT_NE(cubin.error().message.find("ptxas"), std::string::npos) << cubin.error().message;
}

}  // namespace
}  // namespace tilesmith::codegen
