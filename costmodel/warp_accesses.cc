#include "costmodel/warp_accesses.h"

#include <algorithm>

namespace tilesmith::costmodel::facts_internal {

bool SameDims(const hlo::Shape& shape, std::span<const int64_t> dims) {
  return shape.IsArray() &&
         std::equal(shape.dims().begin(), shape.dims().end(), dims.begin(), dims.end());
}

std::optional<int64_t> ByteAddress(const Addressing& addressing, const hlo::Shape& shape,
                                   std::span<const int64_t> index) {
  if (!addressing.layout || static_cast<int64_t>(index.size()) != shape.rank()) return std::nullopt;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (index[i] < 0 || index[i] >= shape.dim(i)) return std::nullopt;
  }
  return addressing.layout->LinearIndex(index) * addressing.element_bits / 8;
}

std::vector<int64_t> EvaluateAll(std::span<const analysis::AffineExpr> exprs,
                                 std::span<const int64_t> dims) {
  std::vector<int64_t> values;
  for (const analysis::AffineExpr& expr : exprs) values.push_back(expr.Evaluate(dims, {}));
  return values;
}

bool PredicatesHold(std::span<const emitters::Predicate> predicates,
                    std::span<const int64_t> dims) {
  return std::all_of(predicates.begin(), predicates.end(), [&](const emitters::Predicate& p) {
    return p.range.Contains(p.expr.Evaluate(dims, {}));
  });
}

std::vector<std::vector<int64_t>> VectorPoints(const analysis::IndexingMap& map) {
  std::vector<int64_t> first;
  for (const analysis::SymbolVar& symbol : map.symbols()) first.push_back(symbol.range.lower);
  std::vector<std::vector<int64_t>> points = {first};
  if (first.empty()) return points;
  const analysis::Interval& last = map.symbols().back().range;
  if (map.symbols().back().kind != analysis::SymbolKind::kRange || last.upper - last.lower >= 16) {
    return points;
  }
  points.clear();
  for (int64_t v = last.lower; v <= last.upper; ++v) {
    first.back() = v;
    points.push_back(first);
  }
  return points;
}

int64_t VectorExtent(const analysis::IndexingMap& map) {
  // An empty map (a zero-element array) has no points, but divides as a width of one.
  return std::max<int64_t>(1, static_cast<int64_t>(VectorPoints(map).size()));
}

double SymbolPoints(const analysis::IndexingMap& map) {
  if (map.IsKnownEmpty()) return 0;
  double points = 1;
  for (const analysis::SymbolVar& symbol : map.symbols()) {
    if (symbol.kind == analysis::SymbolKind::kRange && !symbol.range.IsEmpty()) {
      points *= static_cast<double>(symbol.range.upper - symbol.range.lower + 1);
    }
  }
  return points;
}

std::vector<std::vector<int64_t>> AllPoints(const analysis::IndexingMap& map, int64_t cap) {
  std::vector<int64_t> point;
  for (const analysis::SymbolVar& symbol : map.symbols()) {
    if (symbol.range.IsEmpty()) return {};
    point.push_back(symbol.range.lower);
  }
  std::vector<std::vector<int64_t>> points;
  while (static_cast<int64_t>(points.size()) < cap) {
    points.push_back(point);
    int64_t i = static_cast<int64_t>(point.size()) - 1;
    for (; i >= 0; --i) {
      const analysis::SymbolVar& symbol = map.symbols()[i];
      if (symbol.kind == analysis::SymbolKind::kRange && point[i] < symbol.range.upper) {
        ++point[i];
        break;
      }
      point[i] = symbol.range.lower;
    }
    if (i < 0) break;
  }
  return points;
}

}  // namespace tilesmith::costmodel::facts_internal
