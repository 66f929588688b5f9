// Static counts of executed code: instructions weighted by their loops' constant trip
// counts, on hand-built LLVM functions whose counts are known exactly, and on real host
// kernels, where more work per block must count more.
#include "compiler/codegen/code_counts.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "compiler/codegen/host_backend.h"
#include "compiler/hlo/parser.h"
#include "tests/codegen/host_check.h"

namespace tilesmith::codegen {
namespace {

// for (i = 0; i < trips; ++i) { sum += udiv(i, 7) } in a loop whose bound is `bound`:
// a constant trip count when `bound` is a constant, else a function argument.
struct LoopFunction {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  llvm::Function* function = nullptr;
};

std::unique_ptr<LoopFunction> MakeLoop(int64_t trips, bool constant_bound) {
  auto made = std::make_unique<LoopFunction>();
  llvm::LLVMContext& context = made->context;
  made->module = std::make_unique<llvm::Module>("counts", context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  auto* type = llvm::FunctionType::get(i64, {i64}, false);
  made->function =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, "loop", *made->module);
  auto* entry = llvm::BasicBlock::Create(context, "entry", made->function);
  auto* body = llvm::BasicBlock::Create(context, "body", made->function);
  auto* exit = llvm::BasicBlock::Create(context, "exit", made->function);
  llvm::IRBuilder<> b(entry);
  llvm::Value* bound =
      constant_bound ? static_cast<llvm::Value*>(b.getInt64(trips)) : made->function->getArg(0);
  b.CreateBr(body);
  b.SetInsertPoint(body);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  llvm::PHINode* sum = b.CreatePHI(i64, 2);
  llvm::Value* quotient = b.CreateUDiv(i, b.getInt64(7));
  llvm::Value* next_sum = b.CreateAdd(sum, quotient);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
  llvm::Value* more = b.CreateICmpULT(next, bound);
  b.CreateCondBr(more, body, exit);
  i->addIncoming(b.getInt64(0), entry);
  i->addIncoming(next, body);
  sum->addIncoming(b.getInt64(0), entry);
  sum->addIncoming(next_sum, body);
  b.SetInsertPoint(exit);
  b.CreateRet(next_sum);
  return made;
}

TEST(CodeCountsTest, LoopBodyCountsOncePerTrip) {
  auto loop = MakeLoop(10, /*constant_bound=*/true);
  CodeCounts counts = CountExecutedCode(*loop->function);
  // entry: br (1); body: udiv, add, add, icmp, br (5) x 10; exit: ret (1). Phis do not count.
  EXPECT_DOUBLE_EQ(counts.instructions, 1 + 5 * 10 + 1);
  EXPECT_DOUBLE_EQ(counts.divisions, 10);
  EXPECT_DOUBLE_EQ(counts.branches, 10);
  EXPECT_DOUBLE_EQ(counts.memory, 0);
  EXPECT_EQ(counts.unbounded_loops, 0);

  auto longer = MakeLoop(40, /*constant_bound=*/true);
  EXPECT_DOUBLE_EQ(CountExecutedCode(*longer->function).divisions, 40);
}

TEST(CodeCountsTest, LoopWithoutAConstantBoundCountsOnce) {
  auto loop = MakeLoop(0, /*constant_bound=*/false);
  CodeCounts counts = CountExecutedCode(*loop->function);
  EXPECT_DOUBLE_EQ(counts.instructions, 1 + 5 + 1);
  EXPECT_DOUBLE_EQ(counts.divisions, 1);
  EXPECT_EQ(counts.unbounded_loops, 1);
}

Expected<CodeCounts> CountKernel(const std::string& text, const std::string& config) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModule(text, "k"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  nlohmann::json parsed = nlohmann::json::parse(config);
  TS_ASSIGN_OR_RETURN(emitters::KernelIR kernel, emitters::EmitKernel(analysis, parsed, device));
  return CountHostCode(kernel);
}

// A block of the loop emitter with 4 elements per thread executes more code than one with
// 1; a block reads and writes memory; the kernel's loop over its blocks counts once.
TEST(CodeCountsTest, HostKernelsCountPerBlock) {
  const std::string text = R"(
ENTRY e {
  p0 = f32[4096,64] parameter(0)
  ROOT t = f32[4096,64] tanh(p0)
})";
  auto one = CountKernel(text, R"({"threads_per_block": 128, "chunks": 1, "vector": 1})");
  auto four = CountKernel(text, R"({"threads_per_block": 128, "chunks": 4, "vector": 1})");
  ASSERT_TRUE(one.has_value()) << one.error().message;
  ASSERT_TRUE(four.has_value()) << four.error().message;
  EXPECT_GT(one->instructions, 128);  // at least one instruction per thread
  EXPECT_GT(one->memory, 0);
  EXPECT_GT(four->instructions, 2 * one->instructions);
  EXPECT_LE(one->unbounded_loops, 1);
}

}  // namespace
}  // namespace tilesmith::codegen
