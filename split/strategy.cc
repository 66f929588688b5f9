#include "split/strategy.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace tilesmith::split {

using nlohmann::json;

std::string CollectiveName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kPsum:
      return "psum";
    case CollectiveKind::kPsumScatter:
      return "psum_scatter";
    case CollectiveKind::kPpermute:
      return "ppermute";
    case CollectiveKind::kSlice:
      return "slice";
  }
  return "?";
}

namespace {

std::string Bytes(int64_t bytes) {
  char text[32];
  if (bytes >= (int64_t{1} << 20)) {
    std::snprintf(text, sizeof(text), "%.1f MiB", bytes / 1048576.0);
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof(text), "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(text, sizeof(text), "%lld B", static_cast<long long>(bytes));
  }
  return text;
}

}  // namespace

std::string CollectiveToString(const Collective& c) {
  std::string where;
  if (c.kind == CollectiveKind::kAllToAll) {
    where = ", dim " + std::to_string(c.dim) + "->" + std::to_string(c.split_dim);
  } else if (c.dim >= 0) {
    where = ", dim " + std::to_string(c.dim);
  }
  char us[32];
  std::snprintf(us, sizeof(us), "%.2f us", c.us);
  return CollectiveName(c.kind) + "('" + c.axis + "'" + where + ") " +
         (c.on_output ? "out " : "param ") + std::to_string(c.array) + ": " + Bytes(c.bytes) + " " +
         us;
}

json CollectiveToJson(const Collective& c) {
  json value = {{"op", CollectiveName(c.kind)},
                {"axis", c.axis},
                {c.on_output ? "output" : "parameter", c.array},
                {"bytes", c.bytes},
                {"us", c.us}};
  if (c.dim >= 0) value["dim"] = c.dim;
  if (c.split_dim >= 0) value["split_dim"] = c.split_dim;
  return value;
}

double CollectiveUs(CollectiveKind kind, int64_t bytes, const MeshAxis& axis) {
  const double n = static_cast<double>(axis.size);
  if (axis.size <= 1 || kind == CollectiveKind::kSlice) return 0;
  const double bytes_per_us = axis.bandwidth_gbps * 1e3;  // 1 GB/s = 1e3 bytes/us
  const double b = static_cast<double>(bytes);
  switch (kind) {
    case CollectiveKind::kPsum:
      return 2 * (n - 1) * axis.latency_us + 2 * (n - 1) / n * b / bytes_per_us;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kPsumScatter:
    case CollectiveKind::kAllToAll:
      return (n - 1) * axis.latency_us + (n - 1) / n * b / bytes_per_us;
    case CollectiveKind::kPpermute:
      return axis.latency_us + b / bytes_per_us;
    case CollectiveKind::kSlice:
      return 0;
  }
  return 0;
}

int64_t Strategy::SplitAxisCount() const {
  int64_t count = 0;
  for (const auto& axes : label_axes) count += static_cast<int64_t>(axes.size());
  return count;
}

namespace {

bool IsPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

int64_t BlockBytes(const PartitionSpec& spec, std::span<const int64_t> dims, int64_t element_bytes,
                   const Mesh& mesh) {
  int64_t bytes = element_bytes;
  for (int64_t d : BlockShape(spec, dims, mesh)) bytes *= d;
  return bytes;
}

int64_t ElementBytes(const hlo::Shape& shape) {
  return std::max(1, hlo::BitWidth(shape.element_type()) / 8);
}

Collective Step(CollectiveKind kind, const std::string& axis, int64_t dim, bool on_output,
                int64_t array, int64_t bytes, const Mesh& mesh) {
  Collective step{kind, axis, dim, -1, on_output, array, bytes, 0};
  step.us = CollectiveUs(kind, bytes, mesh.axes[mesh.AxisIndex(axis)]);
  return step;
}

}  // namespace

void PlanReshard(const PartitionSpec& from, const PartitionSpec& to, std::span<const int64_t> dims,
                 int64_t element_bytes, const Mesh& mesh, bool on_output, int64_t array,
                 std::vector<Collective>* steps) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  PartitionSpec current = from.Padded(rank);
  const PartitionSpec target = to.Padded(rank);
  auto dim_in_target = [&](const std::string& axis) -> int64_t {
    for (int64_t d = 0; d < rank; ++d) {
      const auto& axes = target.dims[d];
      if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return d;
    }
    return -1;
  };
  // Axes leave a dim from its minor end (the order blocks were split in); one that the
  // target wants next on another dim moves there with all_to_all, the rest are gathered.
  while (true) {
    bool settled = true, progress = false;
    for (int64_t d = 0; d < rank; ++d) {
      if (IsPrefix(current.dims[d], target.dims[d])) continue;
      settled = false;
      const std::string axis = current.dims[d].back();
      const int64_t to_dim = dim_in_target(axis);
      const bool moves = to_dim >= 0 && to_dim != d;
      if (moves) {
        const auto& there = current.dims[to_dim];
        if (!IsPrefix(there, target.dims[to_dim]) || target.dims[to_dim][there.size()] != axis) {
          continue;  // the other dim is not ready for it yet
        }
        Collective step = Step(CollectiveKind::kAllToAll, axis, d, on_output, array,
                               BlockBytes(current, dims, element_bytes, mesh), mesh);
        step.split_dim = to_dim;
        steps->push_back(step);
        current.dims[d].pop_back();
        current.dims[to_dim].push_back(axis);
      } else {
        current.dims[d].pop_back();
        steps->push_back(Step(CollectiveKind::kAllGather, axis, d, on_output, array,
                              BlockBytes(current, dims, element_bytes, mesh), mesh));
      }
      progress = true;
    }
    if (settled) break;
    if (!progress) {  // every pending axis waits on another: gather one to break the cycle
      for (int64_t d = 0; d < rank; ++d) {
        if (IsPrefix(current.dims[d], target.dims[d])) continue;
        const std::string axis = current.dims[d].back();
        current.dims[d].pop_back();
        steps->push_back(Step(CollectiveKind::kAllGather, axis, d, on_output, array,
                              BlockBytes(current, dims, element_bytes, mesh), mesh));
        break;
      }
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    while (current.dims[d].size() < target.dims[d].size()) {
      const std::string axis = target.dims[d][current.dims[d].size()];
      steps->push_back(Step(CollectiveKind::kSlice, axis, d, on_output, array,
                            BlockBytes(current, dims, element_bytes, mesh), mesh));
      current.dims[d].push_back(axis);
    }
  }
}

Status ValidateRequest(const hlo::HloComputation& fusion, const DimLabels& labels, const Mesh& mesh,
                       const SplitRequest& request) {
  if (static_cast<int64_t>(request.in_specs.size()) > fusion.parameter_count()) {
    return InvalidArgument(std::to_string(request.in_specs.size()) +
                           " input specs for a fusion with " +
                           std::to_string(fusion.parameter_count()) + " parameters");
  }
  if (request.out_specs.size() > labels.outputs.size()) {
    return InvalidArgument(std::to_string(request.out_specs.size()) +
                           " output specs for a fusion with " +
                           std::to_string(labels.outputs.size()) + " outputs");
  }
  for (size_t p = 0; p < request.in_specs.size(); ++p) {
    if (!request.in_specs[p]) continue;
    TS_RETURN_IF_ERROR(ValidateSpec(*request.in_specs[p], fusion.parameter(p)->shape().dims(), mesh,
                                    "input spec of parameter " + std::to_string(p)));
  }
  for (size_t o = 0; o < request.out_specs.size(); ++o) {
    if (!request.out_specs[o]) continue;
    TS_RETURN_IF_ERROR(ValidateSpec(*request.out_specs[o], labels.outputs[o]->shape().dims(), mesh,
                                    "output spec of output " + std::to_string(o)));
  }
  return OkStatus();
}

namespace {

// Builds strategies from complete label assignments.
class Enumerator {
 public:
  Enumerator(const hlo::HloComputation& fusion, const DimLabels& labels, const Mesh& mesh,
             const SplitRequest& request)
      : fusion_(fusion), labels_(labels), mesh_(mesh), request_(request) {
    for (int l = 0; l < labels.count(); ++l) {
      if (!labels.pinned[l] && labels.size[l] > 1) splittable_.push_back(l);
    }
    for (size_t a = 0; a < mesh.axes.size(); ++a) {
      if (mesh.axes[a].size > 1) axes_.push_back(static_cast<int64_t>(a));
    }
  }

  Expected<std::vector<Strategy>> Run() {
    std::vector<int> choice(axes_.size(), -1);
    TS_RETURN_IF_ERROR(Choose(0, choice));
    return std::move(strategies_);
  }

 private:
  // Picks a label (or none) for every mesh axis, then every order of axes sharing a label.
  Status Choose(size_t next, std::vector<int>& choice) {
    if (next == axes_.size()) {
      std::vector<std::vector<std::string>> label_axes(labels_.count());
      for (size_t i = 0; i < axes_.size(); ++i) {
        if (choice[i] >= 0) label_axes[choice[i]].push_back(mesh_.axes[axes_[i]].name);
      }
      return Orders(0, label_axes);
    }
    for (int c = -1; c < static_cast<int>(splittable_.size()); ++c) {
      choice[next] = c < 0 ? -1 : splittable_[c];
      TS_RETURN_IF_ERROR(Choose(next + 1, choice));
    }
    return OkStatus();
  }

  Status Orders(int label, std::vector<std::vector<std::string>>& label_axes) {
    if (label == labels_.count()) return Add(label_axes);
    std::vector<std::string>& axes = label_axes[label];
    std::sort(axes.begin(), axes.end(), [&](const std::string& a, const std::string& b) {
      return mesh_.AxisIndex(a) < mesh_.AxisIndex(b);
    });
    std::vector<std::string> first = axes;
    do {
      TS_RETURN_IF_ERROR(Orders(label + 1, label_axes));
    } while (std::next_permutation(axes.begin(), axes.end(), [&](auto& a, auto& b) {
      return mesh_.AxisIndex(a) < mesh_.AxisIndex(b);
    }));
    axes = first;
    return OkStatus();
  }

  PartitionSpec SpecOf(const hlo::HloInstruction& instruction,
                       const std::vector<std::vector<std::string>>& label_axes) const {
    PartitionSpec spec;
    for (int label : labels_.Of(instruction)) spec.dims.push_back(label_axes[label]);
    return spec;
  }

  // The assignment is valid when every split dim divides, no instruction uses an axis
  // twice, and every split contraction is a sum left unreduced only at an output.
  bool Valid(const std::vector<std::vector<std::string>>& label_axes,
             std::vector<std::vector<std::string>>* partial) const {
    for (int l = 0; l < labels_.count(); ++l) {
      int64_t factor = 1;
      for (const std::string& axis : label_axes[l])
        factor *= mesh_.axes[mesh_.AxisIndex(axis)].size;
      if (labels_.size[l] % factor != 0) return false;
    }
    for (const auto& instruction : fusion_.instructions()) {
      std::set<int> seen;
      for (int label : labels_.Of(*instruction)) {
        if (!label_axes[label].empty() && !seen.insert(label).second) return false;
      }
    }
    partial->assign(labels_.outputs.size(), {});
    for (int l = 0; l < labels_.count(); ++l) {
      if (label_axes[l].empty()) continue;
      for (const Contraction& contraction : labels_.contractions[l]) {
        if (!contraction.psum_ok) return false;
        auto output = std::find(labels_.outputs.begin(), labels_.outputs.end(), contraction.at);
        if (output == labels_.outputs.end()) return false;  // a partial sum feeding more ops
        for (const hlo::HloInstruction* user : contraction.at->users()) {
          if (user != fusion_.root()) return false;
        }
        auto& axes = (*partial)[output - labels_.outputs.begin()];
        axes.insert(axes.end(), label_axes[l].begin(), label_axes[l].end());
      }
    }
    return true;
  }

  Status Add(const std::vector<std::vector<std::string>>& label_axes) {
    std::vector<std::vector<std::string>> partial;
    if (!Valid(label_axes, &partial)) return OkStatus();
    Strategy base;
    base.label_axes = label_axes;
    for (int64_t p = 0; p < fusion_.parameter_count(); ++p) {
      const hlo::HloInstruction& parameter = *fusion_.parameter(p);
      PartitionSpec spec = SpecOf(parameter, label_axes);
      const auto& given = p < static_cast<int64_t>(request_.in_specs.size())
                              ? request_.in_specs[p]
                              : std::optional<PartitionSpec>();
      base.in_specs.push_back(given ? given->Normalized() : spec.Normalized());
      PlanReshard(base.in_specs.back(), spec, parameter.shape().dims(),
                  ElementBytes(parameter.shape()), mesh_, false, p, &base.collectives);
      base.param_blocks.push_back(BlockShape(spec, parameter.shape().dims(), mesh_));
      base.param_specs.push_back(spec.Normalized());
    }
    for (size_t o = 0; o < labels_.outputs.size(); ++o) {
      const hlo::HloInstruction& output = *labels_.outputs[o];
      PartitionSpec spec = SpecOf(output, label_axes);
      base.kernel_specs.push_back(spec.Normalized());
      base.kernel_blocks.push_back(BlockShape(spec, output.shape().dims(), mesh_));
      std::sort(partial[o].begin(), partial[o].end(),
                [&](auto& a, auto& b) { return mesh_.AxisIndex(a) < mesh_.AxisIndex(b); });
    }
    base.partial_axes = partial;
    std::vector<Strategy> done = {base};
    for (size_t o = 0; o < labels_.outputs.size(); ++o) {
      std::vector<Strategy> next;
      for (Strategy& strategy : done) ResolveOutput(strategy, o, &next);
      done = std::move(next);
    }
    for (Strategy& strategy : done) {
      strategy.comm_us = 0;
      for (const Collective& c : strategy.collectives) strategy.comm_us += c.us;
      if (static_cast<int64_t>(strategies_.size()) >= request_.max_strategies) {
        return MakeError(ErrorCode::kResourceExhausted,
                         "more than " + std::to_string(request_.max_strategies) +
                             " split strategies; fix some input or output specs");
      }
      strategies_.push_back(std::move(strategy));
    }
    return OkStatus();
  }

  // Partial sums become psum, or psum_scatter onto a dim the output wants split by that
  // axis next; a free output may take any psum_scatter that divides, one strategy each.
  void ResolveOutput(const Strategy& strategy, size_t o, std::vector<Strategy>* out) const {
    const hlo::HloInstruction& output = *labels_.outputs[o];
    std::span<const int64_t> dims = output.shape().dims();
    const int64_t rank = output.shape().rank();
    const auto& given =
        o < request_.out_specs.size() ? request_.out_specs[o] : std::optional<PartitionSpec>();
    struct Partial {
      Strategy strategy;
      PartitionSpec spec;
    };
    std::vector<Partial> states = {{strategy, strategy.kernel_specs[o].Padded(rank)}};
    for (const std::string& axis : strategy.partial_axes[o]) {
      const int64_t n = mesh_.axes[mesh_.AxisIndex(axis)].size;
      std::vector<Partial> next;
      for (Partial& state : states) {
        const int64_t bytes = BlockBytes(state.spec, dims, ElementBytes(output.shape()), mesh_);
        for (int64_t d = -1; d < rank; ++d) {
          if (d >= 0) {
            const int64_t block = dims[d] / SplitFactor(state.spec, d, mesh_);
            if (block % n != 0) continue;
            if (given) {
              const PartitionSpec padded = given->Padded(rank);
              const auto& want = padded.dims[d];
              const auto& have = state.spec.dims[d];
              if (!IsPrefix(have, want) || want.size() == have.size() ||
                  want[have.size()] != axis) {
                continue;
              }
            }
          } else if (given && ScatterWanted(*given, state.spec, axis, rank)) {
            continue;  // the output wants it scattered: psum would move twice the bytes
          }
          Partial copy = state;
          copy.strategy.collectives.push_back(
              Step(d < 0 ? CollectiveKind::kPsum : CollectiveKind::kPsumScatter, axis, d, true,
                   static_cast<int64_t>(o), bytes, mesh_));
          if (d >= 0) copy.spec.dims[d].push_back(axis);
          next.push_back(std::move(copy));
        }
      }
      states = std::move(next);
    }
    for (Partial& state : states) {
      PartitionSpec final_spec = given ? *given : state.spec;
      PlanReshard(state.spec, final_spec, dims, ElementBytes(output.shape()), mesh_, true,
                  static_cast<int64_t>(o), &state.strategy.collectives);
      state.strategy.out_specs.push_back(final_spec.Normalized());
      out->push_back(std::move(state.strategy));
    }
  }

  bool ScatterWanted(const PartitionSpec& given, const PartitionSpec& have, const std::string& axis,
                     int64_t rank) const {
    PartitionSpec want = given.Padded(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (IsPrefix(have.dims[d], want.dims[d]) && want.dims[d].size() > have.dims[d].size() &&
          want.dims[d][have.dims[d].size()] == axis) {
        return true;
      }
    }
    return false;
  }

  const hlo::HloComputation& fusion_;
  const DimLabels& labels_;
  const Mesh& mesh_;
  const SplitRequest& request_;
  std::vector<int> splittable_;
  std::vector<int64_t> axes_;
  std::vector<Strategy> strategies_;
};

}  // namespace

Expected<std::vector<Strategy>> EnumerateStrategies(const hlo::HloComputation& fusion,
                                                    const DimLabels& labels, const Mesh& mesh,
                                                    const SplitRequest& request) {
  TS_RETURN_IF_ERROR(ValidateRequest(fusion, labels, mesh, request));
  return Enumerator(fusion, labels, mesh, request).Run();
}

}  // namespace tilesmith::split
