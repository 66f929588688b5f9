// The host's register transpose of a loop that stores what it loads transposed (a packed
// transpose's first phase): per square of points, one vector per loaded row, a shuffle
// network, one vector store per stored row. LLVM's SLP vectoriser turns consecutive loads
// into vectors, but it does not find the transpose between them and the stores.
#include <llvm/ADT/SmallVector.h>

#include "compiler/codegen/kernel_body.h"
#include "compiler/codegen/loop_builder.h"
#include "compiler/hlo/tiling.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;

constexpr int64_t kMaxSquareSide = 8;

// rows[b][a] -> columns[a][b] for a power-of-two side: log2(side) rounds of interleaving row
// i with row i + side/2 (a perfect shuffle each round).
std::vector<llvm::Value*> TransposeSquare(llvm::IRBuilderBase& builder,
                                          std::vector<llvm::Value*> rows) {
  int side = static_cast<int>(rows.size());
  int half = side / 2;
  llvm::SmallVector<int, 8> low, high;
  for (int k = 0; k < half; ++k) {
    low.append({k, side + k});
    high.append({half + k, side + half + k});
  }
  for (int round = 1; round < side; round *= 2) {
    std::vector<llvm::Value*> next(rows.size());
    for (int i = 0; i < half; ++i) {
      next[2 * i] = builder.CreateShuffleVector(rows[i], rows[i + half], low);
      next[2 * i + 1] = builder.CreateShuffleVector(rows[i], rows[i + half], high);
    }
    rows = std::move(next);
  }
  return rows;
}

// Whether the write of point (a, b) lands `b` elements after that of (a, 0): the same
// allocation and indices, but for the minor one, `b` further.
bool Adjacent(const ElementalEmitter& elemental, const std::vector<AffineExpr>& first,
              const std::vector<AffineExpr>& later, int64_t b) {
  if (first.size() != later.size() || first.empty()) return false;
  for (size_t d = 0; d < first.size(); ++d) {
    int64_t expected = d + 1 == first.size() ? b : 0;
    if (!elemental.Simplify(later[d] - first[d]).IsConstant(expected)) return false;
  }
  return true;
}

}  // namespace

int64_t BodyEmitter::RegisterTransposeSide(const LoopStmt& loop) const {
  if (!loop.register_transpose) return 0;
  const analysis::IndexingMap& map = loop.map;
  int64_t count = map.symbol_count();
  int64_t along_load = loop.register_transpose->along_load;
  int64_t along_store = loop.register_transpose->along_store;
  // The square's symbols must be the innermost two, so that the other symbols bound
  // outside it are all of them.
  if (count < 2 || std::min(along_load, along_store) != count - 2 ||
      std::max(along_load, along_store) != count - 1) {
    return 0;
  }
  const analysis::SymbolVar& load_symbol = map.symbol(along_load);
  const analysis::SymbolVar& store_symbol = map.symbol(along_store);
  int64_t side = load_symbol.range.NumElements();
  bool power_of_two = side >= 2 && (side & (side - 1)) == 0;
  if (!power_of_two || side > kMaxSquareSide || store_symbol.range.NumElements() != side ||
      load_symbol.kind == analysis::SymbolKind::kRuntime ||
      store_symbol.kind == analysis::SymbolKind::kRuntime) {
    return 0;
  }
  bool stores = false;
  for (const emitters::BodyStmt& stmt : loop.body) {
    if (std::holds_alternative<emitters::CallStmt>(stmt)) continue;
    const auto* store = std::get_if<emitters::SharedStoreStmt>(&stmt);
    if (store == nullptr || !store->predicates.empty()) return 0;
    auto physical = hlo::PhysicalLayout::Create(shared_shapes_[store->alloc]);
    if (!physical || physical->element_bits() % 8 != 0) return 0;
    stores = true;
  }
  return stores ? side : 0;
}

Status BodyEmitter::EmitHostLoop(const LoopStmt& loop) {
  int64_t side = RegisterTransposeSide(loop);
  if (side == 0) return EmitLoop(loop);
  std::vector<AffineExpr> symbols;
  return EmitSymbols(
      loop, symbols,
      [&](std::span<const AffineExpr> outer) { return EmitTransposedSquare(loop, outer, side); },
      loop.map.symbol_count() - 2);
}

Status BodyEmitter::EmitTransposedSquare(const LoopStmt& loop, std::span<const AffineExpr> outer,
                                         int64_t side) {
  const analysis::IndexingMap& map = loop.map;
  const LoopStmt::RegisterTranspose& square = *loop.register_transpose;
  int64_t load_lower = map.symbol(square.along_load).range.lower;
  int64_t store_lower = map.symbol(square.along_store).range.lower;
  auto point = [&](int64_t a, int64_t b) {
    std::vector<AffineExpr> symbols(outer.begin(), outer.end());
    symbols.resize(static_cast<size_t>(map.symbol_count()));
    symbols[square.along_load] = AffineExpr::Constant(load_lower + a);
    symbols[square.along_store] = AffineExpr::Constant(store_lower + b);
    return symbols;
  };

  // Vectors only where the whole square is in the domain (a partial tile's edge is not).
  std::vector<IndexEnv::Condition> conditions;
  for (int64_t b = 0; b < side; ++b) {
    for (int64_t a = 0; a < side; ++a) {
      for (IndexEnv::Condition& condition : DomainConditions(loop, point(a, b))) {
        conditions.push_back(std::move(condition));
      }
    }
  }
  llvm::Value* inside = AllHold(conditions);

  Segment whole{0, loop.body.size(), false};
  auto point_by_point = [&]() -> Expected<llvm::Value*> {
    for (int64_t b = 0; b < side; ++b) {
      for (int64_t a = 0; a < side; ++a) TS_RETURN_IF_ERROR(EmitBody(loop, point(a, b), whole));
    }
    return builder_.getFalse();
  };
  auto vectors = [&]() -> Expected<llvm::Value*> {
    // Every point's shared writes, point by point (b outer, so a's loads are adjacent).
    std::vector<SharedWrite> writes;
    shared_writes_ = &writes;
    Status emitted = OkStatus();
    for (int64_t b = 0; b < side && emitted; ++b) {
      for (int64_t a = 0; a < side && emitted; ++a) {
        emitted = EmitStatements(loop, PointIndex(loop, point(a, b)), whole);
      }
    }
    shared_writes_ = nullptr;
    if (!emitted) return std::unexpected(emitted.error());
    size_t per_point = writes.size() / static_cast<size_t>(side * side);
    for (size_t j = 0; j < per_point; ++j) {
      TS_RETURN_IF_ERROR(StoreSquare(side, [&](int64_t a, int64_t b) -> const SharedWrite& {
        return writes[static_cast<size_t>(b * side + a) * per_point + j];
      }));
    }
    return builder_.getTrue();
  };
  // Everything the vector arm emits stays in its scope: the other arm must not reuse it.
  auto scoped_vectors = [&]() -> Expected<llvm::Value*> {
    elemental_->PushScope();
    Expected<llvm::Value*> done = vectors();
    elemental_->PopScope();
    return done;
  };
  Expected<llvm::Value*> done = inside == nullptr
                                    ? scoped_vectors()
                                    : EmitIfElse(builder_, inside, scoped_vectors, point_by_point,
                                                 env_.HoldShare(conditions));
  if (!done) return std::unexpected(done.error());
  return OkStatus();
}

Status BodyEmitter::StoreSquare(int64_t side,
                                const std::function<const SharedWrite&(int64_t, int64_t)>& at) {
  bool adjacent = true;
  for (int64_t a = 0; a < side && adjacent; ++a) {
    for (int64_t b = 1; b < side && adjacent; ++b) {
      adjacent = at(a, b).alloc == at(a, 0).alloc &&
                 Adjacent(*elemental_, at(a, 0).indices, at(a, b).indices, b);
    }
  }
  if (!adjacent) {
    // Not the layout the hint promised: element by element, which is always right.
    for (int64_t b = 0; b < side; ++b) {
      for (int64_t a = 0; a < side; ++a) {
        TS_RETURN_IF_ERROR(
            elemental_->Store(shared_[at(a, b).alloc], at(a, b).indices, at(a, b).value));
      }
    }
    return OkStatus();
  }
  const BufferRef& tile = shared_[at(0, 0).alloc];
  auto physical = hlo::PhysicalLayout::Create(*tile.shape);
  if (!physical) return std::unexpected(physical.error());
  int64_t bits = physical->element_bits();
  auto* word = llvm::FixedVectorType::get(builder_.getIntNTy(static_cast<unsigned>(bits)),
                                          static_cast<unsigned>(side));
  std::vector<llvm::Value*> rows;
  for (int64_t b = 0; b < side; ++b) {
    llvm::Value* row = llvm::PoisonValue::get(word);
    for (int64_t a = 0; a < side; ++a) {
      row = builder_.CreateInsertElement(row, ToStorageBits(builder_, at(a, b).value, bits),
                                         builder_.getInt64(a));
    }
    rows.push_back(row);
  }
  std::vector<llvm::Value*> columns = TransposeSquare(builder_, std::move(rows));
  for (int64_t a = 0; a < side; ++a) {
    TS_RETURN_IF_ERROR(elemental_->StoreSlots(tile, at(a, 0).indices, columns[a]));
  }
  return OkStatus();
}

}  // namespace tilesmith::codegen
