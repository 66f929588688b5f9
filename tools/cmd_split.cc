// `tilesmith split`: the ways a fusion can be split over a device mesh, ranked by per-step
// time = the per-device kernel (predicted, or measured with --measure on the host) + the
// collectives the split needs (alpha-beta ring model over the mesh's links).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "compiler/hlo/printer.h"
#include "db/open_store.h"
#include "split/dim_labels.h"
#include "split/mesh.h"
#include "split/partition_spec.h"
#include "split/rank.h"
#include "split/simulate.h"
#include "split/strategy.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"
#include "tools/tune_support.h"
#include "tuner/session.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

// Times per-device fusions by tuning them on the host (`tilesmith tune` with a budget): each
// distinct fusion is written to a temporary file the worker reads, and its trials land in
// the database like any tune's.
class MeasuredKernelTimer : public split::KernelTimer {
 public:
  MeasuredKernelTimer(tuner::Device device, db::Store* store, int64_t budget)
      : device_(std::move(device)), store_(store), budget_(budget) {
    dir_ = std::filesystem::temp_directory_path() / ("tilesmith-split-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  ~MeasuredKernelTimer() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  Expected<split::KernelTime> Time(const hlo::HloModule& shard) override {
    const std::string text = hlo::PrintModule(shard);
    if (auto it = cache_.find(text); it != cache_.end()) return it->second;
    const std::string path = (dir_ / ("shard" + std::to_string(cache_.size()) + ".hlo")).string();
    {
      std::ofstream out(path);
      out << text;
      if (!out) return MakeError(ErrorCode::kIo, path + ": cannot write the per-device fusion");
    }
    tuner::TuneOptions options;
    options.budget = budget_;
    options.worker_argv = WorkerArgv(path, device_, {});
    TS_ASSIGN_OR_RETURN(tuner::TuneResult result,
                        tuner::Tune(shard, device_, store_, TILESMITH_COMPILER_VERSION, options));
    if (!result.best) {
      return InvalidArgument("no config of the per-device fusion could be measured (" +
                             std::to_string(result.failed) + " failed)");
    }
    split::KernelTime time{result.best->median_us,
                           "measured (" + device_.id + ", " + std::to_string(result.measured) +
                               (result.measured == 1 ? " config)" : " configs)"),
                           result.best->config, result.emitter};
    cache_.emplace(text, time);
    return time;
  }

 private:
  tuner::Device device_;
  db::Store* store_;
  int64_t budget_;
  std::filesystem::path dir_;
  std::map<std::string, split::KernelTime> cache_;
};

Expected<std::vector<std::optional<split::PartitionSpec>>> SpecsFlag(const cli::Args& args,
                                                                     const std::string& flag) {
  std::vector<std::optional<split::PartitionSpec>> specs;
  if (!args.Has(flag)) return specs;
  auto parsed = split::ParseSpecList(args.Get(flag));
  if (!parsed) return std::unexpected(parsed.error().WithContext("--" + flag));
  for (split::PartitionSpec& spec : *parsed) specs.emplace_back(std::move(spec));
  return specs;
}

// The kernel's device: --target (and --device) when given, else the mesh's own device.
Expected<tuner::Device> KernelDevice(const cli::Args& args, const split::Mesh& mesh) {
  const std::string dir = tuner::DefaultDevicesDir();
  TS_ASSIGN_OR_RETURN(tuner::Device mesh_device,
                      tuner::LoadDeviceFile(dir + "/" + mesh.device + ".json"));
  if (!args.Has("target")) return mesh_device;
  const std::string target = args.Get("target");
  std::string device = args.Get("device");
  if (device.empty() && mesh_device.target.ToString() == target) device = mesh.device;
  return tuner::ResolveDevice(target, device, dir);
}

std::string Us(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f us", value);
  return text;
}

std::string SpecsWithBlocks(const std::vector<split::PartitionSpec>& specs,
                            const std::vector<std::vector<int64_t>>& blocks) {
  std::string text;
  for (size_t i = 0; i < specs.size(); ++i) {
    text += (i ? "; " : "") + split::SpecToString(specs[i]) + " " + split::DimsToString(blocks[i]);
  }
  return text;
}

void PrintStrategy(int64_t rank, const split::Strategy& s,
                   const std::optional<split::SimulationResult>& check) {
  std::cout << "#" << rank << "  total " << Us(s.total_us) << " = kernel " << Us(s.kernel_us)
            << " + comm " << Us(s.comm_us) << "\n";
  std::string in;
  for (size_t p = 0; p < s.in_specs.size(); ++p) {
    in += (p ? "; " : "") + split::SpecToString(s.in_specs[p]);
  }
  std::cout << "    in      " << in << "\n"
            << "    blocks  " << SpecsWithBlocks(s.param_specs, s.param_blocks) << " -> "
            << SpecsWithBlocks(s.kernel_specs, s.kernel_blocks);
  for (size_t o = 0; o < s.partial_axes.size(); ++o) {
    if (s.partial_axes[o].empty()) continue;
    std::string axes;
    for (const std::string& axis : s.partial_axes[o])
      axes += (axes.empty() ? "'" : ",'") + axis + "'";
    std::cout << "  (out " << o << " partial over " << axes << ")";
  }
  std::cout << "\n    out     ";
  for (size_t o = 0; o < s.out_specs.size(); ++o) {
    std::cout << (o ? "; " : "") << split::SpecToString(s.out_specs[o]);
  }
  std::cout << "\n    kernel  " << Us(s.kernel_us) << " " << s.kernel_source << "\n";
  bool any = false;
  for (const split::Collective& c : s.collectives) {
    if (c.kind == split::CollectiveKind::kSlice) continue;
    std::cout << "    comm    " << split::CollectiveToString(c) << "\n";
    any = true;
  }
  if (!any) std::cout << "    comm    none\n";
  if (s.overlap) {
    std::cout << "    overlapped estimate " << Us(s.overlap->total_us) << ": " << s.overlap->note
              << "\n";
  }
  if (check) {
    std::cout << "    check   "
              << (check->matches ? "all " + std::to_string(check->devices) +
                                       " devices simulated, assembled output matches the "
                                       "evaluator"
                                 : "MISMATCH: " + check->mismatch)
              << "\n";
  }
}

int RunSplit(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  if (!args.Has("mesh")) {
    ReportError("--mesh MESH.json is required (see configs/meshes/)");
    return kExitUsage;
  }
  auto top = args.GetWholeNumber("top", 10);
  auto budget = args.GetWholeNumber("measure-budget", 8);
  for (const auto* flag : {&top, &budget}) {
    if (!*flag) {
      ReportError(flag->error().message);
      return kExitUsage;
    }
  }
  auto in_specs = SpecsFlag(args, "in-specs");
  auto out_specs = SpecsFlag(args, "out-specs");
  for (const auto* flag : {&in_specs, &out_specs}) {
    if (!*flag) {
      ReportError(flag->error().message);
      return kExitUsage;
    }
  }
  auto mesh = split::LoadMeshFile(args.Get("mesh"));
  if (!mesh) return ReportError(mesh.error().message);
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  const hlo::HloModule& module = *loaded->module;
  auto device = KernelDevice(args, *mesh);
  if (!device) return ReportError(device.error().message);
  auto labels = split::LabelDims(*module.fusion());
  if (!labels) return ReportError(labels.error().message);
  split::SplitRequest request{*in_specs, *out_specs};
  auto strategies = split::EnumerateStrategies(*module.fusion(), *labels, *mesh, request);
  if (!strategies) return ReportError(strategies.error().message);

  const bool measure = args.Has("measure");
  std::unique_ptr<split::KernelTimer> timer;
  std::unique_ptr<db::Store> store;
  if (measure) {
    if (TimedOnlyWithDevice(*device)) {
      return ReportError("--measure times kernels on the host only; use --target host");
    }
    auto opened = db::OpenStore(ResolveDbPath(args.Get("db")));
    if (!opened) return ReportError(opened.error().message);
    store = std::move(*opened);
    timer = std::make_unique<MeasuredKernelTimer>(*device, store.get(), *budget);
  } else {
    timer = std::make_unique<split::PredictedKernelTimer>(*device);
  }
  auto ranked = split::RankStrategies(module, *labels, *mesh, *timer, *strategies);
  if (!ranked) return ReportError(ranked.error().message);
  const int64_t count = static_cast<int64_t>(strategies->size());
  const int64_t shown = std::min<int64_t>(*top == 0 ? count : *top, count);
  std::vector<std::optional<split::SimulationResult>> checks(shown);
  if (args.Has("check")) {
    // The simulation holds every device's blocks and the whole arrays at once.
    constexpr int64_t kMaxCheckedElements = int64_t{1} << 22;
    int64_t elements = 0;
    for (const hlo::HloInstruction* parameter : module.fusion()->parameters()) {
      elements += parameter->shape().ElementCount();
    }
    for (const hlo::HloInstruction* output : labels->outputs) {
      elements += output->shape().ElementCount();
    }
    if (elements > kMaxCheckedElements) {
      return ReportError("--check simulates all " + std::to_string(mesh->device_count()) +
                         " devices in the evaluator; this fusion's " + std::to_string(elements) +
                         " parameter and output elements are more than the " +
                         std::to_string(kMaxCheckedElements) + " it takes");
    }
    for (int64_t r = 0; r < shown; ++r) {
      auto checked = split::Simulate(module, *labels, *mesh, (*strategies)[r]);
      if (!checked) return ReportError(checked.error().message);
      checks[r] = *checked;
    }
  }

  if (args.Has("json")) {
    json links = json::array();
    for (const split::MeshAxis& axis : mesh->axes) {
      links.push_back({{"name", axis.name},
                       {"size", axis.size},
                       {"bandwidth_gbps", axis.bandwidth_gbps},
                       {"latency_us", axis.latency_us}});
    }
    json rows = json::array();
    for (int64_t r = 0; r < shown; ++r) {
      json row = split::StrategyToJson((*strategies)[r]);
      row["rank"] = r + 1;
      if (checks[r]) {
        row["check"] = {{"matches", checks[r]->matches},
                        {"devices", checks[r]->devices},
                        {"mismatch", checks[r]->mismatch}};
      }
      rows.push_back(std::move(row));
    }
    std::cout << json{{"mesh", {{"name", mesh->name}, {"device", mesh->device}, {"axes", links}}},
                      {"target", device->target.ToString()},
                      {"device", device->record.Key()},
                      {"kernel_times", measure ? "measured" : "predicted"},
                      {"strategies", count},
                      {"top", rows}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "mesh        " << mesh->name << " " << mesh->ShapeString() << ", "
            << mesh->device_count() << " x " << mesh->device << "; links:";
  for (const split::MeshAxis& axis : mesh->axes) {
    std::cout << " '" << axis.name << "' " << axis.bandwidth_gbps << " GB/s " << axis.latency_us
              << " us;";
  }
  std::cout << "\nkernel      " << device->record.Key() << ", "
            << (measure ? "measured by a host tune (budget " + std::to_string(*budget) + ")"
                        : std::string("predicted by the cost model, nothing measured"))
            << "\nstrategies  " << count << " valid; ranked by total = kernel + comm "
            << "(alpha-beta ring model, no overlap)\n";
  for (int64_t r = 0; r < shown; ++r) PrintStrategy(r + 1, (*strategies)[r], checks[r]);
  return kExitOk;
}

}  // namespace

Subcommand SplitSubcommand() {
  cli::Command command("split", "rank the ways to split a fusion over a device mesh",
                       "FILE --mesh MESH.json [--in-specs SPECS] [--out-specs SPECS] "
                       "[--target T] [--top N] [--measure] [--check] [--json]");
  AddFusionInputFlags(command)
      .Flag("mesh", "MESH.json", "the device mesh: axes, sizes, links (configs/meshes/)")
      .Flag("in-specs", "SPECS",
            "where the parameters lie, one partition spec each, ';'-separated: "
            "\"P('i',None);P('j',None)\"; unlisted parameters lie as the kernel reads them")
      .Flag("out-specs", "SPECS",
            "where the outputs must end up, ';'-separated; unlisted outputs stay as the "
            "kernel leaves them (partial sums resolved by psum or psum_scatter)")
      .Flag("target", "T", "the kernels' target (default: the mesh's device)")
      .Flag("device", "ID", "device description for --target (see `tilesmith space --help`)")
      .Flag("top", "N", "print the N best strategies (default 10; 0: all)")
      .Switch("measure",
              "host target: measure each per-device kernel with a tune instead of predicting")
      .Flag("measure-budget", "N", "configs measured per per-device kernel (default 8)")
      .Flag("db", "PATH|URL",
            "--measure: the results database (default $TILESMITH_DB or "
            "tilesmith.db; or a postgresql:// URL)")
      .Switch("check",
              "simulate every shown strategy on the host (each device's blocks through the "
              "evaluator, collectives applied) and compare with the evaluator on the whole "
              "fusion")
      .Switch("json",
              "print {mesh, target, device, kernel_times, strategies, top: [{rank, in_specs, "
              "param_specs, kernel_out_specs, out_specs, param_blocks, kernel_out_blocks, "
              "partial_axes, collectives: [{op, axis, dim, parameter|output, bytes, us}], "
              "comm_us, kernel_us, kernel_source, kernel_config, total_us, overlapped?, "
              "check?}]}")
      .Epilog(
          "Partition specs use JAX's notation: P('i', None) splits dim 0 over mesh axis 'i'; "
          "P(('j','i'), None) over 'j' then 'i'; P() is replicated. Every strategy's time is "
          "the best config of its per-device fusion plus its collectives' alpha-beta cost; "
          "a collective-matmul overlap, where one applies, is a separate estimate. See "
          "docs/split.md.\n" +
          FusionInputHelp());
  return {std::move(command), &RunSplit};
}

}  // namespace tilesmith::tools
