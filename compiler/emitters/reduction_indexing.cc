// Where the reduction kernel reads and writes: element indices from the [D, H, W]
// coordinates the kernel's loops run over.
#include <algorithm>

#include "compiler/emitters/element_loop.h"
#include "compiler/emitters/reduction_internal.h"

namespace tilesmith::emitters::reduction_internal {

using analysis::AffineExpr;
using hlo::HloInstruction;

Expected<std::vector<AffineExpr>> InputIndex(const hlo::Shape& shape,
                                             const std::array<int64_t, 3>& sizes,
                                             const std::array<AffineExpr, 3>& coordinates) {
  if (!shape.layout().tiles.empty()) {
    return Unimplemented("the reduction emitter reads untiled layouts; " +
                         hlo::ShapeToString(shape) + " is tiled");
  }
  std::vector<int64_t> physical;
  const std::vector<int64_t>& minor_to_major = shape.layout().minor_to_major;
  for (auto it = minor_to_major.rbegin(); it != minor_to_major.rend(); ++it) {
    if (shape.dim(*it) != 1) physical.push_back(*it);
  }
  return IndexFromMergedDims(shape, physical, sizes, coordinates, "the reduction's [D, H, W]");
}

Expected<std::vector<AffineExpr>> OutputIndex(const HloInstruction* hero,
                                              const std::array<int64_t, 3>& sizes,
                                              const std::array<AffineExpr, 3>& coordinates) {
  TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> input,
                      InputIndex(hero->operand(0)->shape(), sizes, coordinates));
  std::vector<AffineExpr> output;
  std::span<const int64_t> reduced = hero->dimensions();
  for (int64_t d = 0; d < static_cast<int64_t>(input.size()); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) output.push_back(input[d]);
  }
  return output;
}

}  // namespace tilesmith::emitters::reduction_internal
