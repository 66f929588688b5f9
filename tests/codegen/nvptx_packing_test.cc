// The late NVPTX passes on hand-written IR: which roundings pair into packed conversions
// (and in which half each lands), which must stay scalar, and which 8- and 16-byte accesses
// become 32-bit lanes. The PTX they lead to is checked in nvptx_test.cc and the emitter data.
#include "compiler/codegen/nvptx_packing.h"

#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <array>
#include <memory>
#include <regex>
#include <string>

#include "compiler/codegen/llvm_setup.h"

namespace tilesmith::codegen {
namespace {

constexpr char kHeader[] = R"(
target triple = "nvptx64-nvidia-cuda"
declare i16 @llvm.nvvm.f2bf16.rn(float) #0
attributes #0 = { nounwind willreturn memory(none) }
)";

// Runs `pass` over every function of `body` (IR after kHeader) and returns the module text.
template <typename Pass>
std::string RunPass(Pass pass, const std::string& body) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(std::string(kHeader) + body, error, context);
  if (module == nullptr) {
    std::string message;
    llvm::raw_string_ostream stream(message);
    error.print("test", stream);
    ADD_FAILURE() << message;
    return "";
  }
  llvm::FunctionAnalysisManager analyses;
  for (llvm::Function& function : *module) {
    if (!function.isDeclaration()) pass.run(function, analyses);
  }
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  EXPECT_FALSE(llvm::verifyModule(*module, &problem_stream)) << problems;
  std::string text;
  llvm::raw_string_ostream stream(text);
  module->print(stream, nullptr);
  return text;
}

int Count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// Two lanes of x * x + 1, each product and sum rounded to bf16, lane 0's chain before lane
// 1's, as the loop body emits them.
constexpr char kTwoBf16Lanes[] = R"(
define void @lanes(float %x0, float %x1, ptr %out) {
  %m0 = fmul float %x0, %x0
  %r0 = call i16 @llvm.nvvm.f2bf16.rn(float %m0) #0
  %w0 = zext i16 %r0 to i32
  %s0 = shl i32 %w0, 16
  %f0 = bitcast i32 %s0 to float
  %a0 = fadd float %f0, 1.0
  %q0 = call i16 @llvm.nvvm.f2bf16.rn(float %a0) #0
  store i16 %q0, ptr %out, align 4
  %m1 = fmul float %x1, %x1
  %r1 = call i16 @llvm.nvvm.f2bf16.rn(float %m1) #0
  %w1 = zext i16 %r1 to i32
  %s1 = shl i32 %w1, 16
  %f1 = bitcast i32 %s1 to float
  %a1 = fadd float %f1, 1.0
  %q1 = call i16 @llvm.nvvm.f2bf16.rn(float %a1) #0
  %p1 = getelementptr i16, ptr %out, i64 1
  store i16 %q1, ptr %p1, align 2
  ret void
}
)";

TEST(NvptxPackingTest, LanesOfABf16ChainPairUpLaneZeroInTheLowHalf) {
  std::string ir = RunPass(PackHalfPairsPass(90), kTwoBf16Lanes);
  EXPECT_EQ(Count(ir, R"(call i16 @llvm.nvvm.f2bf16.rn)"), 0) << ir;
  EXPECT_EQ(Count(ir, R"(call i32 @llvm.nvvm.ff2bf16x2.rn)"), 2) << ir;
  // PTX puts the first source in the upper half: lane 1 first.
  EXPECT_EQ(Count(ir, R"(@llvm.nvvm.ff2bf16x2.rn\(float %m1, float %m0\))"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(@llvm.nvvm.ff2bf16x2.rn\(float %a1, float %a0\))"), 1) << ir;
  // Lane 0 takes the low 16 bits, lane 1 the high.
  EXPECT_EQ(Count(ir, R"(lshr i32 %\w+, 16)"), 2) << ir;
}

TEST(NvptxPackingTest, ARoundingOfAnotherRoundingStaysScalar) {
  std::string ir = RunPass(PackHalfPairsPass(90), R"(
define void @chain(float %x, ptr %out) {
  %r = call i16 @llvm.nvvm.f2bf16.rn(float %x) #0
  %w = zext i16 %r to i32
  %s = shl i32 %w, 16
  %f = bitcast i32 %s to float
  %m = fmul float %f, 3.0
  %q = call i16 @llvm.nvvm.f2bf16.rn(float %m) #0
  store i16 %q, ptr %out, align 2
  ret void
}
)");
  EXPECT_EQ(Count(ir, R"(call i16 @llvm.nvvm.f2bf16.rn)"), 2) << ir;
  EXPECT_EQ(Count(ir, R"(ff2bf16x2)"), 0) << ir;
}

// Lane 1 reads what lane 0 stored: its load may not move above the store.
TEST(NvptxPackingTest, AReadAfterAWriteIsNotMovedAboveIt) {
  std::string ir = RunPass(PackHalfPairsPass(90), R"(
define void @alias(float %x0, ptr %buffer) {
  %r0 = call i16 @llvm.nvvm.f2bf16.rn(float %x0) #0
  store i16 %r0, ptr %buffer, align 2
  %x1 = load float, ptr %buffer, align 4
  %r1 = call i16 @llvm.nvvm.f2bf16.rn(float %x1) #0
  %p1 = getelementptr i16, ptr %buffer, i64 4
  store i16 %r1, ptr %p1, align 2
  ret void
}
)");
  EXPECT_EQ(Count(ir, R"(call i16 @llvm.nvvm.f2bf16.rn)"), 2) << ir;
  EXPECT_EQ(Count(ir, R"(ff2bf16x2)"), 0) << ir;
}

TEST(NvptxPackingTest, LoadsWithoutAWriteBetweenMoveUp) {
  std::string ir = RunPass(PackHalfPairsPass(90), R"(
define void @loads(ptr %in, ptr %out) {
  %x0 = load float, ptr %in, align 4
  %r0 = call i16 @llvm.nvvm.f2bf16.rn(float %x0) #0
  %p1 = getelementptr float, ptr %in, i64 1
  %x1 = load float, ptr %p1, align 4
  %r1 = call i16 @llvm.nvvm.f2bf16.rn(float %x1) #0
  store i16 %r0, ptr %out, align 4
  %o1 = getelementptr i16, ptr %out, i64 1
  store i16 %r1, ptr %o1, align 2
  ret void
}
)");
  EXPECT_EQ(Count(ir, R"(@llvm.nvvm.ff2bf16x2.rn\(float %x1, float %x0\))"), 1) << ir;
}

TEST(NvptxPackingTest, F16RoundingsPairIntoOneConversion) {
  std::string ir = RunPass(PackHalfPairsPass(90), R"(
define void @f16(float %x0, float %x1, ptr %out) {
  %h0 = fptrunc float %x0 to half
  store half %h0, ptr %out, align 4
  %h1 = fptrunc float %x1 to half
  %p1 = getelementptr half, ptr %out, i64 1
  store half %h1, ptr %p1, align 2
  %d = fptrunc double 1.0 to float
  ret void
}
)");
  EXPECT_EQ(Count(ir, R"(fptrunc float)"), 0) << ir;
  EXPECT_EQ(Count(ir, R"(@llvm.nvvm.ff2f16x2.rn\(float %x1, float %x0\))"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(extractelement <2 x half> %\w+, i64 0)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(extractelement <2 x half> %\w+, i64 1)"), 1) << ir;
}

// Two lanes of (x * y) + y in f16: the products pair, and the sums take the products'
// vector as it is.
TEST(NvptxPackingTest, F16ArithmeticPairsLaneByLane) {
  std::string ir = RunPass(PackHalfPairsPass(90), R"(
define void @f16(half %x0, half %y0, half %x1, half %y1, ptr %out) {
  %m0 = fmul half %x0, %y0
  %a0 = fadd half %m0, %y0
  store half %a0, ptr %out, align 4
  %m1 = fmul half %x1, %y1
  %a1 = fadd half %m1, %y1
  %p1 = getelementptr half, ptr %out, i64 1
  store half %a1, ptr %p1, align 2
  ret void
}
)");
  EXPECT_EQ(Count(ir, R"(fmul half)"), 0) << ir;
  EXPECT_EQ(Count(ir, R"(fadd half)"), 0) << ir;
  EXPECT_EQ(Count(ir, R"((%\w+) = fmul <2 x half> %\w+, %\w+)"), 1) << ir;
  std::smatch product;
  ASSERT_TRUE(std::regex_search(ir, product, std::regex(R"((%\w+) = fmul <2 x half>)"))) << ir;
  EXPECT_EQ(Count(ir, "fadd <2 x half> " + product[1].str() + ","), 1) << ir;
  // Lane 0 in element 0: x0 goes in first.
  EXPECT_EQ(Count(ir, R"(insertelement <2 x half> poison, half %x0, i64 0)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(insertelement <2 x half> %\w+, half %x1, i64 1)"), 1) << ir;
}

// Before sm_80 there are no packed conversions; f16x2 arithmetic is there from sm_53.
TEST(NvptxPackingTest, PackedFormsFollowTheTarget) {
  constexpr char kBoth[] = R"(
define void @both(float %x0, float %x1, half %h0, half %h1, ptr %out) {
  %r0 = call i16 @llvm.nvvm.f2bf16.rn(float %x0) #0
  %r1 = call i16 @llvm.nvvm.f2bf16.rn(float %x1) #0
  store i16 %r0, ptr %out, align 4
  %o1 = getelementptr i16, ptr %out, i64 1
  store i16 %r1, ptr %o1, align 2
  %m0 = fmul half %h0, %h0
  %m1 = fmul half %h1, %h1
  %o2 = getelementptr half, ptr %out, i64 2
  store half %m0, ptr %o2, align 4
  %o3 = getelementptr half, ptr %out, i64 3
  store half %m1, ptr %o3, align 2
  ret void
}
)";
  std::string turing = RunPass(PackHalfPairsPass(75), kBoth);
  EXPECT_EQ(Count(turing, R"(call i16 @llvm.nvvm.f2bf16.rn)"), 2) << turing;
  EXPECT_EQ(Count(turing, R"(fmul <2 x half>)"), 1) << turing;
  std::string maxwell = RunPass(PackHalfPairsPass(52), kBoth);
  EXPECT_EQ(Count(maxwell, R"(fmul half)"), 2) << maxwell;
  EXPECT_EQ(Count(RunPass(PackHalfPairsPass(80), kBoth), R"(call i32 @llvm.nvvm.ff2bf16x2)"), 1);
}

TEST(NvptxPackingTest, SixteenByteAccessesOfHalvesBecomeFourWords) {
  std::string ir = RunPass(WidenNarrowVectorAccessesPass(), R"(
define void @copy(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %w) {
  %v = load <8 x i16>, ptr addrspace(1) %in, align 16, !invariant.load !0
  %e0 = extractelement <8 x i16> %v, i32 0
  %e5 = extractelement <8 x i16> %v, i32 5
  %s = add i16 %e0, %e5
  %lo = trunc i32 %w to i16
  %h = lshr i32 %w, 16
  %hi = trunc i32 %h to i16
  %u0 = insertelement <8 x i16> poison, i16 %s, i32 0
  %u1 = insertelement <8 x i16> %u0, i16 %e5, i32 1
  %u2 = insertelement <8 x i16> %u1, i16 %lo, i32 2
  %u3 = insertelement <8 x i16> %u2, i16 %hi, i32 3
  %u4 = insertelement <8 x i16> %u3, i16 0, i32 4
  %u5 = insertelement <8 x i16> %u4, i16 0, i32 5
  %u6 = insertelement <8 x i16> %u5, i16 0, i32 6
  %u7 = insertelement <8 x i16> %u6, i16 0, i32 7
  store <8 x i16> %u7, ptr addrspace(1) %out, align 16
  ret void
}
!0 = !{}
)");
  EXPECT_EQ(Count(ir, R"(load <4 x i32>, ptr addrspace\(1\) %in, align 16, !invariant.load)"), 1)
      << ir;
  EXPECT_EQ(Count(ir, R"(load <8 x i16>)"), 0) << ir;
  EXPECT_EQ(Count(ir, R"(store <4 x i32> %\w+, ptr addrspace\(1\) %out, align 16)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(store <8 x i16>)"), 0) << ir;
  // Lane 5 is the high half of word 2.
  EXPECT_EQ(Count(ir, R"(extractelement <4 x i32> %v\d*, i64 2)"), 1) << ir;
  // The two lanes taken out of %w go back as %w itself.
  EXPECT_EQ(Count(ir, R"(insertelement <4 x i32> %\w+, i32 %w, i64 1)"), 1) << ir;
}

TEST(NvptxPackingTest, SixteenBytesOfBytesBecomeFourWords) {
  std::string ir = RunPass(WidenNarrowVectorAccessesPass(), R"(
define i8 @bytes(ptr addrspace(1) %in) {
  %v = load <16 x i8>, ptr addrspace(1) %in, align 16
  %e = extractelement <16 x i8> %v, i32 7
  ret i8 %e
}
)");
  EXPECT_EQ(Count(ir, R"(load <4 x i32>)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(extractelement <4 x i32> %v\d*, i64 1)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(lshr i32 %\w+, 24)"), 1) << ir;
}

// Eight bytes: two words, and the packed conversion's word stored whole.
TEST(NvptxPackingTest, EightByteAccessesOfHalvesBecomeTwoWords) {
  std::string ir = RunPass(WidenNarrowVectorAccessesPass(), R"(
define void @pairs(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %w) {
  %v = load <4 x i16>, ptr addrspace(1) %in, align 8
  %e3 = extractelement <4 x i16> %v, i32 3
  %lo = trunc i32 %w to i16
  %h = lshr i32 %w, 16
  %hi = trunc i32 %h to i16
  %u0 = insertelement <4 x i16> poison, i16 %lo, i32 0
  %u1 = insertelement <4 x i16> %u0, i16 %hi, i32 1
  %u2 = insertelement <4 x i16> %u1, i16 %e3, i32 2
  %u3 = insertelement <4 x i16> %u2, i16 %e3, i32 3
  store <4 x i16> %u3, ptr addrspace(1) %out, align 8
  ret void
}
)");
  EXPECT_EQ(Count(ir, R"(load <2 x i32>, ptr addrspace\(1\) %in, align 8)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(store <2 x i32> %\w+, ptr addrspace\(1\) %out, align 8)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(insertelement <2 x i32> poison, i32 %w, i64 0)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(<4 x i16>)"), 0) << ir;
}

// A 16-lane s8 loop body: InstCombine takes the <16 x i8> load apart into <4 x i8> pieces.
// Shuffles of whole words become the words themselves; any other shuffle is built lane by lane.
constexpr char kShuffledBytes[] = R"(
define void @bytes(ptr %in, ptr %out) {
  %v = load <16 x i8>, ptr %in, align 16
  %a = shufflevector <16 x i8> %v, <16 x i8> poison, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %b = shufflevector <16 x i8> %v, <16 x i8> poison,
                     <8 x i32> <i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %c = shufflevector <16 x i8> %v, <16 x i8> poison, <4 x i32> <i32 5, i32 3, i32 14, i32 7>
  %e = extractelement <16 x i8> %v, i32 6
  store <4 x i8> %a, ptr %out, align 16
  %pb = getelementptr i8, ptr %out, i64 4
  store <8 x i8> %b, ptr %pb, align 4
  %pc = getelementptr i8, ptr %out, i64 12
  store <4 x i8> %c, ptr %pc, align 4
  %pe = getelementptr i8, ptr %out, i64 16
  store i8 %e, ptr %pe, align 1
  ret void
}
)";

TEST(NvptxPackingTest, ShufflesOfSixteenBytesReadOneLoadOfFourWords) {
  std::string ir = RunPass(WidenNarrowVectorAccessesPass(), kShuffledBytes);
  EXPECT_EQ(Count(ir, R"(load <4 x i32>, ptr %in, align 16)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(load <16 x i8>)"), 0) << ir;
  EXPECT_EQ(Count(ir, R"(shufflevector <16 x i8>)"), 0) << ir;
  // Lanes 0-3 are word 0; lanes 8-15 are words 2 and 3.
  EXPECT_EQ(Count(ir, R"(bitcast i32 %\w+ to <4 x i8>)"), 1) << ir;
  EXPECT_EQ(
      Count(ir, R"(shufflevector <4 x i32> %v\d*, <4 x i32> poison, <2 x i32> <i32 2, i32 3>)"), 1)
      << ir;
}

// What the rewritten IR computes, run on this machine: every lane where it was.
TEST(NvptxPackingTest, ShufflesOfSixteenBytesKeepEveryLane) {
  InitializeLlvm();
  std::string ir = RunPass(WidenNarrowVectorAccessesPass(), kShuffledBytes);
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, error, *context);
  ASSERT_NE(module, nullptr) << ir;
  module->setTargetTriple(llvm::sys::getProcessTriple());
  auto jit = llvm::orc::LLJITBuilder().create();
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  ASSERT_FALSE(static_cast<bool>(
      (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))));
  auto symbol = (*jit)->lookup("bytes");
  ASSERT_TRUE(static_cast<bool>(symbol)) << llvm::toString(symbol.takeError());
  auto* bytes = symbol->toPtr<void (*)(const uint8_t*, uint8_t*)>();
  alignas(16) std::array<uint8_t, 16> in;
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(0x80 + 17 * i);
  alignas(16) std::array<uint8_t, 32> out{};
  bytes(in.data(), out.data());
  std::array<int, 17> from = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 5, 3, 14, 7, 6};
  for (size_t k = 0; k < from.size(); ++k) EXPECT_EQ(out[k], in[from[k]]) << "byte " << k;
}

TEST(NvptxPackingTest, UnalignedOrOtherwiseUsedVectorsStayAsTheyAre) {
  std::string ir = RunPass(WidenNarrowVectorAccessesPass(), R"(
define void @other(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %i) {
  %a = load <8 x i16>, ptr addrspace(1) %in, align 8
  %e = extractelement <8 x i16> %a, i32 0
  %b = load <8 x i16>, ptr addrspace(1) %out, align 16
  %f = extractelement <8 x i16> %b, i32 %i
  %s = add i16 %e, %f
  store i16 %s, ptr addrspace(1) %out, align 16
  store <8 x i16> %a, ptr addrspace(1) %in, align 8
  ret void
}
)");
  EXPECT_EQ(Count(ir, R"(load <8 x i16>)"), 2) << ir;
  EXPECT_EQ(Count(ir, R"(store <8 x i16>)"), 1) << ir;
  EXPECT_EQ(Count(ir, R"(<4 x i32>)"), 0) << ir;
}

}  // namespace
}  // namespace tilesmith::codegen
