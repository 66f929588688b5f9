#include "compiler/codegen/nvptx_packing.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Vectorize/LoadStoreVectorizer.h>

#include <optional>
#include <unordered_set>
#include <vector>

namespace tilesmith::codegen {
namespace {

enum class Rounding { kNone, kBf16, kF16 };

Rounding RoundingOf(const llvm::Instruction& instruction) {
  if (const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) {
    return call->getIntrinsicID() == llvm::Intrinsic::nvvm_f2bf16_rn ? Rounding::kBf16
                                                                     : Rounding::kNone;
  }
  if (const auto* trunc = llvm::dyn_cast<llvm::FPTruncInst>(&instruction)) {
    if (trunc->getType()->isHalfTy() && trunc->getSrcTy()->isFloatTy()) return Rounding::kF16;
  }
  return Rounding::kNone;
}

// How many later roundings are tried as a rounding's partner, and how many instructions one
// pairing may move: bounds on the work for very long blocks.
constexpr size_t kLookahead = 32;
constexpr size_t kMaxMoved = 4096;

// The instructions after `first`, up to and including `second`, that `second` depends on, in
// block order; nothing when `second` depends on `first` or one of them may not move above
// `first` (a write, a call that may not return, a read across a write or a possible trap).
std::optional<std::vector<llvm::Instruction*>> DependenciesAfter(llvm::Instruction* first,
                                                                 llvm::Instruction* second) {
  std::unordered_set<llvm::Instruction*> needed{second};
  std::vector<llvm::Instruction*> work{second};
  while (!work.empty()) {
    llvm::Instruction* instruction = work.back();
    work.pop_back();
    for (llvm::Value* operand : instruction->operands()) {
      auto* definition = llvm::dyn_cast<llvm::Instruction>(operand);
      if (definition == nullptr || definition->getParent() != first->getParent()) continue;
      if (definition == first) return std::nullopt;
      if (definition->comesBefore(first) || !needed.insert(definition).second) continue;
      if (needed.size() > kMaxMoved) return std::nullopt;
      work.push_back(definition);
    }
  }
  std::vector<llvm::Instruction*> moved;
  bool reads = false;
  bool blocks_reads = false;
  for (auto it = std::next(first->getIterator());; ++it) {
    llvm::Instruction* instruction = &*it;
    if (needed.count(instruction) != 0) {
      if (llvm::isa<llvm::PHINode>(instruction) || instruction->isEHPad() ||
          instruction->mayHaveSideEffects()) {
        return std::nullopt;
      }
      reads |= instruction->mayReadFromMemory();
      moved.push_back(instruction);
    } else {
      blocks_reads |= instruction->mayWriteToMemory() ||
                      !llvm::isGuaranteedToTransferExecutionToSuccessor(instruction);
    }
    if (instruction == second) break;
  }
  if (reads && blocks_reads) return std::nullopt;
  return moved;
}

// Replaces the roundings `low` and `high` (low before high, high's operands available at low)
// by one packed conversion at `low`, `low`'s value in the lower half.
void Pack(llvm::Instruction* low, llvm::Instruction* high, Rounding kind) {
  llvm::IRBuilder<> b(low);
  // PTX puts the conversion of the first source in the upper half (cuda_bf16.hpp's
  // __floats2bfloat162_rn passes its arguments swapped for the same reason).
  llvm::Value* sources[] = {high->getOperand(0), low->getOperand(0)};
  llvm::CallInst* packed =
      b.CreateIntrinsic(kind == Rounding::kBf16 ? llvm::Intrinsic::nvvm_ff2bf16x2_rn
                                                : llvm::Intrinsic::nvvm_ff2f16x2_rn,
                        {}, sources);
  // Pure, as the scalar roundings; LLVM 16 declares the intrinsics without saying so.
  packed->setDoesNotThrow();
  packed->addFnAttr(llvm::Attribute::WillReturn);
  llvm::Value* low_value;
  llvm::Value* high_value;
  if (kind == Rounding::kBf16) {
    low_value = b.CreateTrunc(packed, b.getInt16Ty());
    high_value = b.CreateTrunc(b.CreateLShr(packed, 16), b.getInt16Ty());
  } else {
    // A <2 x half>: element 0 is the lower half.
    low_value = b.CreateExtractElement(packed, uint64_t{0});
    high_value = b.CreateExtractElement(packed, uint64_t{1});
  }
  low->replaceAllUsesWith(low_value);
  high->replaceAllUsesWith(high_value);
  low->eraseFromParent();
  high->eraseFromParent();
}

bool PackBlock(llvm::BasicBlock& block) {
  std::vector<llvm::Instruction*> roundings;
  for (llvm::Instruction& instruction : block) {
    if (RoundingOf(instruction) != Rounding::kNone) roundings.push_back(&instruction);
  }
  std::vector<bool> packed(roundings.size(), false);
  bool changed = false;
  for (size_t i = 0; i < roundings.size(); ++i) {
    if (packed[i]) continue;
    llvm::Instruction* low = roundings[i];
    Rounding kind = RoundingOf(*low);
    for (size_t j = i + 1; j < roundings.size() && j <= i + kLookahead; ++j) {
      llvm::Instruction* high = roundings[j];
      if (packed[j] || RoundingOf(*high) != kind || !low->comesBefore(high)) continue;
      std::optional<std::vector<llvm::Instruction*>> moved = DependenciesAfter(low, high);
      if (!moved) continue;
      for (llvm::Instruction* instruction : *moved) {
        if (instruction != high) instruction->moveBefore(low);
      }
      Pack(low, high, kind);
      packed[i] = packed[j] = true;
      changed = true;
      break;
    }
  }
  return changed;
}

// A 16-byte vector of 8- or 16-bit integers: the accesses LLVM 16 splits in two.
llvm::FixedVectorType* NarrowSixteenBytes(llvm::Type* type) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (vector == nullptr || !vector->getElementType()->isIntegerTy()) return nullptr;
  unsigned bits = vector->getElementType()->getIntegerBitWidth();
  if ((bits != 8 && bits != 16) || bits * vector->getNumElements() != 128) return nullptr;
  return vector;
}

llvm::FixedVectorType* WordsType(llvm::LLVMContext& context) {
  return llvm::FixedVectorType::get(llvm::Type::getInt32Ty(context), 4);
}

bool WidenLoad(llvm::LoadInst* load) {
  llvm::FixedVectorType* type = NarrowSixteenBytes(load->getType());
  if (type == nullptr || !load->isSimple() || load->getAlign().value() < 16) return false;
  std::vector<llvm::ExtractElementInst*> extracts;
  for (llvm::User* user : load->users()) {
    auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(user);
    if (extract == nullptr || !llvm::isa<llvm::ConstantInt>(extract->getIndexOperand())) {
      return false;
    }
    extracts.push_back(extract);
  }
  llvm::IRBuilder<> b(load);
  llvm::LoadInst* words = b.CreateAlignedLoad(
      WordsType(load->getContext()), load->getPointerOperand(), load->getAlign(), load->getName());
  words->copyMetadata(*load);
  unsigned bits = type->getElementType()->getIntegerBitWidth();
  unsigned per_word = 32 / bits;
  for (llvm::ExtractElementInst* extract : extracts) {
    uint64_t lane = llvm::cast<llvm::ConstantInt>(extract->getIndexOperand())->getZExtValue();
    b.SetInsertPoint(extract);
    llvm::Value* word = b.CreateExtractElement(words, lane / per_word);
    llvm::Value* shifted = b.CreateLShr(word, (lane % per_word) * bits);
    extract->replaceAllUsesWith(b.CreateTrunc(shifted, type->getElementType()));
    extract->eraseFromParent();
  }
  load->eraseFromParent();
  return true;
}

// The 32-bit word of lanes `lanes` (lowest first): the packed conversion they were taken out
// of where there is one, else the lanes shifted into place.
llvm::Value* Word(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& lanes) {
  using namespace llvm::PatternMatch;
  llvm::Value* packed = nullptr;
  if (lanes.size() == 2 && match(lanes[0], m_Trunc(m_Value(packed))) &&
      packed->getType()->isIntegerTy(32) &&
      match(lanes[1], m_Trunc(m_LShr(m_Specific(packed), m_SpecificInt(16))))) {
    return packed;
  }
  unsigned bits = lanes[0]->getType()->getIntegerBitWidth();
  llvm::Value* word = b.getInt32(0);
  for (size_t k = 0; k < lanes.size(); ++k) {
    llvm::Value* lane = b.CreateZExt(lanes[k], b.getInt32Ty());
    word = b.CreateOr(word, b.CreateShl(lane, static_cast<uint64_t>(k * bits)));
  }
  return word;
}

bool WidenStore(llvm::StoreInst* store) {
  llvm::Value* value = store->getValueOperand();
  llvm::FixedVectorType* type = NarrowSixteenBytes(value->getType());
  if (type == nullptr || !store->isSimple() || store->getAlign().value() < 16) return false;
  llvm::IRBuilder<> b(store);
  unsigned per_word = 32 / type->getElementType()->getIntegerBitWidth();
  llvm::Value* words = llvm::PoisonValue::get(WordsType(store->getContext()));
  for (unsigned w = 0; w < 4; ++w) {
    std::vector<llvm::Value*> lanes;
    for (unsigned k = 0; k < per_word; ++k) {
      unsigned lane = w * per_word + k;
      llvm::Value* scalar = llvm::findScalarElement(value, lane);
      lanes.push_back(scalar != nullptr ? scalar : b.CreateExtractElement(value, lane));
    }
    words = b.CreateInsertElement(words, Word(b, lanes), w);
  }
  llvm::StoreInst* wide =
      b.CreateAlignedStore(words, store->getPointerOperand(), store->getAlign());
  wide->copyMetadata(*store);
  store->eraseFromParent();
  return true;
}

}  // namespace

llvm::PreservedAnalyses PackHalfConversionsPass::run(llvm::Function& function,
                                                     llvm::FunctionAnalysisManager&) {
  bool changed = false;
  for (llvm::BasicBlock& block : function) changed |= PackBlock(block);
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

llvm::PreservedAnalyses WidenNarrowVectorAccessesPass::run(llvm::Function& function,
                                                           llvm::FunctionAnalysisManager&) {
  std::vector<llvm::Instruction*> accesses;
  for (llvm::BasicBlock& block : function) {
    for (llvm::Instruction& instruction : block) {
      if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(instruction)) accesses.push_back(&instruction);
    }
  }
  bool changed = false;
  for (llvm::Instruction* access : accesses) {
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(access)) {
      changed |= WidenLoad(load);
    } else {
      changed |= WidenStore(llvm::cast<llvm::StoreInst>(access));
    }
  }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

void AddNvptxPacking(llvm::PassBuilder& builder, int ptx_sm) {
  builder.registerOptimizerLastEPCallback(
      [ptx_sm](llvm::ModulePassManager& passes, llvm::OptimizationLevel) {
        llvm::FunctionPassManager function_passes;
        // Packed conversions exist from sm_80 (PTX 7.0) on.
        if (ptx_sm >= 80) function_passes.addPass(PackHalfConversionsPass());
        function_passes.addPass(llvm::LoadStoreVectorizerPass());
        function_passes.addPass(WidenNarrowVectorAccessesPass());
        passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(function_passes)));
      });
}

}  // namespace tilesmith::codegen
