#include "compiler/ascgraph/memory_view.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "compiler/ascgraph/graph.h"

namespace tilesmith::ascgraph {
bool MemoryView::IsDense(std::span<const int64_t> repeats) const {
  if (element_dim || std::find(broadcast.begin(), broadcast.end(), true) != broadcast.end()) {
    return false;
  }
  return std::equal(buffer_dims.begin(), buffer_dims.end(), repeats.begin(), repeats.end());
}

bool MemoryView::HasDefaultLayout() const {
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (minor_to_major[i] != static_cast<int64_t>(minor_to_major.size() - 1 - i)) return false;
  }
  return true;
}

Expected<MemoryView> AnalyzeStrides(std::span<const int64_t> repeats,
                                    std::span<const int64_t> strides) {
  const size_t rank = repeats.size();
  MemoryView view;
  view.broadcast.assign(rank, false);
  std::vector<size_t> nontrivial;  // dims that move through memory
  for (size_t i = 0; i < rank; ++i) {
    if (repeats[i] <= 1) continue;
    if (strides[i] == 0) {
      view.broadcast[i] = true;
    } else {
      nontrivial.push_back(i);
    }
  }
  // Minor to major; among equal strides the later dim first, so the checks below reject
  // them as overlapping.
  std::sort(nontrivial.begin(), nontrivial.end(), [&](size_t a, size_t b) {
    return strides[a] != strides[b] ? strides[a] < strides[b] : a > b;
  });
  std::vector<int64_t> extent(repeats.begin(), repeats.end());
  for (size_t j = 0; j + 1 < nontrivial.size(); ++j) {
    size_t inner = nontrivial[j];
    size_t outer = nontrivial[j + 1];
    if (strides[outer] < strides[inner] * repeats[inner] || strides[outer] % strides[inner] != 0) {
      return Unimplemented("strides " + FormatList(strides) + " of repeats " + FormatList(repeats) +
                           " overlap or do not nest (dim " + std::to_string(outer) + "'s stride " +
                           std::to_string(strides[outer]) + " is not a multiple of dim " +
                           std::to_string(inner) + "'s extent " +
                           std::to_string(strides[inner] * repeats[inner]) + " or more)");
    }
    extent[inner] = strides[outer] / strides[inner];
  }
  // Buffer dim of each tensor dim (broadcast dims have none).
  std::vector<int64_t> buffer_dim(rank, -1);
  for (size_t i = 0; i < rank; ++i) {
    if (view.broadcast[i]) continue;
    buffer_dim[i] = static_cast<int64_t>(view.buffer_dims.size());
    view.buffer_dims.push_back(extent[i]);
  }
  if (!nontrivial.empty() && strides[nontrivial.front()] > 1) {
    view.element_dim = true;
    view.minor_to_major.push_back(static_cast<int64_t>(view.buffer_dims.size()));
    view.buffer_dims.push_back(strides[nontrivial.front()]);
  }
  for (size_t i : nontrivial) view.minor_to_major.push_back(buffer_dim[i]);
  // Dims of size 1 may sit anywhere; when the others are in row-major order, put them
  // where the default layout has them, so a plain tensor gets the plain layout.
  bool row_major = std::is_sorted(view.minor_to_major.rbegin(), view.minor_to_major.rend());
  if (row_major) view.minor_to_major.clear();
  for (int64_t d = static_cast<int64_t>(view.buffer_dims.size()); d-- > 0;) {
    bool placed = std::find(view.minor_to_major.begin(), view.minor_to_major.end(), d) !=
                  view.minor_to_major.end();
    if (!placed) view.minor_to_major.push_back(d);
  }
  return view;
}

}  // namespace tilesmith::ascgraph
