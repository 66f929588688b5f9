// `tilesmith schedule`: what Auto Schedule + Auto Tiling would choose for an AscGraph on an
// Ascend 910B-class platform, predicted by the public cost model (costmodel/ascend).
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/ascgraph/reader.h"
#include "costmodel/ascend/platform.h"
#include "costmodel/ascend/schedule.h"
#include "support/log.h"
#include "tools/commands.h"
#include "tuner/device.h"

namespace tilesmith::tools {
namespace {

namespace ascend = costmodel::ascend;

int Run(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one AscGraph request (*.ascgraph.txt, *.ascgraph.json or *.pb)");
    return kExitUsage;
  }
  ascend::ScheduleOptions options;
  if (args.Has("alternatives")) {
    try {
      size_t used = 0;
      std::string text = args.Get("alternatives");
      long long count = std::stoll(text, &used);
      if (used != text.size() || count < 0) throw std::invalid_argument(text);
      options.alternatives = static_cast<size_t>(count);
    } catch (const std::exception&) {
      ReportError("--alternatives expects a count (0 or more)");
      return kExitUsage;
    }
  }
  ascgraph::ReadOptions read_options;
  if (args.Has("sizes")) {
    auto sizes = ascgraph::ParseSizeBindings(args.Get("sizes"));
    if (!sizes) {
      ReportError(sizes.error().message);
      return kExitUsage;
    }
    read_options.sizes = std::move(*sizes);
  }
  const std::string& path = args.positionals()[0];
  auto request = ascgraph::ReadRequestFile(path, read_options);
  if (!request) return ReportError(request.error().message);

  ascgraph::Platform platform;
  if (args.Has("platform")) {
    auto loaded = ascend::LoadPlatform(args.Get("platform"), tuner::DefaultDevicesDir());
    if (!loaded) return ReportError(loaded.error().message);
    platform = std::move(*loaded);
  } else if (request->platform) {
    platform = *request->platform;
  } else {
    ReportError(path + ": the request names no platform; pass --platform 910b1|910b2|910b3|" +
                "910b4|PATH.json");
    return kExitUsage;
  }
  TS_LOG(kDebug) << "scheduling " << path << " for " << platform.name << " ("
                 << platform.vector_cores << " vector cores, " << platform.ub_bytes
                 << " bytes of unified buffer)";
  auto schedule = ascend::ScheduleRequest(*request, platform, options);
  if (!schedule) return ReportError(path + ": " + schedule.error().message);
  if (args.Has("json")) {
    std::cout << ascend::ScheduleToJson(*schedule).dump(2) << "\n";
  } else {
    std::cout << ascend::ScheduleToText(*schedule);
  }
  return kExitOk;
}

}  // namespace

Subcommand ScheduleSubcommand() {
  cli::Command command(
      "schedule", "predict Auto Schedule + Auto Tiling decisions for an Ascend target",
      "FILE --platform 910b1|910b2|910b3|910b4|PATH.json [--sizes s0=N,...] [--json] "
      "[--alternatives N]");
  command
      .Flag("platform", "P",
            "910b1, 910b2 (48 vector cores), 910b3, 910b4 (40), or a JSON file with "
            "vector_cores and ub_bytes; overrides the request's platform")
      .Flag("sizes", "s0=N,...", "bind size variables (overrides the request's sizes)")
      .Flag("alternatives", "N", "how many of the model's ranked alternatives to print (10)")
      .Switch("json", "print a JSON object (keys below)")
      .Epilog(
          "Splits each axis group (x: outside a transpose, y: elementwise, r: reduced) once\n"
          "(TileSplit z -> zT, zt), merges the outer tile axes and splits them across cores\n"
          "(BlockSplit -> zTB, zTb), and sizes the tiles with the public Auto Tiling solver:\n"
          "tiles binary-searched down until the buffers fit the unified buffer (queues\n"
          "double-buffered, rows 32-byte aligned), the most cores, then local improvement.\n"
          "Cycles come from the public per-pipe model (MTE2 loads, MTE3 stores, VEC ops);\n"
          "objective = max(MTE2, MTE3, VEC) + 300 * block_dim. Nothing is run: the answer is\n"
          "predicted. Every other case and tile size around the pick is ranked too.\n"
          "\n"
          "JSON keys: target, predicted, graph, platform {name, vector_cores, ub_bytes},\n"
          "  axes [{name, size, group, from, align, splittable}],\n"
          "  groups [{kind, axes, split_axis, tile, tile_loops, tile_outer, tile_inner}],\n"
          "  block {axis, outer, inner, tiles, tb_size, block_dim, reduce_loops},\n"
          "  buffers [{name, kind, count, bytes, tensors}],\n"
          "  tiling_data {block_dim, ub_size, tiling_key, <axis>t_size, <block>b_size,\n"
          "    <buffer>_size}, cycles {mte2, mte3, vec, objective, bottleneck},\n"
          "  constraints {ub_used, ub_available, block_dim, vector_cores, ok, violations},\n"
          "  pick, model_best and alternatives[] as {tiling_key, split_axes, tiles,\n"
          "    block_dim, tb_size, ub_used, cycles}, pick_rank, alternatives_considered,\n"
          "  assumptions (ops whose cost is estimated, not published).\n"
          "\n"
          "Example:\n"
          "  tilesmith schedule configs/examples/ascgraph/abs_chain.ascgraph.txt "
          "--platform 910b1");
  return {std::move(command), &Run};
}

}  // namespace tilesmith::tools
