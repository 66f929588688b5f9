// Static counts of executed code: instructions weighted by their loops' constant trip
// counts and their branches' probabilities, on hand-built LLVM functions whose counts are known
// exactly, and on real host kernels, where more work per block must count more.
#include "compiler/codegen/code_counts.h"

#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "compiler/codegen/host_backend.h"
#include "compiler/codegen/llvm_setup.h"
#include "compiler/codegen/loop_builder.h"
#include "compiler/hlo/parser.h"
#include "tests/codegen/host_check.h"

namespace tilesmith::codegen {
namespace {

// A hand-built `i64 name(i64)` in its own module and context, for its body to be filled.
struct HandBuiltFunction {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  llvm::Function* function = nullptr;
};

std::unique_ptr<HandBuiltFunction> MakeFunction(const char* name) {
  auto made = std::make_unique<HandBuiltFunction>();
  made->module = std::make_unique<llvm::Module>("counts", made->context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(made->context);
  made->function = llvm::Function::Create(llvm::FunctionType::get(i64, {i64}, false),
                                          llvm::Function::ExternalLinkage, name, *made->module);
  return made;
}

// for (i = 0; i < trips; ++i) { sum += udiv(i, 7) } in a loop whose bound is `bound`:
// a constant trip count when `bound` is a constant, else a function argument.
std::unique_ptr<HandBuiltFunction> MakeLoop(int64_t trips, bool constant_bound) {
  auto made = MakeFunction("loop");
  llvm::LLVMContext& context = made->context;
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
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
  EXPECT_DOUBLE_EQ(counts.constant_divisions, 10);  // udiv(i, 7)
  EXPECT_DOUBLE_EQ(counts.gather_lanes, 0);
  EXPECT_DOUBLE_EQ(counts.half_lanes, 0);
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

// i64 f(i64 x): a division by x, a remainder by 5 and a float division; a gather of 8 floats; an
// f16 add of 4 lanes and a scalar bf16 compare (beside an f16 load and store, which only move 16
// bits).
TEST(CodeCountsTest, ConstantDivisionsGatherLanesAndHalfLanes) {
  auto made = MakeFunction("mixed");
  llvm::LLVMContext& context = made->context;
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", made->function));
  llvm::Value* x = made->function->getArg(0);
  llvm::Value* by_variable = b.CreateUDiv(b.getInt64(1000), x);
  llvm::Value* by_constant = b.CreateURem(x, b.getInt64(5));
  llvm::Value* real = b.CreateSIToFP(x, b.getFloatTy());
  b.CreateFDiv(real, b.CreateFAdd(real, llvm::ConstantFP::get(b.getFloatTy(), 1.0)));
  llvm::Type* ptr = llvm::PointerType::get(context, 0);
  llvm::Value* base = b.CreateIntToPtr(x, ptr);
  llvm::Value* pointers = b.CreateVectorSplat(8, base);
  llvm::Value* gathered =
      b.CreateMaskedGather(llvm::FixedVectorType::get(b.getFloatTy(), 8), pointers, llvm::Align(4));
  llvm::Type* halves = llvm::FixedVectorType::get(b.getHalfTy(), 4);
  llvm::Value* loaded = b.CreateLoad(halves, base);
  llvm::Value* added = b.CreateFAdd(loaded, loaded);
  b.CreateStore(added, base);
  llvm::Value* brain = b.CreateBitCast(b.CreateTrunc(x, b.getInt16Ty()), b.getBFloatTy());
  llvm::Value* compared = b.CreateFCmpOLT(brain, brain);
  llvm::Value* sum = b.CreateAdd(by_variable, by_constant);
  sum = b.CreateAdd(sum, b.CreateZExt(compared, b.getInt64Ty()));
  sum = b.CreateAdd(sum, b.CreateZExt(b.CreateBitCast(b.CreateExtractElement(gathered, uint64_t{0}),
                                                      b.getInt32Ty()),
                                      b.getInt64Ty()));
  b.CreateRet(sum);
  CodeCounts counts = CountExecutedCode(*made->function);
  EXPECT_DOUBLE_EQ(counts.divisions, 3);
  EXPECT_DOUBLE_EQ(counts.constant_divisions, 1);
  EXPECT_DOUBLE_EQ(counts.float_divisions, 1);
  EXPECT_DOUBLE_EQ(counts.gather_lanes, 8);
  EXPECT_DOUBLE_EQ(counts.half_lanes, 4 + 1);  // the fadd's lanes and the compare
}

// entry: if (arg < 100) { 10 adds } else { 30 adds }; ret. Built with EmitIfElse, so the
// weights are the ones the emitters attach.
std::unique_ptr<HandBuiltFunction> MakeIfElse(std::optional<double> holds_share) {
  auto made = MakeFunction("branch");
  llvm::LLVMContext& context = made->context;
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", made->function));
  llvm::Value* x = made->function->getArg(0);
  auto adds = [&](int n) -> Expected<llvm::Value*> {
    llvm::Value* sum = x;
    for (int i = 0; i < n; ++i) sum = b.CreateAdd(sum, b.getInt64(i + 1));
    return sum;
  };
  auto joined = EmitIfElse(
      b, b.CreateICmpULT(x, b.getInt64(100)), [&] { return adds(10); }, [&] { return adds(30); },
      holds_share);
  EXPECT_TRUE(joined.has_value());
  b.CreateRet(*joined);
  return made;
}

// Of an if/else each arm counts in the share of runs the emitter says its condition holds
// in; without one, in the share LLVM's heuristics give it.
TEST(CodeCountsTest, ArmsOfABranchCountByTheirProbability) {
  // icmp + br (2), ret (1); each arm: its adds and a br; the join's phi does not count.
  auto always = MakeIfElse(1.0);
  CodeCounts hinted = CountExecutedCode(*always->function);
  EXPECT_NEAR(hinted.instructions, 2 + 1 + 11, 0.01);
  EXPECT_DOUBLE_EQ(hinted.branches, 1);

  // Block frequencies are fixed-point: within a percent.
  auto quarter = MakeIfElse(0.25);
  EXPECT_NEAR(CountExecutedCode(*quarter->function).instructions, 2 + 1 + 0.25 * 11 + 0.75 * 31,
              0.3);

  auto plain = MakeIfElse(std::nullopt);
  CodeCounts unhinted = CountExecutedCode(*plain->function);
  EXPECT_NEAR(unhinted.instructions, 2 + 1 + 0.5 * 11 + 0.5 * 31, 0.1);
}

std::unique_ptr<llvm::TargetMachine> HostMachine() {
  InitializeLlvm();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return nullptr;
  auto machine = builder->createTargetMachine();
  return machine ? std::move(*machine) : nullptr;
}

// The machine code of a loop counts once per trip, as its IR does: the body's machine
// instructions (the udiv by 7 a multiply-high and shifts) scale with the trips.
TEST(CodeCountsTest, MachineInstructionsCountOncePerTrip) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  auto ten = MakeLoop(10, /*constant_bound=*/true);
  auto forty = MakeLoop(40, /*constant_bound=*/true);
  CodeCounts counted_ten = CountExecutedMachineCode(*ten->function, *machine);
  CodeCounts counted_forty = CountExecutedMachineCode(*forty->function, *machine);
  EXPECT_DOUBLE_EQ(counted_ten.instructions, 1 + 5 * 10 + 1);  // the IR's count as before
  EXPECT_GE(counted_ten.machine_instructions, 5 * 10);
  double per_trip = (counted_forty.machine_instructions - counted_ten.machine_instructions) / 30;
  EXPECT_GE(per_trip, 4);
  EXPECT_NEAR(counted_ten.machine_instructions, 10 * per_trip, 10);
}

// x86 has no f16 arithmetic: a minimum and a compare of 8 f16 lanes, one IR instruction
// each, become lane-by-lane conversions, compares and shuffles, which the machine count
// sees and the IR's does not.
TEST(CodeCountsTest, MachineInstructionsSeePromotedHalfLanes) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  auto made = MakeFunction("halves");
  llvm::LLVMContext& context = made->context;
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", made->function));
  llvm::Value* base = b.CreateIntToPtr(made->function->getArg(0), b.getPtrTy());
  llvm::Type* halves = llvm::FixedVectorType::get(b.getHalfTy(), 8);
  llvm::Value* loaded = b.CreateLoad(halves, base);
  llvm::Value* least = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, loaded, loaded);
  llvm::Value* picked = b.CreateSelect(b.CreateFCmpOLT(least, loaded), loaded, least);
  b.CreateStore(picked, base);
  b.CreateRet(made->function->getArg(0));
  CodeCounts counts = CountExecutedMachineCode(*made->function, *machine);
  EXPECT_DOUBLE_EQ(counts.instructions, 7);  // with the inttoptr, the select and the ret
  EXPECT_DOUBLE_EQ(counts.half_lanes, 16);   // the minimum's lanes and the compare's
  EXPECT_GT(counts.machine_instructions, 5 * counts.instructions);
}

// A lane taken out of a vector and put into another (`vpextrw`, `vpinsrw` on x86) is a lane
// move; a scalar loop has none.
TEST(CodeCountsTest, LaneMovesCountExtractsAndInserts) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  auto made = MakeFunction("lanes");
  llvm::LLVMContext& context = made->context;
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", made->function));
  llvm::Value* base = b.CreateIntToPtr(made->function->getArg(0), b.getPtrTy());
  llvm::Type* words = llvm::FixedVectorType::get(b.getInt16Ty(), 8);
  llvm::Value* loaded = b.CreateLoad(words, base, /*isVolatile=*/true);
  llvm::Value* lane = b.CreateExtractElement(loaded, made->function->getArg(0));
  llvm::Value* sum = b.CreateAdd(lane, b.CreateExtractElement(loaded, b.getInt64(3)));
  llvm::Value* placed = b.CreateInsertElement(loaded, sum, b.getInt64(5));
  b.CreateStore(placed, base, /*isVolatile=*/true);
  b.CreateRet(made->function->getArg(0));
  CodeCounts counts = CountExecutedMachineCode(*made->function, *machine);
  EXPECT_GE(counts.lane_moves, 2);
  EXPECT_LT(counts.lane_moves, counts.machine_instructions);
  auto loop = MakeLoop(10, /*constant_bound=*/true);
  CodeCounts scalar = CountExecutedMachineCode(*loop->function, *machine);
  EXPECT_GT(scalar.machine_instructions, 0);
  EXPECT_DOUBLE_EQ(scalar.lane_moves, 0);
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
  // The machine code of every thread's loop counts too, as the IR's does.
  EXPECT_GT(one->machine_instructions, one->instructions / 2);
  EXPECT_GT(four->machine_instructions, 2 * one->machine_instructions);
}

// A transpose tile of 64 x 64 over 20 rows runs its body for the 20 only, over 40 rows for
// the 40: the same code (bounds checked), but the first counts well under the second, not
// the same (every bounds check counted as taken).
TEST(CodeCountsTest, PointsOutsideTheShapeDoNotCount) {
  auto transpose = [](int64_t rows) {
    std::string shape = "f32[4," + std::to_string(rows) + ",64]";
    std::string result = "f32[4,64," + std::to_string(rows) + "]";
    return "ENTRY e {\n  p0 = " + shape + " parameter(0)\n  e0 = " + shape +
           " exponential(p0)\n  ROOT t = " + result + " transpose(e0), dimensions={0,2,1}\n}";
  };
  const std::string config =
      R"({"tile_in": 64, "tile_out": 64, "threads": 128, "rows_per_pass": 2, "vector": 1,
          "shared_padding": 1})";
  auto forty = CountKernel(transpose(40), config);
  auto twenty = CountKernel(transpose(20), config);
  ASSERT_TRUE(forty.has_value()) << forty.error().message;
  ASSERT_TRUE(twenty.has_value()) << twenty.error().message;
  EXPECT_LT(twenty->instructions, 0.8 * forty->instructions);
  EXPECT_GT(twenty->instructions, 0.4 * forty->instructions);
}

}  // namespace
}  // namespace tilesmith::codegen
