// `tilesmith model train|eval`: the learned cost model of a device, trained from the
// verified measurements in the results database and stored beside them; `eval` compares
// it with the analytic model on fusions it was not trained on.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "costmodel/host_model.h"
#include "costmodel/learned_model.h"
#include "costmodel/model_eval.h"
#include "costmodel/model_selection.h"
#include "costmodel/training_data.h"
#include "db/open_store.h"
#include "tools/commands.h"
#include "tools/tune_support.h"
#include "tuner/cuda_driver.h"
#include "tuner/device.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

Expected<double> FractionFlag(const cli::Args& args, const std::string& flag, double fallback) {
  if (!args.Has(flag)) return fallback;
  const std::string text = args.Get(flag);
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size() && value > 0 && value < 1) return value;
  } catch (const std::exception&) {
  }
  return InvalidArgument("--" + flag + " expects a fraction between 0 and 1, not '" + text + "'");
}

Expected<costmodel::LearnedModelOptions> ModelOptions(const cli::Args& args) {
  costmodel::LearnedModelOptions options;
  TS_ASSIGN_OR_RETURN(options.objective,
                      costmodel::ParseObjective(args.Get("objective", "log-time")));
  TS_ASSIGN_OR_RETURN(options.min_rows, args.GetWholeNumber("min-rows", options.min_rows));
  TS_ASSIGN_OR_RETURN(options.min_fusions, args.GetWholeNumber("min-fusions", options.min_fusions));
  return options;
}

// Everything both actions need: the database, the device, the rows learned from.
struct Inputs {
  std::string db_path;
  std::unique_ptr<db::Store> store;
  tuner::Device device;
  /// Whose measurements `set` holds: `device`'s, or where it has none, the nearest measured
  /// device of the same GPU architecture (`borrowed`).
  std::string measured_key;
  bool borrowed = false;
  std::string compiler_version;
  costmodel::TrainingSet set;
  costmodel::HostCalibration host;  ///< The stored calibration (host targets).

  // The analytic model under the learned one, predicting from the stored host figures so the
  // model trains on the analytic times that tunes and predictions will use.
  std::unique_ptr<costmodel::CostModel> Analytic() const {
    return costmodel::AnalyticModelFor(device.target, host);
  }
};

Expected<Inputs> LoadInputs(const cli::Args& args) {
  Inputs inputs;
  inputs.db_path = ResolveDbPath(args.Get("db", ""));
  if (!db::IsPostgresLocation(inputs.db_path) && !std::filesystem::exists(inputs.db_path)) {
    return MakeError(ErrorCode::kNotFound, "no results database at " + inputs.db_path +
                                               " (tune something first, or pass --db PATH)");
  }
  TS_ASSIGN_OR_RETURN(inputs.store, db::OpenStore(inputs.db_path, db::StoreAccess::kReadWrite));
  std::string target = args.Get("target", "host");
  if (target.rfind("ascend:", 0) == 0) {
    return InvalidArgument("Ascend targets use the per-pipe model (`tilesmith schedule`)");
  }
  TS_ASSIGN_OR_RETURN(target, tuner::GpuTargetOf(target));  // cuda:0: this machine's GPU
  TS_ASSIGN_OR_RETURN(inputs.device,
                      tuner::ResolveDevice(target, args.Get("device"), tuner::DefaultDevicesDir()));
  inputs.compiler_version = args.Get("compiler-version", TILESMITH_COMPILER_VERSION);
  inputs.host = costmodel::HostCalibrationFor(inputs.store.get(), inputs.device.record.Key(),
                                              inputs.device.cache_bytes)
                    .calibration;
  std::unique_ptr<costmodel::CostModel> analytic = inputs.Analytic();
  costmodel::DeviceFigures figures{inputs.device.info, inputs.device.cache_bytes};
  std::string key = inputs.device.record.Key();
  inputs.measured_key = key;
  TS_ASSIGN_OR_RETURN(
      inputs.set,
      costmodel::LoadTrainingSet(*inputs.store, key, inputs.compiler_version, figures, *analytic));
  if (inputs.set.rows.empty()) {
    // Timings brought back from a GPU host carry its driver in the key; this machine, without
    // that driver, names the same GPU differently.
    TS_ASSIGN_OR_RETURN(std::vector<db::DeviceRecord> nearest,
                        costmodel::SameArchitectureDevices(*inputs.store, inputs.device.record));
    for (const db::DeviceRecord& other : nearest) {
      TS_ASSIGN_OR_RETURN(costmodel::TrainingSet set,
                          costmodel::LoadTrainingSet(*inputs.store, other.Key(),
                                                     inputs.compiler_version, figures, *analytic));
      if (set.rows.empty()) continue;
      std::cerr << "note: no measurements for '" << key
                << "'; learning from the nearest measured device of the same architecture, '"
                << other.Key() << "'\n";
      inputs.set = std::move(set);
      inputs.measured_key = other.Key();
      inputs.borrowed = true;
      break;
    }
  }
  for (const std::string& note : inputs.set.notes) std::cerr << "note: " << note << "\n";
  if (inputs.set.rows.empty()) {
    std::string known;
    if (auto devices = inputs.store->ListDevices()) {
      for (const db::DeviceRecord& device : *devices) known += "\n  " + device.Key();
    }
    return MakeError(ErrorCode::kNotFound,
                     "no verified measurements for device '" + key + "' under compiler " +
                         inputs.compiler_version + " in " + db::DescribeLocation(inputs.db_path) +
                         (known.empty() ? std::string(" (it holds no devices)")
                                        : "; devices it holds:" + known) +
                         "\nrun `tilesmith tune FILE --target " + target + "` first");
  }
  return inputs;
}

std::string Fixed(double value, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

int RunTrain(const cli::Args& args, Inputs& inputs, const costmodel::LearnedModelOptions& options) {
  auto start = std::chrono::steady_clock::now();
  costmodel::LearnedModel model(inputs.Analytic(), options);
  if (auto trained = model.Retrain(inputs.set.rows); !trained) {
    return ReportError(trained.error().message);
  }
  if (!model.trained()) {
    return ReportError("too little data to train: " + model.Describe() + " answers; " +
                       std::to_string(inputs.set.rows.size()) + " configs measured over " +
                       std::to_string(inputs.set.fusions) +
                       " fusions (--min-rows, --min-fusions lower the bar)");
  }
  // Where the trees answer: per emitter, the model that ranked held-out fusions better.
  auto select_folds = args.GetWholeNumber("select-folds", 5);
  if (!select_folds) return ReportError(select_folds.error().message);
  std::string selection_note;
  if (*select_folds > 0) {
    int folds = static_cast<int>(std::min<int64_t>(*select_folds, inputs.set.fusions));
    auto selection = costmodel::DecideSelection(
        inputs.set.rows, folds, [&] { return inputs.Analytic(); }, options);
    if (selection) {
      model.set_selection(*selection);
    } else {
      selection_note = "not decided (" + selection.error().message + "): learned everywhere";
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The model belongs to the device that was measured.
  auto record = model.ToRecord(inputs.measured_key, inputs.compiler_version);
  if (!record) return ReportError(record.error().message);
  record->meta["training_seconds"] = seconds;
  record->meta["skipped"] = inputs.set.skipped;
  auto id = inputs.store->PutModel(*record);
  if (!id) return ReportError(id.error().message);
  // In-sample fit, a sanity check (eval gives the honest, held-out figure).
  auto fitted = model.PredictRows(inputs.set.rows);
  if (!fitted) return ReportError(fitted.error().message);
  costmodel::ModelScores fit =
      costmodel::Score(costmodel::kLearnedModelName, inputs.set.rows, *fitted);
  if (args.Has("json")) {
    std::cout << json{{"model", costmodel::kLearnedModelName},
                      {"id", *id},
                      {"device", record->device_key},
                      {"compiler_version", record->compiler_version},
                      {"feature_schema", record->feature_schema},
                      {"rows", record->training_rows},
                      {"fusions", record->fusions},
                      {"skipped", inputs.set.skipped},
                      {"trees", record->meta["trees"]},
                      {"objective", record->meta["objective"]},
                      {"training_seconds", seconds},
                      {"training_spearman", fit.spearman},
                      {"selection", record->meta["selection"]},
                      {"model_bytes", record->data.size()}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "trained   " << model.Describe() << "\n"
            << "device    " << record->device_key << "\n"
            << "stored    model " << *id << " in " << db::DescribeLocation(inputs.db_path) << " ("
            << record->data.size() << " bytes, feature schema " << record->feature_schema
            << ", compiler " << record->compiler_version << ")\n"
            << "selection "
            << (selection_note.empty() ? model.selection().Describe() : selection_note) << "\n"
            << "time      " << Fixed(seconds, 2) << " s; in-sample Spearman " << Fixed(fit.spearman)
            << " (held-out: `tilesmith model eval`)\n";
  if (inputs.set.skipped > 0) {
    std::cout << "skipped   " << inputs.set.skipped << " configs (see the notes above)\n";
  }
  return kExitOk;
}

void PrintScores(const costmodel::ModelScores& scores) {
  std::printf("%-18s %9s %9s %12s %12s %12s\n", scores.model.c_str(),
              Fixed(scores.spearman).c_str(), Fixed(scores.kendall).c_str(),
              (Fixed(100 * scores.top1_regret, 1) + "%").c_str(),
              (Fixed(100 * scores.median_top1_regret, 1) + "%").c_str(),
              (Fixed(100 * scores.top5_regret, 1) + "%").c_str());
}

int RunEval(const cli::Args& args, Inputs& inputs, const costmodel::LearnedModelOptions& options) {
  auto holdout = FractionFlag(args, "holdout", 0.3);
  if (!holdout) {
    ReportError(holdout.error().message);
    return kExitUsage;
  }
  if (inputs.set.fusions < 2) {
    return ReportError("held-out evaluation needs measurements of at least 2 fusions; " +
                       db::DescribeLocation(inputs.db_path) + " has " +
                       std::to_string(inputs.set.fusions));
  }
  auto folds = args.GetWholeNumber("folds", 0);
  if (!folds) {
    ReportError(folds.error().message);
    return kExitUsage;
  }
  auto evaluation = *folds > 0 ? costmodel::CrossValidate(
                                     inputs.set.rows, static_cast<int>(*folds),
                                     [&] { return inputs.Analytic(); }, options)
                               : costmodel::EvaluateHeldOut(inputs.set.rows, *holdout,
                                                            inputs.Analytic(), options);
  if (!evaluation) return ReportError(evaluation.error().message);
  if (args.Has("within-fusion")) {
    std::vector<std::string> held_out;
    for (const costmodel::FusionScore& f : evaluation->analytic.fusions)
      held_out.push_back(f.fusion);
    auto within =
        costmodel::ScoreWithinFusion(inputs.set.rows, held_out, [&] { return inputs.Analytic(); });
    if (!within) return ReportError(within.error().message);
    evaluation->within_fusion = std::move(*within);
  }
  if (args.Has("json")) {
    json out = evaluation->ToJson();
    out["device"] = inputs.measured_key;
    if (inputs.borrowed) out["requested_device"] = inputs.device.record.Key();
    out["compiler_version"] = inputs.compiler_version;
    out["holdout"] = *folds > 0 ? json(nullptr) : json(*holdout);
    out["folds"] = *folds;
    out["objective"] = costmodel::ObjectiveName(options.objective);
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "device    " << inputs.measured_key << "\n"
            << "train     " << evaluation->train_rows << " configs of " << evaluation->train_fusions
            << " fusions -> " << evaluation->learned_description << "\n"
            << "held out  " << evaluation->heldout_rows << " configs of "
            << evaluation->heldout_fusions << " fusions ("
            << (*folds > 0 ? std::to_string(*folds) +
                                 "-fold cross-validation by fingerprint; "
                                 "train figures per fold"
                           : std::string("by fingerprint"))
            << ")\n\n";
  std::printf("%-18s %9s %9s %12s %12s %12s\n", "model", "spearman", "kendall", "top-1 regret",
              "(median)", "top-5 regret");
  PrintScores(evaluation->analytic);
  PrintScores(evaluation->learned);
  if (evaluation->within_fusion) PrintScores(*evaluation->within_fusion);
  if (evaluation->analytic_estimated && evaluation->learned_estimated) {
    // What `/v1/query` ranks by: the configs as seen before anything is compiled.
    std::cout << "\nuncompiled (no cubin, no counted code; as /v1/query ranks):\n";
    PrintScores(*evaluation->analytic_estimated);
    PrintScores(*evaluation->learned_estimated);
  }
  if (evaluation->within_fusion) {
    std::cout << "\nwithin each fusion: trees fitted to each held-out fusion's own other "
                 "configs (4 folds); not a model, the most the features tell about a fusion\n";
  }
  if (!evaluation->learned_trained) {
    std::cout << "\nThe learned model fell back to the analytic one: too little training data.\n";
  }
  return kExitOk;
}

// Measures the host model's figures afresh and stores them as the machine's calibration.
int RunCalibrate(const cli::Args& args) {
  std::string target = args.Get("target", "host");
  if (target != "host") {
    ReportError("calibrate measures this machine for the host model; --target must be host");
    return kExitUsage;
  }
  auto device = tuner::ResolveDevice(target, args.Get("device"), tuner::DefaultDevicesDir());
  if (!device) return ReportError(device.error().message);
  std::string db_path = ResolveDbPath(args.Get("db", ""));
  auto store = db::OpenStore(db_path);
  if (!store) return ReportError(store.error().message);
  std::string key = device->record.Key();
  auto previous = (*store)->LatestCalibration(key);
  if (!previous) return ReportError(previous.error().message);
  costmodel::HostCalibration calibration = costmodel::MeasureHostCalibration(device->cache_bytes);
  auto id = (*store)->PutCalibration({0, key, calibration.ToJson(), ""});
  if (!id) return ReportError(id.error().message);
  json figures = calibration.ToJson();
  if (args.Has("json")) {
    std::cout << json{{"id", *id},
                      {"device", key},
                      {"figures", figures},
                      {"previous", previous->has_value() ? (*previous)->figures : json(nullptr)}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "device    " << key << "\n"
            << "stored    calibration " << *id << " in " << db::DescribeLocation(db_path)
            << " (measured in " << Fixed(calibration.measure_ms, 0) << " ms)\n";
  std::printf("%-20s %12s %12s\n", "figure", "now", "before");
  for (const char* name :
       {"memory_gbs", "thread_memory_gbs", "cache_gbs", "thread_gflops", "dispatch_us"}) {
    std::string before = previous->has_value() && (*previous)->figures.contains(name) &&
                                 (*previous)->figures[name].is_number()
                             ? Fixed((*previous)->figures[name].get<double>(), 2)
                             : "-";
    std::printf("%-20s %12s %12s\n", name, Fixed(figures[name].get<double>(), 2).c_str(),
                before.c_str());
  }
  return kExitOk;
}

int Run(const cli::Args& args) {
  const std::vector<std::string>& positionals = args.positionals();
  if (positionals.size() != 1 ||
      (positionals[0] != "train" && positionals[0] != "eval" && positionals[0] != "calibrate")) {
    ReportError(positionals.empty()
                    ? std::string("'model' needs an action: train, eval or calibrate")
                    : "unknown model action '" + positionals[0] +
                          "' (train, eval, calibrate; see 'tilesmith model --help')");
    return kExitUsage;
  }
  if (positionals[0] == "calibrate") return RunCalibrate(args);
  auto options = ModelOptions(args);
  if (!options) {
    ReportError(options.error().message);
    return kExitUsage;
  }
  auto inputs = LoadInputs(args);
  if (!inputs) return ReportError(inputs.error().message);
  if (positionals[0] == "train") return RunTrain(args, *inputs, *options);
  return RunEval(args, *inputs, *options);
}

}  // namespace

Subcommand ModelSubcommand() {
  cli::Command command(
      "model", "train and evaluate the learned cost model; calibrate the host model",
      "train|eval|calibrate [--db PATH] [--target T] [--device ID] [--holdout F | --folds K] "
      "[--within-fusion] [--objective O] [--json]");
  command
      .Flag("db", "PATH|URL",
            "the database: a SQLite file or a postgresql:// URL (default: $TILESMITH_DB, else "
            "./tilesmith.db)")
      .Flag("target", "T",
            "host (default), cuda:sm_XX or cuda:0 (this machine's GPU): whose measurements to "
            "learn from; a GPU with none learns from the nearest measured GPU of its "
            "architecture (the same card timed under another driver, say), and says so")
      .Flag("device", "ID", "device description (see `tilesmith space --help`)")
      .Flag("compiler-version", "V",
            "learn from measurements of this compiler version (default: this tilesmith's)")
      .Flag("holdout", "F", "eval: the share of fusions held out (default 0.3)")
      .Flag("folds", "K",
            "eval: K-fold cross-validation over fusions instead (every fusion scored once, by "
            "a model trained without it)")
      .Switch("within-fusion",
              "eval: also fit trees to each held-out fusion's own other configs (4 folds), "
              "the features' ceiling: what a model could know of a fusion after timing most "
              "of it")
      .Flag("objective", "O",
            "log-time (default: regression on log time around the analytic prediction) or "
            "pairwise (rank:pairwise within each fusion)")
      .Flag("min-rows", "N", "train no model below N measured configs (default 200)")
      .Flag("min-fusions", "N", "train no model below N fusions (default 5)")
      .Flag("select-folds", "K",
            "train: decide where the learned model answers by K-fold cross-validation over "
            "fusions (default 5; 0: everywhere): per emitter, the model with the better "
            "held-out Spearman answers, and the rule is stored with the model")
      .Switch("json", "print JSON")
      .Epilog(
          "Actions:\n"
          "  train  fit gradient-boosted trees (XGBoost) to every verified measurement of the\n"
          "         device under the compiler version, and store the model in the database;\n"
          "         `tilesmith predict` then answers with it (model `learned-xgboost`). It\n"
          "         answers only for emitters where it ranked fusions held out of its\n"
          "         training (--select-folds) better than the analytic model; elsewhere the\n"
          "         analytic model answers. Generated fusions train it like any other:\n"
          "         `tilesmith generate --seed S --count N --out DIR`, tune or sweep them\n"
          "         into the database, then train\n"
          "  eval   hold out a share of the fusions (the same ones every time: chosen by\n"
          "         fingerprint), train on the rest, and report for the analytic and the\n"
          "         learned model side by side: Spearman and Kendall rank correlation of\n"
          "         predicted and measured times, and top-1 / top-5 regret (how much slower\n"
          "         the best of the model's first 1 / 5 picks is than the measured best).\n"
          "         With --within-fusion, a third row: trees fitted to each held-out\n"
          "         fusion's own other configs, the most the features tell (where the\n"
          "         models trail it, their training transfers badly; where it trails a\n"
          "         second timing of the same configs, the features miss something).\n"
          "         Nothing is stored.\n"
          "  calibrate  measure this machine's copy bandwidth (DRAM, one thread, cache), FMA\n"
          "         throughput and pool dispatch for the analytic host model, and store them\n"
          "         as the machine's calibration. The first tune, predict or train on a\n"
          "         database measures and stores one by itself; every later process reuses\n"
          "         the newest, so predictions do not move with the load of the moment.\n"
          "         Rerun it on a quiet machine after a hardware or kernel change.\n\n"
          "Below --min-rows measured configs or --min-fusions fusions no model is trained and\n"
          "the analytic model keeps answering. The model learns a correction to the analytic\n"
          "model's time from the features of each candidate's Kernel IR (see\n"
          "costmodel/README.md).\n\n"
          "Examples:\n"
          "  tilesmith sweep configs/sweeps/examples.json && tilesmith model train\n"
          "  tilesmith model eval --holdout 0.25 --json");
  return {std::move(command), &Run};
}

}  // namespace tilesmith::tools
