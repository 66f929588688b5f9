#include "compiler/codegen/code_counts.h"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/BlockFrequencyInfo.h>
#include <llvm/Analysis/BranchProbabilityInfo.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tilesmith::codegen {
namespace {

bool IsMemoryAccess(const llvm::Instruction& instruction) {
  if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(instruction)) return true;
  if (const auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) {
    switch (intrinsic->getIntrinsicID()) {
      case llvm::Intrinsic::masked_load:
      case llvm::Intrinsic::masked_store:
      case llvm::Intrinsic::masked_gather:
      case llvm::Intrinsic::masked_scatter:
        return true;
      default:
        return false;
    }
  }
  return false;
}

bool IsDivision(const llvm::Instruction& instruction) {
  switch (instruction.getOpcode()) {
    case llvm::Instruction::UDiv:
    case llvm::Instruction::SDiv:
    case llvm::Instruction::URem:
    case llvm::Instruction::SRem:
    case llvm::Instruction::FDiv:
    case llvm::Instruction::FRem:
      return true;
    default:
      return false;
  }
}

// An integer division or remainder by a constant divisor (a scalar, or a vector of
// constants): the backend turns it into a multiply-high and shifts.
bool IsConstantDivision(const llvm::Instruction& instruction) {
  switch (instruction.getOpcode()) {
    case llvm::Instruction::UDiv:
    case llvm::Instruction::SDiv:
    case llvm::Instruction::URem:
    case llvm::Instruction::SRem: {
      const auto* divisor = llvm::dyn_cast<llvm::Constant>(instruction.getOperand(1));
      return divisor != nullptr && !divisor->containsUndefOrPoisonElement() &&
             !divisor->isZeroValue();
    }
    default:
      return false;
  }
}

// The lanes a gather or scatter loads or stores one by one (0 for anything else).
double GatherLanes(const llvm::Instruction& instruction) {
  const auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction);
  if (intrinsic == nullptr) return 0;
  llvm::Type* type = nullptr;
  switch (intrinsic->getIntrinsicID()) {
    case llvm::Intrinsic::masked_gather:
      type = intrinsic->getType();
      break;
    case llvm::Intrinsic::masked_scatter:
      type = intrinsic->getArgOperand(0)->getType();
      break;
    default:
      return 0;
  }
  const auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  return vector != nullptr ? static_cast<double>(vector->getNumElements()) : 0;
}

// The lanes of an operation on f16 or bf16 values (its result's or first operand's type),
// where the target converts to f32 and back; loads, stores, bitcasts and selects only move
// the 16 bits (0 for them and for everything else).
double HalfLanes(const llvm::Instruction& instruction) {
  if (llvm::isa<llvm::LoadInst, llvm::StoreInst, llvm::BitCastInst, llvm::SelectInst,
                llvm::ExtractElementInst, llvm::InsertElementInst, llvm::ShuffleVectorInst,
                llvm::PHINode>(instruction) ||
      IsMemoryAccess(instruction)) {
    return 0;
  }
  auto lanes = [](llvm::Type* type) -> double {
    if (!type->getScalarType()->isHalfTy() && !type->getScalarType()->isBFloatTy()) return 0;
    const auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    return vector != nullptr ? static_cast<double>(vector->getNumElements()) : 1;
  };
  double result = lanes(instruction.getType());
  if (result > 0 || instruction.getNumOperands() == 0) return result;
  return lanes(instruction.getOperand(0)->getType());
}

// How often each block runs per call. Within one iteration of its loop (or the function
// body), a block runs as often as branch probabilities say it is reached: branch weights
// where the emitter gave them (the share of runs in which a bounds check holds), LLVM's
// static heuristics elsewhere. So of an if/else only the arm taken counts, in proportion.
// A loop's iterations are its constant trip count (scalar evolution), rather than block
// frequency's guess. A loop without one (a kernel's loop over its range of blocks) runs
// once per call, however its guard was weighed.
class BlockRuns {
 public:
  BlockRuns(llvm::Function& function, llvm::LoopInfo& loops, llvm::ScalarEvolution& evolution,
            const llvm::TargetLibraryInfo& library, llvm::DominatorTree& dominators)
      : loops_(loops),
        evolution_(evolution),
        probabilities_(function, loops, &library, &dominators),
        frequencies_(function, probabilities_, loops),
        entry_(&function.getEntryBlock()) {}

  double Runs(const llvm::BasicBlock* block) {
    const llvm::Loop* loop = loops_.getLoopFor(block);
    if (loop == nullptr) return Share(block, entry_);
    return Share(block, loop->getHeader()) * Iterations(loop);
  }

 private:
  // How often `block` runs per run of `header` (its loop's header, or the entry).
  double Share(const llvm::BasicBlock* block, const llvm::BasicBlock* header) const {
    double base = Frequency(header);
    return base > 0 ? Frequency(block) / base : 1;
  }

  double Frequency(const llvm::BasicBlock* block) const {
    return static_cast<double>(frequencies_.getBlockFreq(block).getFrequency());
  }

  // How often the loop's header runs per call: its trip count times how often it is
  // entered per iteration of the loop around it (or per call).
  double Iterations(const llvm::Loop* loop) {
    auto known = iterations_.find(loop);
    if (known != iterations_.end()) return known->second;
    const llvm::Loop* parent = loop->getParentLoop();
    double outer = parent == nullptr ? 1 : Iterations(parent);
    double iterations = outer;
    if (double trips = Trips(loop); trips > 0) {
      // Entries per run of the enclosing header, in block frequency's own terms (an edge
      // leaving a sibling loop carries exactly the mass that entered it).
      const llvm::BasicBlock* header = loop->getHeader();
      double entering = 0;
      for (const llvm::BasicBlock* predecessor : llvm::predecessors(header)) {
        if (loop->contains(predecessor)) continue;
        llvm::BranchProbability taken = probabilities_.getEdgeProbability(predecessor, header);
        entering += Frequency(predecessor) * static_cast<double>(taken.getNumerator()) /
                    static_cast<double>(taken.getDenominator());
      }
      double base = Frequency(parent == nullptr ? entry_ : parent->getHeader());
      iterations = trips * (base > 0 ? entering / base : 1) * outer;
    }
    iterations_[loop] = iterations;
    return iterations;
  }

  double Trips(const llvm::Loop* loop) const {
    auto* mutable_loop = const_cast<llvm::Loop*>(loop);
    unsigned trips = evolution_.getSmallConstantTripCount(mutable_loop);
    if (trips == 0) trips = evolution_.getSmallConstantMaxTripCount(mutable_loop);
    return trips;
  }

  llvm::LoopInfo& loops_;
  llvm::ScalarEvolution& evolution_;
  llvm::BranchProbabilityInfo probabilities_;
  llvm::BlockFrequencyInfo frequencies_;
  const llvm::BasicBlock* entry_;
  std::unordered_map<const llvm::Loop*, double> iterations_;
};

// CountExecutedCode, and each block's runs by its name where `runs_by_block` is given.
CodeCounts CountWithBlockRuns(llvm::Function& function,
                              std::unordered_map<std::string, double>* runs_by_block) {
  CodeCounts counts;
  if (function.isDeclaration()) return counts;
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  llvm::TargetLibraryInfoImpl library_impl(llvm::Triple(function.getParent()->getTargetTriple()));
  llvm::TargetLibraryInfo library(library_impl, &function);
  llvm::AssumptionCache assumptions(function);
  llvm::ScalarEvolution evolution(function, library, assumptions, dominators, loops);
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    if (evolution.getSmallConstantMaxTripCount(loop) == 0) ++counts.unbounded_loops;
  }
  BlockRuns block_runs(function, loops, evolution, library, dominators);
  for (llvm::BasicBlock& block : function) {
    double runs = block_runs.Runs(&block);
    if (runs_by_block != nullptr) (*runs_by_block)[block.getName().str()] = runs;
    for (llvm::Instruction& instruction : block) {
      if (llvm::isa<llvm::PHINode, llvm::DbgInfoIntrinsic>(instruction)) continue;
      counts.instructions += runs;
      if (IsMemoryAccess(instruction)) counts.memory += runs;
      if (instruction.getType()->isVectorTy()) counts.vector += runs;
      if (IsDivision(instruction)) counts.divisions += runs;
      if (IsConstantDivision(instruction)) counts.constant_divisions += runs;
      if (instruction.getOpcode() == llvm::Instruction::FDiv ||
          instruction.getOpcode() == llvm::Instruction::FRem) {
        counts.float_divisions += runs;
      }
      counts.gather_lanes += runs * GatherLanes(instruction);
      counts.half_lanes += runs * HalfLanes(instruction);
      if (const auto* branch = llvm::dyn_cast<llvm::BranchInst>(&instruction)) {
        if (branch->isConditional()) counts.branches += runs;
      } else if (llvm::isa<llvm::SwitchInst>(instruction)) {
        counts.branches += runs;
      }
    }
  }
  return counts;
}

// Whether `mnemonic` moves a single lane between vector, mask and general registers: an
// element extracted or inserted, or a mask-register operation (kmov, kand, kor, kortest, …).
bool IsLaneMove(std::string_view mnemonic) {
  if (mnemonic.starts_with("vpextr") || mnemonic.starts_with("vpinsr") ||
      mnemonic.starts_with("pextr") || mnemonic.starts_with("pinsr")) {
    return true;
  }
  for (std::string_view mask :
       {"kmov", "kand", "kor", "kxor", "knot", "kshift", "kunpck", "ktest", "kadd"}) {
    if (mnemonic.starts_with(mask)) return true;
  }
  return false;
}

struct MachineCounts {
  double instructions = 0;
  double lane_moves = 0;  ///< Of `instructions`: those IsLaneMove names.
};

// Machine instructions and lane moves in `assembly` (the target's text for `function`),
// each weighted by the runs of the IR block the printer names beside its machine block's
// label (`# %name`); a block the code generator split off, unnamed, runs as the block
// before it.
MachineCounts WeightedMachineInstructions(
    std::string_view assembly, std::string_view function,
    const std::unordered_map<std::string, double>& runs_by_block) {
  MachineCounts total;
  double runs = 1;
  bool inside = false;
  size_t start = 0;
  while (start < assembly.size()) {
    size_t end = assembly.find('\n', start);
    if (end == std::string_view::npos) end = assembly.size();
    std::string_view line = assembly.substr(start, end - start);
    start = end + 1;
    if (!inside) {
      inside = line.starts_with(function) && line.substr(function.size()).starts_with(":");
      continue;
    }
    if (line.starts_with(".Lfunc_end")) break;
    if (line.starts_with(".LBB") || line.starts_with("# %bb.")) {
      size_t name = line.find("# %", 2);
      if (name != std::string_view::npos) {
        std::string block(line.substr(name + 3));
        while (!block.empty() && std::isspace(static_cast<unsigned char>(block.back()))) {
          block.pop_back();
        }
        if (auto found = runs_by_block.find(block); found != runs_by_block.end()) {
          runs = found->second;
        }
      }
      continue;
    }
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || first == 0) continue;
    char lead = line[first];
    if (lead == '.' || lead == '#') continue;  // directives and comments
    total.instructions += runs;
    std::string_view mnemonic = line.substr(first);
    mnemonic = mnemonic.substr(0, mnemonic.find_first_of(" \t"));
    if (IsLaneMove(mnemonic)) total.lane_moves += runs;
  }
  return total;
}

}  // namespace

CodeCounts CountExecutedCode(llvm::Function& function) {
  return CountWithBlockRuns(function, nullptr);
}

CodeCounts CountExecutedMachineCode(llvm::Function& function, llvm::TargetMachine& machine) {
  // Every block named, so the printer's label comments name them all.
  int unnamed = 0;
  for (llvm::BasicBlock& block : function) {
    if (!block.hasName()) block.setName("counted.block." + std::to_string(unnamed++));
  }
  std::unordered_map<std::string, double> runs_by_block;
  CodeCounts counts = CountWithBlockRuns(function, &runs_by_block);
  llvm::SmallString<0> assembly;
  llvm::raw_svector_ostream out(assembly);
  llvm::legacy::PassManager passes;
  machine.Options.MCOptions.AsmVerbose = true;  // the label comments that name IR blocks
  if (machine.addPassesToEmitFile(passes, out, nullptr, llvm::CGFT_AssemblyFile)) return counts;
  std::string name = function.getName().str();
  passes.run(*function.getParent());
  MachineCounts machine_counts = WeightedMachineInstructions(assembly.str(), name, runs_by_block);
  counts.machine_instructions = machine_counts.instructions;
  counts.lane_moves = machine_counts.lane_moves;
  return counts;
}

}  // namespace tilesmith::codegen
