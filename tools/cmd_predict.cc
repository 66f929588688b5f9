// `tilesmith predict`: the best configs of a fusion's space as a cost model predicts them,
// with nothing measured. The most promising candidates are compiled first, so the model
// sees what the compiler made of them: a cubin's registers and shared memory, or the
// instructions the host code executes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "costmodel/model_selection.h"
#include "db/open_store.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"
#include "tools/tune_support.h"
#include "tuner/device.h"
#include "tuner/layouts.h"
#include "tuner/model_ranking.h"
#include "tuner/space.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

// `read_us=1.2 write_us=0.8 occupancy.blocks_per_sm=8 …`: the breakdown's figures on one
// line (nested objects one level deep, the calibration left to --json).
std::string BreakdownLine(const json& breakdown) {
  std::string line;
  auto add = [&](const std::string& key, const json& value) {
    if (value.is_object() || value.is_array()) return;
    char number[32];
    std::string text;
    if (value.is_number_float()) {
      std::snprintf(number, sizeof(number), "%.4g", value.get<double>());
      text = number;
    } else {
      text = value.is_string() ? value.get<std::string>() : value.dump();
    }
    line += (line.empty() ? "" : " ") + key + "=" + text;
  };
  for (const auto& [key, value] : breakdown.items()) {
    if (key == "model" || key == "calibration") continue;
    if (value.is_object()) {
      for (const auto& [inner, v] : value.items()) add(key + "." + inner, v);
    } else {
      add(key, value);
    }
  }
  return line;
}

int RunPredict(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  auto top = args.GetWholeNumber("top", 5);
  // `--cubins` is the flag's name from before the host compiled too.
  auto compiled =
      args.Has("compile") ? args.GetWholeNumber("compile", 64) : args.GetWholeNumber("cubins", 64);
  for (const auto* flag : {&top, &compiled}) {
    if (!*flag) {
      ReportError(flag->error().message);
      return kExitUsage;
    }
  }
  std::string target = args.Get("target", "host");
  if (target.rfind("ascend:", 0) == 0) {
    return ReportError("Ascend targets are predicted by `tilesmith schedule` (the per-pipe model)");
  }
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  auto device = tuner::ResolveDevice(target, args.Get("device"), tuner::DefaultDevicesDir());
  if (!device) return ReportError(device.error().message);
  auto free = tuner::ParseFreeLayouts(args.Get("free-layouts"), *loaded->module->fusion());
  if (!free) return ReportError(free.error().message);
  auto space = tuner::BuildSpace(*loaded->module, device->info, *free);
  if (!space) return ReportError(space.error().message);

  // The learned model of this device when the database holds one, else the analytic one.
  // Reading only: a database that would need migrating is left alone (the analytic answers).
  std::string db_path = ResolveDbPath(args.Get("db", ""));
  std::unique_ptr<db::Store> store;
  std::string store_note;
  if (db::IsPostgresLocation(db_path) || std::filesystem::exists(db_path)) {
    auto opened = db::OpenStore(db_path, db::StoreAccess::kReadOnly);
    if (opened) {
      store = std::move(*opened);
    } else {
      store_note = opened.error().message;
    }
  } else if (args.Has("db")) {
    return ReportError("no results database at " + db_path);
  }
  costmodel::ModelChoice choice = costmodel::BestModelFor(
      device->target, device->cache_bytes, store.get(), device->record, TILESMITH_COMPILER_VERSION);
  if (!store_note.empty()) choice.description += "; " + store_note;
  // Without a stored model the learned model's analytic one answers (with the stored host
  // calibration), breakdowns unchanged.
  tuner::ModelRanking ranking(*device, std::move(choice.model), {.max_compiled = *compiled});
  std::vector<tuner::CandidatePrediction> predictions = ranking.PredictAll(*space);
  std::vector<int64_t> order(predictions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return predictions[a].microseconds < predictions[b].microseconds;
  });
  int64_t predicted =
      std::count_if(predictions.begin(), predictions.end(), [](const auto& p) { return p.ok; });
  if (predicted == 0) {
    return ReportError(
        "no config of the space could be predicted: " +
        (predictions.empty() ? std::string("the space is empty") : predictions.front().error));
  }
  int64_t default_rank = 0;
  for (size_t r = 0; r < order.size(); ++r) {
    if (order[r] == space->default_index) default_rank = static_cast<int64_t>(r) + 1;
  }
  int64_t shown = std::min<int64_t>(*top == 0 ? predicted : *top, predicted);

  if (args.Has("json")) {
    json rows = json::array();
    for (int64_t r = 0; r < shown; ++r) {
      const tuner::CandidatePrediction& p = predictions[order[r]];
      const tuner::Candidate& candidate = space->candidates[p.candidate];
      rows.push_back({{"rank", r + 1},
                      {"config", candidate.config},
                      {"default", candidate.is_default},
                      {"predicted_us", p.microseconds},
                      {"cubin", p.cubin},
                      {"host_code", p.host_code},
                      {"resources", p.resources},
                      {"breakdown", p.breakdown}});
    }
    json failed = json::array();
    for (const tuner::CandidatePrediction& p : predictions) {
      if (!p.ok)
        failed.push_back({{"config", space->candidates[p.candidate].config}, {"error", p.error}});
    }
    std::cout << json{{"model", ranking.model_name()},
                      {"model_description", choice.description},
                      {"calibration",
                       choice.calibration.empty() ? json(nullptr) : json(choice.calibration)},
                      {"source", "predicted"},
                      {"target", device->target.ToString()},
                      {"device", device->record.Key()},
                      {"emitter", space->emitter},
                      {"space_size", space->total()},
                      {"candidates", space->candidates.size()},
                      {"predicted", predicted},
                      {"default_rank", default_rank},
                      {"top", rows},
                      {"failed", failed}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "model     " << choice.description << " (predicted, nothing measured)\n";
  if (!choice.calibration.empty())
    std::cout << "host      calibration " << choice.calibration << "\n";
  std::cout << "device    " << device->record.Key() << "\n"
            << "emitter   " << space->emitter << "\n"
            << "space     " << space->candidates.size() << " configs, " << predicted
            << " predicted; the default ranks " << default_rank << "\n";
  for (int64_t r = 0; r < shown; ++r) {
    const tuner::CandidatePrediction& p = predictions[order[r]];
    const tuner::Candidate& candidate = space->candidates[p.candidate];
    char time[32];
    std::snprintf(time, sizeof(time), "%10.3f us", p.microseconds);
    std::cout << "#" << r + 1 << "  " << time << "  " << candidate.config.dump()
              << (candidate.is_default ? "  <- default" : "") << "\n"
              << "     " << BreakdownLine(p.breakdown) << "\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand PredictSubcommand() {
  cli::Command command("predict", "predict the best configs of a fusion with a cost model",
                       "FILE --target T [--top N] [--device ID] [--compile N] [--json]");
  AddFusionInputFlags(command)
      .Flag("target", "T",
            "host (analytic host model, calibrated on this machine) or cuda:sm_XX (analytic "
            "GPU model); default host")
      .Flag("db", "PATH|URL",
            "the results database whose learned model answers when it holds one for this "
            "device: a SQLite file or a postgresql:// URL (default: $TILESMITH_DB, else "
            "./tilesmith.db when present)")
      .Flag("device", "ID", "device description (see `tilesmith space --help`)")
      .Flag("free-layouts", "p0,out0,…",
            "parameters (p<N>) and outputs (out<N>) whose layout is part of the config")
      .Flag("top", "N", "print the N best predicted configs (default 5; 0: all)")
      .Flag("compile", "N",
            "compile the N most promising configs and predict them again with what the "
            "compiler made of them: a cubin's registers, shared memory and spills (cuda), or "
            "the instructions the optimised code executes (host); default 64, 0: none")
      .Flag("cubins", "N", "the old name of --compile")
      .Switch("json",
              "print {model, model_description, source, target, device, emitter, space_size, "
              "candidates, "
              "predicted, default_rank, top: [{rank, config, default, predicted_us, cubin, "
              "host_code, resources, breakdown}], failed: [{config, error}]}")
      .Epilog(
          "Nothing is measured: times come from the learned model of the device when the "
          "database holds one trained for this compiler (`tilesmith model train`), else from "
          "the analytic model of the target (see costmodel/README.md); `model` says which "
          "answered. The analytic breakdown gives each term in microseconds and the figures "
          "behind it (bytes, coalescing, occupancy, waves, bank conflicts).\n" +
          FusionInputHelp());
  return {std::move(command), &RunPredict};
}

}  // namespace tilesmith::tools
