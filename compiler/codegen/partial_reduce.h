// The pieces of a reduction kernel's code that do not depend on where elements come from:
// applying a reduce hero's reducer to two partials (optionally with presence flags, for
// inits that must be folded in once), and folding over the symbols of an indexing map with
// the accumulators carried through unrolled code or loops.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "compiler/analysis/indexing_map.h"
#include "compiler/codegen/elemental.h"
#include "compiler/codegen/index_emitter.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/hlo/hlo_instruction.h"
#include "support/status.h"

namespace tilesmith::codegen {

/// `hero`'s reducer applied to two partials, `lhs` as the accumulator.
Expected<std::vector<ScalarValue>> ApplyReducer(ElementalEmitter& emitter,
                                                const hlo::HloInstruction& hero,
                                                std::span<const ScalarValue> lhs,
                                                std::span<const ScalarValue> rhs);

/// Two partials that each end with a presence pred: the reducer where both have elements,
/// else the side that has (or an empty result); the result ends with their presence.
Expected<std::vector<ScalarValue>> CombinePresent(ElementalEmitter& emitter,
                                                  const hlo::HloInstruction& hero,
                                                  std::span<const ScalarValue> lhs,
                                                  std::span<const ScalarValue> rhs);

/// `hero`'s init values (and, with `presence`, a pred saying whether they count).
Expected<std::vector<ScalarValue>> InitValues(ElementalEmitter& emitter,
                                              const hlo::HloInstruction& hero, bool presence,
                                              bool present);

/// Folds `step` over every point of `map`'s symbols, the accumulators starting at `initial`:
/// symbol ranges of at most `max_unrolled` values are unrolled (constant symbols), larger ones
/// become counted loops carrying the accumulators.
using FoldStep = std::function<Expected<std::vector<ScalarValue>>(
    std::span<const analysis::AffineExpr> symbols, std::vector<ScalarValue> accumulators)>;
Expected<std::vector<ScalarValue>> FoldOverSymbols(ElementalEmitter& emitter,
                                                   const analysis::IndexingMap& map,
                                                   std::vector<ScalarValue> initial,
                                                   int64_t max_unrolled, const FoldStep& step);

/// Reads value `i` of an element at `at`: reducer input i, or (after the inputs) a stored
/// presence flag.
using ElementSource =
    std::function<Expected<ScalarValue>(int64_t i, std::span<const analysis::AffineExpr> at)>;
/// Whether index conditions all hold where they are checked: an i1, or null where the
/// variables' ranges prove it, and the share of runs in which they hold
/// (IndexEnv::HoldShare).
struct Inside {
  llvm::Value* condition = nullptr;
  double share = 1;
};
using DomainCheck = std::function<Inside(std::span<const IndexEnv::Condition> conditions)>;

/// A thread's partial reduction (`reduce` in a loop at `index`): the accumulators start at
/// the hero's init values (or, with presence, empty) and fold in every point of the elements
/// map's symbols whose constraints hold, as `source` reads it; with lanes, into the
/// accumulator set the last symbol picks. Symbols of up to `max_unrolled` values unroll.
Expected<std::vector<ScalarValue>> EmitPartialReduce(ElementalEmitter& emitter,
                                                     const emitters::ReduceStmt& reduce,
                                                     std::span<const analysis::AffineExpr> index,
                                                     const ElementSource& source,
                                                     const DomainCheck& inside,
                                                     int64_t max_unrolled);

}  // namespace tilesmith::codegen
