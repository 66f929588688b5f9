// Where the reduction kernel reads and writes: element indices from the [D, H, W]
// coordinates the kernel's loops run over.
#include <algorithm>

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
  std::vector<AffineExpr> index(shape.rank(), AffineExpr::Constant(0));
  size_t next = 0;
  for (size_t part = 0; part < 3; ++part) {
    std::vector<int64_t> run;
    int64_t product = 1;
    while (product < sizes[part] && next < physical.size()) {
      run.push_back(physical[next]);
      product *= shape.dim(physical[next++]);
    }
    if (product != sizes[part]) {
      return MakeError(ErrorCode::kInternal,
                       hlo::ShapeToString(shape) + " does not match the reduction's [D, H, W]");
    }
    int64_t stride = 1;
    for (size_t i = run.size(); i-- > 0;) {
      AffineExpr scaled = stride == 1 ? coordinates[part] : coordinates[part].FloorDiv(stride);
      index[run[i]] = i == 0 ? scaled : scaled.Mod(shape.dim(run[i]));
      stride *= shape.dim(run[i]);
    }
  }
  return index;
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
