#include "split/simulate.h"

#include <algorithm>
#include <cstring>

#include "compiler/hlo/evaluator.h"
#include "split/shard_module.h"

namespace tilesmith::split {
namespace {

using hlo::Literal;
using hlo::Shape;

// Copies the box of `extent` at `from` in `src` to `to` in `dst` (logical row-major storage,
// so whole unpacked elements move as bytes).
void CopyBox(const Literal& src, std::span<const int64_t> from, Literal& dst,
             std::span<const int64_t> to, std::span<const int64_t> extent) {
  const int64_t rank = static_cast<int64_t>(extent.size());
  const int64_t width = src.element_bytes();
  for (int64_t e : extent) {
    if (e == 0) return;
  }
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (int64_t i = 0; i < rank; ++i) {
      s = s * src.shape().dim(i) + from[i] + index[i];
      d = d * dst.shape().dim(i) + to[i] + index[i];
    }
    std::memcpy(dst.bytes().data() + d * width, src.bytes().data() + s * width, width);
    int64_t i = rank - 1;
    while (i >= 0 && ++index[i] == extent[i]) index[i--] = 0;
    if (i < 0) return;
  }
}

Literal WithDims(const Literal& like, std::vector<int64_t> dims) {
  return Literal(Shape::Array(like.element_type(), std::move(dims)));
}

// Piece `k` of `n` along `dim`.
Literal Piece(const Literal& block, int64_t dim, int64_t k, int64_t n) {
  std::vector<int64_t> dims(block.shape().dims().begin(), block.shape().dims().end());
  dims[dim] /= n;
  Literal piece = WithDims(block, dims);
  std::vector<int64_t> from(dims.size(), 0), to(dims.size(), 0);
  from[dim] = k * dims[dim];
  CopyBox(block, from, piece, to, dims);
  return piece;
}

// `pieces` laid end to end along `dim`.
Literal Concatenate(const std::vector<Literal>& pieces, int64_t dim) {
  std::vector<int64_t> dims(pieces[0].shape().dims().begin(), pieces[0].shape().dims().end());
  const int64_t step = dims[dim];
  dims[dim] *= static_cast<int64_t>(pieces.size());
  Literal whole = WithDims(pieces[0], dims);
  std::vector<int64_t> from(dims.size(), 0), to(dims.size(), 0);
  for (size_t k = 0; k < pieces.size(); ++k) {
    to[dim] = static_cast<int64_t>(k) * step;
    CopyBox(pieces[k], from, whole, to, pieces[k].shape().dims());
  }
  return whole;
}

Expected<Literal> Sum(const std::vector<const Literal*>& terms) {
  Literal sum =
      WithDims(*terms[0], {terms[0]->shape().dims().begin(), terms[0]->shape().dims().end()});
  const hlo::PrimitiveType type = sum.element_type();
  for (int64_t i = 0; i < sum.element_count(); ++i) {
    if (hlo::IsComplex(type)) {
      std::complex<double> total = 0;
      for (const Literal* term : terms) total += term->GetComplex(i);
      sum.SetComplex(i, total);
    } else if (hlo::IsFloatingPoint(type)) {
      double total = 0;
      for (const Literal* term : terms) total += term->GetDouble(i);
      sum.SetDouble(i, total);
    } else if (hlo::IsIntegral(type)) {
      int64_t total = 0;
      for (const Literal* term : terms) total += term->GetInt(i);
      sum.SetInt(i, total);
    } else {
      return Unimplemented("split: psum of " + std::string(hlo::PrimitiveTypeName(type)));
    }
  }
  return sum;
}

// The devices that differ from `device` only on `axis`, by their coordinate there.
std::vector<int64_t> Group(const Mesh& mesh, int64_t device, int64_t axis) {
  std::vector<int64_t> coordinates = mesh.Coordinates(device);
  std::vector<int64_t> group;
  for (int64_t k = 0; k < mesh.axes[axis].size; ++k) {
    coordinates[axis] = k;
    group.push_back(mesh.DeviceAt(coordinates));
  }
  return group;
}

}  // namespace

Expected<std::vector<Literal>> ApplyCollective(const Collective& step, const Mesh& mesh,
                                               const std::vector<Literal>& blocks) {
  const int64_t axis = mesh.AxisIndex(step.axis);
  const int64_t n = mesh.axes[axis].size;
  std::vector<Literal> result;
  for (int64_t device = 0; device < mesh.device_count(); ++device) {
    const std::vector<int64_t> group = Group(mesh, device, axis);
    const int64_t k = mesh.Coordinates(device)[axis];
    switch (step.kind) {
      case CollectiveKind::kAllGather: {
        std::vector<Literal> pieces;
        for (int64_t member : group) pieces.push_back(blocks[member]);
        result.push_back(Concatenate(pieces, step.dim));
        break;
      }
      case CollectiveKind::kAllToAll: {
        std::vector<Literal> pieces;
        for (int64_t member : group) pieces.push_back(Piece(blocks[member], step.split_dim, k, n));
        result.push_back(Concatenate(pieces, step.dim));
        break;
      }
      case CollectiveKind::kSlice:
        result.push_back(Piece(blocks[device], step.dim, k, n));
        break;
      case CollectiveKind::kPsum:
      case CollectiveKind::kPsumScatter: {
        std::vector<const Literal*> terms;
        for (int64_t member : group) terms.push_back(&blocks[member]);
        TS_ASSIGN_OR_RETURN(Literal sum, Sum(terms));
        result.push_back(step.kind == CollectiveKind::kPsum ? std::move(sum)
                                                            : Piece(sum, step.dim, k, n));
        break;
      }
      case CollectiveKind::kPpermute:
        return Unimplemented("split: ppermute steps are only part of overlap estimates");
    }
  }
  return result;
}

namespace {

// Where a device's block starts in the whole array.
std::vector<int64_t> BlockOffset(const PartitionSpec& spec, std::span<const int64_t> dims,
                                 const Mesh& mesh, int64_t device) {
  const std::vector<int64_t> coordinates = mesh.Coordinates(device);
  const std::vector<int64_t> block = BlockShape(spec, dims, mesh);
  std::vector<int64_t> offset(dims.size(), 0);
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t index = 0;
    for (const std::string& name : spec.AxesOf(d)) {
      const int64_t a = mesh.AxisIndex(name);
      index = index * mesh.axes[a].size + coordinates[a];
    }
    offset[d] = index * block[d];
  }
  return offset;
}

// A device that holds the copy of its block assembly reads: coordinate 0 on every axis the
// spec does not split by.
int64_t Canonical(const PartitionSpec& spec, const Mesh& mesh, int64_t device) {
  std::vector<int64_t> coordinates = mesh.Coordinates(device);
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    bool used = false;
    for (const auto& axes : spec.dims) {
      used |= std::find(axes.begin(), axes.end(), mesh.axes[a].name) != axes.end();
    }
    if (!used) coordinates[a] = 0;
  }
  return mesh.DeviceAt(coordinates);
}

}  // namespace

Literal BlockOf(const Literal& full, const PartitionSpec& spec, const Mesh& mesh, int64_t device) {
  std::span<const int64_t> dims = full.shape().dims();
  std::vector<int64_t> block = BlockShape(spec, dims, mesh);
  Literal result = WithDims(full, block);
  std::vector<int64_t> to(block.size(), 0);
  CopyBox(full, BlockOffset(spec, dims, mesh, device), result, to, block);
  return result;
}

Literal Assemble(const std::vector<Literal>& blocks, const PartitionSpec& spec, const Mesh& mesh,
                 int64_t reassociated_terms, std::string* disagreement) {
  std::vector<int64_t> dims(blocks[0].shape().dims().begin(), blocks[0].shape().dims().end());
  for (size_t d = 0; d < dims.size(); ++d) dims[d] *= SplitFactor(spec, d, mesh);
  Literal assembled = WithDims(blocks[0], dims);
  for (int64_t device = 0; device < mesh.device_count(); ++device) {
    const Literal& block = blocks[device];
    const int64_t twin = Canonical(spec, mesh, device);
    if (twin != device) {
      hlo::Comparison same = hlo::CompareLiterals(block, blocks[twin], reassociated_terms);
      if (!same.matches && disagreement->empty()) {
        *disagreement = "device " + std::to_string(device) + " and device " + std::to_string(twin) +
                        " should hold the same block: " + same.first_mismatch;
      }
      continue;
    }
    std::vector<int64_t> from(block.shape().rank(), 0);
    CopyBox(block, from, assembled, BlockOffset(spec, dims, mesh, device), block.shape().dims());
  }
  return assembled;
}

Expected<SimulationResult> Simulate(const hlo::HloModule& module, const DimLabels& labels,
                                    const Mesh& mesh, const Strategy& strategy,
                                    std::span<const Literal> arguments) {
  const hlo::HloComputation& fusion = *module.fusion();
  TS_ASSIGN_OR_RETURN(Literal reference, hlo::Evaluate(fusion, arguments));
  TS_ASSIGN_OR_RETURN(auto shard, ShardModule(module, labels, mesh, strategy));
  const hlo::HloComputation& shard_fusion = *shard->fusion();
  const int64_t devices = mesh.device_count();

  // Inputs: cut by the in specs, then moved by the steps before the kernel.
  std::vector<std::vector<Literal>> params(arguments.size());
  for (size_t p = 0; p < arguments.size(); ++p) {
    for (int64_t device = 0; device < devices; ++device) {
      params[p].push_back(BlockOf(arguments[p], strategy.in_specs[p], mesh, device));
    }
  }
  for (const Collective& step : strategy.collectives) {
    if (step.on_output) continue;
    TS_ASSIGN_OR_RETURN(params[step.array], ApplyCollective(step, mesh, params[step.array]));
  }
  std::vector<std::vector<Literal>> outputs(labels.outputs.size());
  for (int64_t device = 0; device < devices; ++device) {
    std::vector<Literal> device_args;
    for (size_t p = 0; p < params.size(); ++p) {
      if (!params[p][device].shape().EqualsIgnoringLayout(shard_fusion.parameter(p)->shape())) {
        return MakeError(ErrorCode::kInternal,
                         "split: parameter " + std::to_string(p) + " block is " +
                             hlo::ShapeToStringNoLayout(params[p][device].shape()) +
                             " but the per-device fusion takes " +
                             hlo::ShapeToStringNoLayout(shard_fusion.parameter(p)->shape()));
      }
      device_args.push_back(params[p][device]);
    }
    TS_ASSIGN_OR_RETURN(Literal result, hlo::Evaluate(shard_fusion, device_args));
    if (result.shape().IsTuple()) {
      for (size_t o = 0; o < outputs.size(); ++o) {
        outputs[o].push_back(std::move(result.tuple_elements()[o]));
      }
    } else {
      outputs[0].push_back(std::move(result));
    }
  }
  for (const Collective& step : strategy.collectives) {
    if (!step.on_output) continue;
    TS_ASSIGN_OR_RETURN(outputs[step.array], ApplyCollective(step, mesh, outputs[step.array]));
  }

  int64_t terms = 1;  // split sums add their partials in another order than the evaluator
  for (int l = 0; l < labels.count(); ++l) {
    if (!labels.contractions[l].empty()) terms = std::max(terms, labels.size[l]);
  }
  SimulationResult simulation{true, "", devices, 0};
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Literal& expected =
        reference.shape().IsTuple() ? reference.tuple_elements()[o] : reference;
    const PartitionSpec spec = strategy.out_specs[o].Padded(expected.shape().rank());
    std::string disagreement;
    Literal assembled = Assemble(outputs[o], spec, mesh, terms, &disagreement);
    if (!disagreement.empty() && simulation.matches) {
      simulation.matches = false;
      simulation.mismatch = "output " + std::to_string(o) + ": " + disagreement;
    }
    hlo::Comparison comparison = hlo::CompareLiterals(assembled, expected, terms);
    simulation.largest_error = std::max(simulation.largest_error, comparison.largest_error);
    if (!comparison.matches && simulation.matches) {
      simulation.matches = false;
      simulation.mismatch = "output " + std::to_string(o) +
                            " differs from the evaluator: " + comparison.first_mismatch;
    }
  }
  return simulation;
}

Expected<SimulationResult> Simulate(const hlo::HloModule& module, const DimLabels& labels,
                                    const Mesh& mesh, const Strategy& strategy, uint64_t seed) {
  TS_ASSIGN_OR_RETURN(std::vector<Literal> arguments,
                      hlo::MakeRandomArguments(*module.fusion(), seed));
  return Simulate(module, labels, mesh, strategy, arguments);
}

}  // namespace tilesmith::split
