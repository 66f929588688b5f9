#include "split/rank.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "compiler/hlo/printer.h"
#include "split/shard_module.h"
#include "tuner/space.h"

namespace tilesmith::split {

using nlohmann::json;

PredictedKernelTimer::PredictedKernelTimer(tuner::Device device, int64_t max_compiled)
    : device_(std::move(device)), ranking_(device_, nullptr, {.max_compiled = max_compiled}) {}

Expected<KernelTime> PredictedKernelTimer::Time(const hlo::HloModule& shard) {
  const std::string key = hlo::PrintModule(shard);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  TS_ASSIGN_OR_RETURN(tuner::Space space, tuner::BuildSpace(shard, device_.info, {}));
  std::vector<tuner::CandidatePrediction> predictions = ranking_.PredictAll(space);
  const tuner::CandidatePrediction* best = nullptr;
  for (const tuner::CandidatePrediction& p : predictions) {
    if (p.ok && (best == nullptr || p.microseconds < best->microseconds)) best = &p;
  }
  if (best == nullptr) {
    return InvalidArgument(
        "no config of the per-device fusion could be predicted: " +
        (predictions.empty() ? std::string("the space is empty") : predictions.front().error));
  }
  KernelTime time{best->microseconds, "predicted (" + ranking_.model_name() + ")",
                  space.candidates[best->candidate].config, space.emitter};
  cache_.emplace(key, time);
  return time;
}

namespace {

int64_t CollectiveBytes(const Strategy& strategy) {
  int64_t bytes = 0;
  for (const Collective& c : strategy.collectives) {
    if (c.kind != CollectiveKind::kSlice) bytes += c.bytes;
  }
  return bytes;
}

// True when dim `d` of the dot's operand `side` is neither a batch nor a contracting dim:
// gathering along it only adds rows (or columns) of the result, which the collective
// matmul computes chunk by chunk.
bool IsFreeDim(const hlo::HloInstruction& dot, int64_t side, int64_t d) {
  const hlo::DotDimensions dims = dot.attributes().dot.value_or(hlo::DotDimensions{});
  const auto& batch = side == 0 ? dims.lhs_batch : dims.rhs_batch;
  const auto& contracting = side == 0 ? dims.lhs_contracting : dims.rhs_contracting;
  return std::find(batch.begin(), batch.end(), d) == batch.end() &&
         std::find(contracting.begin(), contracting.end(), d) == contracting.end();
}

}  // namespace

void EstimateOverlap(const hlo::HloComputation& fusion, const Mesh& mesh, Strategy& strategy) {
  strategy.overlap.reset();
  const hlo::HloInstruction* dot = fusion.root();
  if (dot == nullptr || dot->opcode() != hlo::HloOpcode::kDot) return;
  for (const Collective& c : strategy.collectives) {
    bool applies = false;
    std::string what;
    if (!c.on_output && c.kind == CollectiveKind::kAllGather) {
      for (int64_t side = 0; side < 2; ++side) {
        const hlo::HloInstruction* operand = dot->operand(side);
        if (operand->opcode() == hlo::HloOpcode::kParameter &&
            operand->parameter_number() == c.array && IsFreeDim(*dot, side, c.dim)) {
          applies = true;
        }
      }
      what = "all_gather('" + c.axis + "') of param " + std::to_string(c.array);
    } else if (c.on_output && c.kind == CollectiveKind::kPsumScatter) {
      applies = true;
      what = "psum_scatter('" + c.axis + "') of the result";
    }
    if (!applies) continue;
    const MeshAxis& axis = mesh.axes[mesh.AxisIndex(c.axis)];
    const double n = static_cast<double>(axis.size);
    const double chunk_bytes = static_cast<double>(c.bytes) / n;
    const double step_us =
        CollectiveUs(CollectiveKind::kPpermute, static_cast<int64_t>(chunk_bytes), axis);
    const double compute_us = strategy.kernel_us / n;
    const double total =
        compute_us + (n - 1) * std::max(compute_us, step_us) + (strategy.comm_us - c.us);
    if (strategy.overlap && strategy.overlap->total_us <= total) continue;
    char note[256];
    std::snprintf(note, sizeof(note),
                  "collective matmul: %s as %d ppermute steps of %.0f B (%.2f us each), each "
                  "hidden behind 1/%d of the kernel (%.2f us)",
                  what.c_str(), axis.size - 1 > 0 ? static_cast<int>(axis.size - 1) : 0,
                  chunk_bytes, step_us, static_cast<int>(axis.size), compute_us);
    strategy.overlap = OverlapEstimate{total, note};
  }
}

Status RankStrategies(const hlo::HloModule& module, const DimLabels& labels, const Mesh& mesh,
                      KernelTimer& timer, std::vector<Strategy>& strategies) {
  for (Strategy& strategy : strategies) {
    TS_ASSIGN_OR_RETURN(auto shard, ShardModule(module, labels, mesh, strategy));
    auto time = timer.Time(*shard);
    if (!time) {
      std::string params;
      for (const PartitionSpec& spec : strategy.param_specs) {
        params += (params.empty() ? "" : ", ") + SpecToString(spec);
      }
      return std::unexpected(
          time.error().WithContext("the per-device fusion for params [" + params + "]"));
    }
    strategy.kernel_us = time->us;
    strategy.kernel_source = time->source;
    strategy.kernel_config = time->config;
    strategy.total_us = strategy.kernel_us + strategy.comm_us;
    EstimateOverlap(*module.fusion(), mesh, strategy);
  }
  std::vector<size_t> order(strategies.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Strategy& x = strategies[a];
    const Strategy& y = strategies[b];
    if (x.total_us != y.total_us) return x.total_us < y.total_us;
    if (CollectiveBytes(x) != CollectiveBytes(y)) return CollectiveBytes(x) < CollectiveBytes(y);
    return x.SplitAxisCount() < y.SplitAxisCount();
  });
  std::vector<Strategy> sorted;
  sorted.reserve(strategies.size());
  for (size_t i : order) sorted.push_back(std::move(strategies[i]));
  strategies = std::move(sorted);
  return OkStatus();
}

json StrategyToJson(const Strategy& strategy) {
  auto specs = [](const std::vector<PartitionSpec>& list) {
    json value = json::array();
    for (const PartitionSpec& spec : list) value.push_back(SpecToString(spec));
    return value;
  };
  json collectives = json::array();
  for (const Collective& c : strategy.collectives) collectives.push_back(CollectiveToJson(c));
  json value = {{"in_specs", specs(strategy.in_specs)},
                {"param_specs", specs(strategy.param_specs)},
                {"kernel_out_specs", specs(strategy.kernel_specs)},
                {"out_specs", specs(strategy.out_specs)},
                {"param_blocks", strategy.param_blocks},
                {"kernel_out_blocks", strategy.kernel_blocks},
                {"partial_axes", strategy.partial_axes},
                {"collectives", collectives},
                {"comm_us", strategy.comm_us},
                {"kernel_us", strategy.kernel_us},
                {"kernel_source", strategy.kernel_source},
                {"kernel_config", strategy.kernel_config},
                {"total_us", strategy.total_us}};
  if (strategy.overlap) {
    value["overlapped"] = {{"total_us", strategy.overlap->total_us},
                           {"note", strategy.overlap->note}};
  }
  return value;
}

}  // namespace tilesmith::split
