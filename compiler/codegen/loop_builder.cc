#include "compiler/codegen/loop_builder.h"

#include <llvm/IR/MDBuilder.h>

#include <algorithm>

namespace tilesmith::codegen {

namespace {

// Branch weights out of this many, plus one each: no arm is weighted as never taken.
constexpr double kWeightScale = 65536;

void CreateWeightedBranch(llvm::IRBuilderBase& b, llvm::Value* condition, llvm::BasicBlock* then,
                          llvm::BasicBlock* otherwise, std::optional<double> holds_share) {
  llvm::BranchInst* branch = b.CreateCondBr(condition, then, otherwise);
  if (!holds_share) return;
  double share = std::clamp(*holds_share, 0.0, 1.0);
  auto weight = [](double part) { return static_cast<uint32_t>(1 + part * kWeightScale); };
  branch->setMetadata(
      llvm::LLVMContext::MD_prof,
      llvm::MDBuilder(b.getContext()).createBranchWeights(weight(share), weight(1 - share)));
}

}  // namespace

Expected<std::vector<llvm::Value*>> EmitCountedLoop(
    llvm::IRBuilderBase& b, llvm::Value* begin, llvm::Value* end, std::vector<llvm::Value*> carried,
    const std::function<Expected<std::vector<llvm::Value*>>(llvm::Value*,
                                                            std::vector<llvm::Value*>)>& body,
    const char* name) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  llvm::BasicBlock* header =
      llvm::BasicBlock::Create(context, std::string(name) + ".header", function);
  llvm::BasicBlock* body_block =
      llvm::BasicBlock::Create(context, std::string(name) + ".body", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, std::string(name) + ".exit", function);
  b.CreateBr(header);

  b.SetInsertPoint(header);
  llvm::PHINode* induction = b.CreatePHI(begin->getType(), 2, std::string(name) + ".i");
  induction->addIncoming(begin, preheader);
  std::vector<llvm::PHINode*> phis;
  for (llvm::Value* value : carried) {
    llvm::PHINode* phi = b.CreatePHI(value->getType(), 2);
    phi->addIncoming(value, preheader);
    phis.push_back(phi);
  }
  b.CreateCondBr(b.CreateICmpSLT(induction, end), body_block, exit);

  b.SetInsertPoint(body_block);
  std::vector<llvm::Value*> current(phis.begin(), phis.end());
  TS_ASSIGN_OR_RETURN(std::vector<llvm::Value*> next, body(induction, current));
  if (next.size() != phis.size()) {
    return MakeError(ErrorCode::kInternal, "loop body returned the wrong number of values");
  }
  llvm::Value* incremented = b.CreateAdd(induction, llvm::ConstantInt::get(induction->getType(), 1),
                                         "", /*HasNUW=*/true, /*HasNSW=*/true);
  llvm::BasicBlock* latch = b.GetInsertBlock();
  induction->addIncoming(incremented, latch);
  for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(next[i], latch);
  b.CreateBr(header);

  b.SetInsertPoint(exit);
  return current;  // the header phis: their values when the loop exits
}

Status EmitIf(llvm::IRBuilderBase& b, llvm::Value* condition, const std::function<Status()>& then,
              std::optional<double> holds_share) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(b.getContext(), "if.then", function);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(b.getContext(), "if.end", function);
  CreateWeightedBranch(b, condition, then_block, after, holds_share);
  b.SetInsertPoint(then_block);
  TS_RETURN_IF_ERROR(then());
  b.CreateBr(after);
  b.SetInsertPoint(after);
  return OkStatus();
}

Expected<llvm::Value*> EmitIfElse(llvm::IRBuilderBase& b, llvm::Value* condition,
                                  const std::function<Expected<llvm::Value*>()>& then,
                                  const std::function<Expected<llvm::Value*>()>& otherwise,
                                  std::optional<double> holds_share) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(b.getContext(), "if.then", function);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(b.getContext(), "if.else", function);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(b.getContext(), "if.end", function);
  CreateWeightedBranch(b, condition, then_block, else_block, holds_share);
  b.SetInsertPoint(then_block);
  TS_ASSIGN_OR_RETURN(llvm::Value * then_value, then());
  llvm::BasicBlock* then_end = b.GetInsertBlock();
  b.CreateBr(after);
  b.SetInsertPoint(else_block);
  TS_ASSIGN_OR_RETURN(llvm::Value * else_value, otherwise());
  llvm::BasicBlock* else_end = b.GetInsertBlock();
  b.CreateBr(after);
  b.SetInsertPoint(after);
  llvm::PHINode* phi = b.CreatePHI(then_value->getType(), 2);
  phi->addIncoming(then_value, then_end);
  phi->addIncoming(else_value, else_end);
  return phi;
}

}  // namespace tilesmith::codegen
