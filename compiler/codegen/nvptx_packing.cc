#include "compiler/codegen/nvptx_packing.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Vectorize/LoadStoreVectorizer.h>

#include <optional>
#include <unordered_set>
#include <vector>

namespace tilesmith::codegen {
namespace {

// What a pairable instruction does; two instructions pair only when they do the same.
struct PairKind {
  enum Op { kNone, kBf16Rounding, kF16Rounding, kHalfArithmetic };
  Op op = kNone;
  unsigned opcode = 0;  // of kHalfArithmetic: fadd, fsub or fmul
  friend bool operator==(const PairKind&, const PairKind&) = default;
};

PairKind KindOf(const llvm::Instruction& instruction, int ptx_sm) {
  // Packed conversions came with sm_80 (PTX 7.0), f16x2 arithmetic with sm_53.
  if (const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) {
    bool rounding = call->getIntrinsicID() == llvm::Intrinsic::nvvm_f2bf16_rn;
    return rounding && ptx_sm >= 80 ? PairKind{PairKind::kBf16Rounding} : PairKind{};
  }
  if (const auto* trunc = llvm::dyn_cast<llvm::FPTruncInst>(&instruction)) {
    bool rounding = trunc->getType()->isHalfTy() && trunc->getSrcTy()->isFloatTy();
    return rounding && ptx_sm >= 80 ? PairKind{PairKind::kF16Rounding} : PairKind{};
  }
  // Scalar f16 arithmetic (InstCombine narrows an f32 op of f16 values whose result is
  // rounded to f16, which is exact); each lane of the f16x2 form computes the same.
  unsigned opcode = instruction.getOpcode();
  if ((opcode == llvm::Instruction::FAdd || opcode == llvm::Instruction::FSub ||
       opcode == llvm::Instruction::FMul) &&
      instruction.getType()->isHalfTy() && !instruction.getFastMathFlags().any() && ptx_sm >= 53) {
    return {PairKind::kHalfArithmetic, opcode};
  }
  return {};
}

// How many later instructions are tried as one's partner, and how many instructions one
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

// `low` and `high` as a <2 x half>: the vector itself where they are its two elements in
// order (the result of a packed conversion or of packed arithmetic).
llvm::Value* HalfPair(llvm::IRBuilder<>& b, llvm::Value* low, llvm::Value* high) {
  using namespace llvm::PatternMatch;
  llvm::Value* vector = nullptr;
  if (match(low, m_ExtractElt(m_Value(vector), m_SpecificInt(0))) &&
      match(high, m_ExtractElt(m_Specific(vector), m_SpecificInt(1))) &&
      llvm::cast<llvm::FixedVectorType>(vector->getType())->getNumElements() == 2) {
    return vector;
  }
  llvm::Value* pair = llvm::PoisonValue::get(llvm::FixedVectorType::get(low->getType(), 2));
  pair = b.CreateInsertElement(pair, low, uint64_t{0});
  return b.CreateInsertElement(pair, high, uint64_t{1});
}

// Replaces `low` and `high` (low before high, high's operands available at low) by one
// packed instruction at `low`, `low`'s value in the lower half.
void Pack(llvm::Instruction* low, llvm::Instruction* high, PairKind kind) {
  llvm::IRBuilder<> b(low);
  llvm::Value* low_value;
  llvm::Value* high_value;
  if (kind.op == PairKind::kHalfArithmetic) {
    llvm::Value* packed = b.CreateBinOp(static_cast<llvm::Instruction::BinaryOps>(kind.opcode),
                                        HalfPair(b, low->getOperand(0), high->getOperand(0)),
                                        HalfPair(b, low->getOperand(1), high->getOperand(1)));
    low_value = b.CreateExtractElement(packed, uint64_t{0});
    high_value = b.CreateExtractElement(packed, uint64_t{1});
  } else {
    // PTX puts the conversion of the first source in the upper half (cuda_bf16.hpp's
    // __floats2bfloat162_rn passes its arguments swapped for the same reason).
    llvm::Value* sources[] = {high->getOperand(0), low->getOperand(0)};
    llvm::CallInst* packed =
        b.CreateIntrinsic(kind.op == PairKind::kBf16Rounding ? llvm::Intrinsic::nvvm_ff2bf16x2_rn
                                                             : llvm::Intrinsic::nvvm_ff2f16x2_rn,
                          {}, sources);
    // Pure, as the scalar roundings; LLVM 16 declares the intrinsics without saying so.
    packed->setDoesNotThrow();
    packed->addFnAttr(llvm::Attribute::WillReturn);
    if (kind.op == PairKind::kBf16Rounding) {
      low_value = b.CreateTrunc(packed, b.getInt16Ty());
      high_value = b.CreateTrunc(b.CreateLShr(packed, 16), b.getInt16Ty());
    } else {
      // A <2 x half>: element 0 is the lower half.
      low_value = b.CreateExtractElement(packed, uint64_t{0});
      high_value = b.CreateExtractElement(packed, uint64_t{1});
    }
  }
  low->replaceAllUsesWith(low_value);
  high->replaceAllUsesWith(high_value);
  low->eraseFromParent();
  high->eraseFromParent();
}

bool PackBlock(llvm::BasicBlock& block, int ptx_sm) {
  std::vector<llvm::Instruction*> candidates;
  std::vector<PairKind> kinds;
  for (llvm::Instruction& instruction : block) {
    PairKind kind = KindOf(instruction, ptx_sm);
    if (kind.op == PairKind::kNone) continue;
    candidates.push_back(&instruction);
    kinds.push_back(kind);
  }
  std::vector<bool> packed(candidates.size(), false);
  bool changed = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (packed[i]) continue;
    llvm::Instruction* low = candidates[i];
    for (size_t j = i + 1; j < candidates.size() && j <= i + kLookahead; ++j) {
      llvm::Instruction* high = candidates[j];
      if (packed[j] || !(kinds[j] == kinds[i]) || !low->comesBefore(high)) continue;
      std::optional<std::vector<llvm::Instruction*>> moved = DependenciesAfter(low, high);
      if (!moved) continue;
      for (llvm::Instruction* instruction : *moved) {
        if (instruction != high) instruction->moveBefore(low);
      }
      Pack(low, high, kinds[i]);
      packed[i] = packed[j] = true;
      changed = true;
      break;
    }
  }
  return changed;
}

// What a widened access keeps of the original's metadata: what says where and how it
// reads or writes (`!invariant.load` makes a load ld.global.nc), not what describes the
// old type's values (`!range`, `!tbaa`).
constexpr unsigned kKeptMetadata[] = {
    llvm::LLVMContext::MD_invariant_load, llvm::LLVMContext::MD_alias_scope,
    llvm::LLVMContext::MD_noalias, llvm::LLVMContext::MD_nontemporal,
    llvm::LLVMContext::MD_access_group};

// An 8- or 16-byte vector of 8- or 16-bit integers: LLVM 16 splits the 16-byte ones in two,
// and unpacks 32-bit words (packed conversions) into 16-bit registers for both.
llvm::FixedVectorType* NarrowVector(llvm::Type* type) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (vector == nullptr || !vector->getElementType()->isIntegerTy()) return nullptr;
  unsigned bits = vector->getElementType()->getIntegerBitWidth();
  unsigned total = bits * vector->getNumElements();
  if ((bits != 8 && bits != 16) || (total != 64 && total != 128)) return nullptr;
  return vector;
}

// The same bytes as 32-bit words.
llvm::FixedVectorType* WordsType(llvm::FixedVectorType* type) {
  unsigned bits = type->getElementType()->getIntegerBitWidth() * type->getNumElements();
  return llvm::FixedVectorType::get(llvm::Type::getInt32Ty(type->getContext()), bits / 32);
}

// Vector accesses must be aligned to their size.
bool AlignedToItsSize(llvm::FixedVectorType* type, llvm::Align align) {
  return align.value() * 8 >= type->getElementType()->getIntegerBitWidth() * type->getNumElements();
}

// A shuffle that takes lanes of `load` alone (its second operand unused or undefined).
bool ShufflesOnlyLanesOf(const llvm::ShuffleVectorInst& shuffle, const llvm::LoadInst* load) {
  if (shuffle.getOperand(0) != load) return false;
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(load->getType())->getNumElements();
  for (int lane : shuffle.getShuffleMask()) {
    if (lane < 0 || static_cast<unsigned>(lane) >= lanes) return false;
  }
  return true;
}

// Lane `lane` of the narrow vector whose bytes are `words`.
llvm::Value* LaneOfWords(llvm::IRBuilder<>& b, llvm::Value* words, uint64_t lane,
                         llvm::Type* element) {
  unsigned bits = element->getIntegerBitWidth();
  unsigned per_word = 32 / bits;
  llvm::Value* word = b.CreateExtractElement(words, lane / per_word);
  return b.CreateTrunc(b.CreateLShr(word, (lane % per_word) * bits), element);
}

// `shuffle`'s result from `words`: whole words reinterpreted where its lanes are a run that
// starts and ends on word boundaries (<16 x i8> taken apart as four <4 x i8>, as
// InstCombine leaves a 16-lane s8 loop body), else lane by lane.
llvm::Value* ShuffleOfWords(llvm::IRBuilder<>& b, llvm::Value* words,
                            const llvm::ShuffleVectorInst& shuffle, llvm::Type* element) {
  llvm::ArrayRef<int> mask = shuffle.getShuffleMask();
  unsigned per_word = 32 / element->getIntegerBitWidth();
  bool run = mask[0] % per_word == 0 && mask.size() % per_word == 0;
  for (size_t k = 1; run && k < mask.size(); ++k) run = mask[k] == mask[0] + static_cast<int>(k);
  if (run) {
    llvm::SmallVector<int> word_mask;
    for (size_t w = 0; w < mask.size() / per_word; ++w) {
      word_mask.push_back(static_cast<int>(mask[0] / per_word + w));
    }
    llvm::Value* taken = word_mask.size() == 1 ? b.CreateExtractElement(words, word_mask[0])
                                               : b.CreateShuffleVector(words, word_mask);
    return b.CreateBitCast(taken, shuffle.getType());
  }
  llvm::Value* result = llvm::PoisonValue::get(shuffle.getType());
  for (size_t k = 0; k < mask.size(); ++k) {
    result = b.CreateInsertElement(result, LaneOfWords(b, words, mask[k], element), k);
  }
  return result;
}

bool WidenLoad(llvm::LoadInst* load) {
  llvm::FixedVectorType* type = NarrowVector(load->getType());
  if (type == nullptr || !load->isSimple() || !AlignedToItsSize(type, load->getAlign())) {
    return false;
  }
  std::vector<llvm::Instruction*> uses;
  for (llvm::User* user : load->users()) {
    auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(user);
    auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(user);
    bool constant_lane =
        extract != nullptr && llvm::isa<llvm::ConstantInt>(extract->getIndexOperand());
    if (!constant_lane && (shuffle == nullptr || !ShufflesOnlyLanesOf(*shuffle, load))) {
      return false;
    }
    uses.push_back(llvm::cast<llvm::Instruction>(user));
  }
  llvm::IRBuilder<> b(load);
  llvm::LoadInst* words = b.CreateAlignedLoad(WordsType(type), load->getPointerOperand(),
                                              load->getAlign(), load->getName());
  words->copyMetadata(*load, kKeptMetadata);
  llvm::Type* element = type->getElementType();
  for (llvm::Instruction* use : uses) {
    b.SetInsertPoint(use);
    llvm::Value* value;
    if (auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(use)) {
      uint64_t lane = llvm::cast<llvm::ConstantInt>(extract->getIndexOperand())->getZExtValue();
      value = LaneOfWords(b, words, lane, element);
    } else {
      value = ShuffleOfWords(b, words, *llvm::cast<llvm::ShuffleVectorInst>(use), element);
    }
    use->replaceAllUsesWith(value);
    use->eraseFromParent();
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
  llvm::FixedVectorType* type = NarrowVector(value->getType());
  if (type == nullptr || !store->isSimple() || !AlignedToItsSize(type, store->getAlign())) {
    return false;
  }
  llvm::IRBuilder<> b(store);
  unsigned per_word = 32 / type->getElementType()->getIntegerBitWidth();
  llvm::FixedVectorType* words_type = WordsType(type);
  llvm::Value* words = llvm::PoisonValue::get(words_type);
  for (unsigned w = 0; w < words_type->getNumElements(); ++w) {
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
  wide->copyMetadata(*store, kKeptMetadata);
  store->eraseFromParent();
  llvm::RecursivelyDeleteTriviallyDeadInstructions(value);
  return true;
}

}  // namespace

llvm::PreservedAnalyses PackHalfPairsPass::run(llvm::Function& function,
                                               llvm::FunctionAnalysisManager&) {
  bool changed = false;
  for (llvm::BasicBlock& block : function) changed |= PackBlock(block, ptx_sm_);
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
        function_passes.addPass(PackHalfPairsPass(ptx_sm));
        function_passes.addPass(llvm::LoadStoreVectorizerPass());
        function_passes.addPass(WidenNarrowVectorAccessesPass());
        passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(function_passes)));
      });
}

}  // namespace tilesmith::codegen
