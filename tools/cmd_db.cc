// `tilesmith db`: read, move and maintain the results database without the sqlite3 shell.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "db/export.h"
#include "db/open_store.h"
#include "support/atomic_file.h"
#include "support/log.h"
#include "tools/commands.h"
#include "tools/tune_support.h"
#include "tuner/backends/build_stats.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

// --db, else $TILESMITH_DB, else ./tilesmith.db.
std::string DatabasePath(const cli::Args& args) { return ResolveDbPath(args.Get("db", "")); }

std::string Micros(std::optional<double> value) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", *value);
  return text;
}

std::optional<double> Speedup(const db::BestResult& best) {
  if (!best.default_median_us || best.measurement.timing->median_us <= 0) return std::nullopt;
  return *best.default_median_us / best.measurement.timing->median_us;
}

// The target and name of a device key (`cuda:sm_90, NVIDIA H100 80GB HBM3`): enough to tell
// devices apart in a table; --json has the whole key.
// A prediction's cubin registers, `-` for a build without a cubin.
std::string RegistersText(const tuner::BuildStats& stats) {
  return stats.usage.has_cubin() ? std::to_string(stats.usage.registers) : "-";
}

std::string DeviceLabel(const std::string& key) {
  size_t first = key.find(", ");
  size_t second = first == std::string::npos ? first : key.find(", ", first + 2);
  return key.substr(0, second);
}

// Left-aligned columns, two spaces apart; the first row is the header.
void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::cout << line << "\n";
  }
}

json BestToJson(const db::BestResult& best) {
  const db::MeasurementRecord& m = best.measurement;
  std::optional<double> speedup = Speedup(best);
  json out = {
      {"fingerprint", m.key.fingerprint},
      {"kernel", best.kernel_name},
      {"device", m.key.device_key},
      {"compiler_version", m.key.compiler_version},
      {"emitter", m.emitter},
      {"config", m.config},
      {"config_hash", m.config_hash},
      {"median_us", m.timing->median_us},
      {"p20_us", m.timing->p20_us},
      {"p80_us", m.timing->p80_us},
      {"compile_stats", m.compile_stats},
      {"default_median_us", best.default_median_us ? json(*best.default_median_us) : json()},
      {"speedup", speedup ? json(*speedup) : json()},
      {"measured_at", m.measured_at},
      {"uid", m.uid}};
  return out;
}

void PrintBestTable(const std::vector<db::BestResult>& results) {
  std::vector<std::vector<std::string>> rows = {{"fingerprint", "kernel", "device", "compiler",
                                                 "median_us", "default_us", "speedup", "config"}};
  for (const db::BestResult& best : results) {
    const db::MeasurementRecord& m = best.measurement;
    std::optional<double> speedup = Speedup(best);
    char speedup_text[32] = "-";
    if (speedup) std::snprintf(speedup_text, sizeof(speedup_text), "%.2fx", *speedup);
    rows.push_back({m.key.fingerprint.substr(0, 12), best.kernel_name,
                    DeviceLabel(m.key.device_key), m.key.compiler_version,
                    Micros(m.timing->median_us), Micros(best.default_median_us), speedup_text,
                    m.emitter + " " + m.config.dump()});
  }
  PrintTable(rows);
}

// The filter from --device (resolved against the store) and --compiler-version.
Expected<db::ResultFilter> Filter(const cli::Args& args, db::ResultStore& store) {
  db::ResultFilter filter;
  if (args.Has("device")) {
    TS_ASSIGN_OR_RETURN(filter.device_key, db::ResolveDeviceKey(store, args.Get("device")));
  }
  if (args.Has("compiler-version")) filter.compiler_version = args.Get("compiler-version");
  return filter;
}

int Best(const cli::Args& args, db::ResultStore& store, db::ResultFilter filter) {
  if (args.positionals().size() > 2) {
    ReportError("'db best' takes at most one FINGERPRINT");
    return kExitUsage;
  }
  if (args.positionals().size() == 2) {
    auto fingerprint = db::ResolveFingerprint(store, args.positionals()[1]);
    if (!fingerprint) return ReportError(fingerprint.error().message);
    filter.fingerprint = *fingerprint;
  }
  auto results = store.ListBest(filter);
  if (!results) return ReportError(results.error().message);
  if (args.Has("json")) {
    json out = json::array();
    for (const db::BestResult& best : *results) out.push_back(BestToJson(best));
    std::cout << out.dump(2) << "\n";
  } else if (results->empty()) {
    std::cout << "no verified results\n";
  } else {
    PrintBestTable(*results);
  }
  return kExitOk;
}

int List(const cli::Args& args, db::ResultStore& store, const db::ResultFilter& filter) {
  auto kernels = store.ListKernels(filter);
  if (!kernels) return ReportError(kernels.error().message);
  if (args.Has("json")) {
    json out = json::array();
    for (const db::KernelSummary& k : *kernels) {
      out.push_back({{"fingerprint", k.fingerprint},
                     {"name", k.name},
                     {"source_format", k.source_format},
                     {"measurements", k.measurements},
                     {"ok", k.ok},
                     {"failed", k.failed},
                     {"best_median_us", k.best_median_us ? json(*k.best_median_us) : json()}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {
      {"fingerprint", "name", "format", "trials", "ok", "failed", "best_us"}};
  for (const db::KernelSummary& k : *kernels) {
    rows.push_back({k.fingerprint.substr(0, 12), k.name, k.source_format,
                    std::to_string(k.measurements), std::to_string(k.ok), std::to_string(k.failed),
                    Micros(k.best_median_us)});
  }
  PrintTable(rows);
  return kExitOk;
}

int Show(const cli::Args& args, db::Store& store, db::ResultFilter filter) {
  if (args.positionals().size() != 2) {
    ReportError("'db show' needs one FINGERPRINT (or a unique prefix of 6+ hex digits)");
    return kExitUsage;
  }
  auto fingerprint = db::ResolveFingerprint(store, args.positionals()[1]);
  if (!fingerprint) return ReportError(fingerprint.error().message);
  filter.fingerprint = *fingerprint;
  auto kernel = store.GetKernel(*fingerprint);
  auto best = store.ListBest(filter);
  auto measurements = store.Measurements(filter);
  auto predictions = store.Predictions(filter);
  if (!kernel || !*kernel) return ReportError(kernel ? "kernel vanished" : kernel.error().message);
  if (!best) return ReportError(best.error().message);
  if (!measurements) return ReportError(measurements.error().message);
  if (!predictions) return ReportError(predictions.error().message);
  if (args.Has("json")) {
    json out = {{"fingerprint", (*kernel)->fingerprint},
                {"name", (*kernel)->name},
                {"source_format", (*kernel)->source_format},
                {"canonical_text", (*kernel)->canonical_text},
                {"best", json::array()},
                {"measurements", json::array()},
                {"predictions", json::array()}};
    for (const db::BestResult& result : *best) out["best"].push_back(BestToJson(result));
    for (const db::MeasurementRecord& m : *measurements) {
      json row = db::MeasurementToJson(m);
      row["emitter"] = m.emitter;
      row["config"] = m.config;
      out["measurements"].push_back(std::move(row));
    }
    for (const db::PredictionRecord& p : *predictions) {
      out["predictions"].push_back(
          {{"device_key", p.key.device_key},
           {"compiler_version", p.key.compiler_version},
           {"emitter", p.emitter},
           {"config", p.config},
           {"config_hash", p.config_hash},
           {"is_default", p.is_default},
           {"model", p.model},
           {"model_description", p.model_description},
           {"status", db::TrialStatusName(p.status)},
           {"message", p.message},
           {"predicted_us", p.predicted_us ? json(*p.predicted_us) : json(nullptr)},
           {"compile_stats", p.compile_stats},
           {"breakdown", p.breakdown},
           {"predicted_at", p.predicted_at}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "kernel:       " << (*kernel)->name << " (" << (*kernel)->source_format << ")\n"
            << "fingerprint:  " << (*kernel)->fingerprint << "\n"
            << "trials:       " << measurements->size() << "\n\nbest:\n";
  if (best->empty()) std::cout << "  no verified result\n";
  if (!best->empty()) PrintBestTable(*best);
  std::vector<std::vector<std::string>> rows = {
      {"measured_at", "device", "compiler", "status", "median_us", "config", "message"}};
  for (const db::MeasurementRecord& m : *measurements) {
    rows.push_back({m.measured_at, DeviceLabel(m.key.device_key), m.key.compiler_version,
                    std::string(db::TrialStatusName(m.status)) + (m.is_default ? "*" : ""),
                    Micros(m.timing ? std::optional(m.timing->median_us) : std::nullopt),
                    m.config.dump(), m.message});
  }
  std::cout << "\ntrials (* = the default config):\n";
  PrintTable(rows);
  if (!predictions->empty()) {
    std::vector<std::vector<std::string>> predicted = {
        {"predicted_at", "device", "model", "status", "predicted_us", "registers", "config"}};
    for (const db::PredictionRecord& p : *predictions) {
      predicted.push_back({p.predicted_at, DeviceLabel(p.key.device_key), p.model,
                           std::string(db::TrialStatusName(p.status)) + (p.is_default ? "*" : ""),
                           Micros(p.predicted_us),
                           RegistersText(tuner::BuildStats::FromJson(p.compile_stats)),
                           p.config.dump()});
    }
    std::cout << "\npredictions (compiled, not timed; * = the default config):\n";
    PrintTable(predicted);
  }
  return kExitOk;
}

int Stats(const cli::Args& args, db::AdminStore& store, const std::string& path) {
  auto stats = store.Stats();
  if (!stats) return ReportError(stats.error().message);
  if (args.Has("json")) {
    std::cout << json{{"path", path},
                      {"schema_version", stats->schema_version},
                      {"devices", stats->devices},
                      {"kernels", stats->kernels},
                      {"configs", stats->configs},
                      {"measurements", stats->measurements},
                      {"predictions", stats->predictions},
                      {"calibrations", stats->calibrations},
                      {"by_status", stats->by_status},
                      {"compiler_versions", stats->compiler_versions},
                      {"current_compiler_version", TILESMITH_COMPILER_VERSION},
                      {"database_bytes", stats->database_bytes},
                      {"wal_bytes", stats->wal_bytes}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "database:       " << path << " (schema version " << stats->schema_version << ", "
            << stats->database_bytes << " bytes + " << stats->wal_bytes << " bytes of log)\n"
            << "devices:        " << stats->devices << "\n"
            << "kernels:        " << stats->kernels << "\n"
            << "configs:        " << stats->configs << "\n"
            << "measurements:   " << stats->measurements << "\n";
  for (const auto& [status, count] : stats->by_status) {
    std::string label = "  " + status + ":";
    label.append(label.size() < 16 ? 16 - label.size() : 1, ' ');
    std::cout << label << count << "\n";
  }
  std::cout << "predictions:    " << stats->predictions << " (CUDA configs compiled, not timed)\n"
            << "calibrations:   " << stats->calibrations << " (host cost model figures)\n";
  std::cout << "compilers:     ";
  for (const std::string& version : stats->compiler_versions) {
    std::cout << " " << version << (version == TILESMITH_COMPILER_VERSION ? " (current)" : "");
  }
  std::cout << (stats->compiler_versions.empty() ? " none\n" : "\n");
  return kExitOk;
}

int Export(const cli::Args& args, db::ResultStore& store, const db::ResultFilter& filter) {
  if (args.positionals().size() > 2) {
    ReportError("'db export' takes at most one FILE (stdout without)");
    return kExitUsage;
  }
  auto document = db::ExportResults(store, filter);
  if (!document) return ReportError(document.error().message);
  std::string text = document->dump(1) + "\n";
  if (args.positionals().size() == 1) {
    std::cout << text;
    return kExitOk;
  }
  const std::string& file = args.positionals()[1];
  Status written = WriteFileAtomically(file, text);
  if (!written) return ReportError(written.error().message);
  TS_LOG(kInfo) << "exported " << (*document)["measurements"].size() << " measurements of "
                << (*document)["kernels"].size() << " kernels to " << file;
  return kExitOk;
}

int Import(const cli::Args& args, db::ResultStore& store) {
  if (args.positionals().size() != 2) {
    ReportError("'db import' needs one FILE (an export of 'tilesmith db export')");
    return kExitUsage;
  }
  const std::string& file = args.positionals()[1];
  std::ifstream in(file, std::ios::binary);
  if (!in) return ReportError(file + ": cannot read");
  json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return ReportError(file + ": not valid JSON");
  auto summary = db::ImportResults(store, document);
  if (!summary) return ReportError(file + ": " + summary.error().message);
  if (args.Has("json")) {
    std::cout << json{{"devices_added", summary->devices_added},
                      {"kernels_added", summary->kernels_added},
                      {"measurements_added", summary->measurements_added},
                      {"measurements_present", summary->measurements_present},
                      {"verdicts_added", summary->verdicts_added},
                      {"verdicts_present", summary->verdicts_present}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "imported " << summary->measurements_added << " measurements ("
              << summary->measurements_present << " already present), " << summary->kernels_added
              << " kernels, " << summary->devices_added << " devices, " << summary->verdicts_added
              << " verdicts (" << summary->verdicts_present << " already present)\n";
  }
  return kExitOk;
}

int Vacuum(const cli::Args& args, db::AdminStore& store) {
  auto before = store.Stats();
  if (!before) return ReportError(before.error().message);
  Status vacuumed = store.Vacuum();
  if (!vacuumed) return ReportError(vacuumed.error().message);
  auto after = store.Stats();
  if (!after) return ReportError(after.error().message);
  int64_t bytes_before = before->database_bytes + before->wal_bytes;
  int64_t bytes_after = after->database_bytes + after->wal_bytes;
  if (args.Has("json")) {
    std::cout << json{{"bytes_before", bytes_before}, {"bytes_after", bytes_after}}.dump(2) << "\n";
  } else {
    std::cout << "vacuumed: " << bytes_before << " -> " << bytes_after << " bytes\n";
  }
  return kExitOk;
}

int Run(const cli::Args& args) {
  const std::vector<std::string>& positionals = args.positionals();
  static const std::vector<std::string> kActions = {"best",   "list",   "show",  "stats",
                                                    "export", "import", "vacuum"};
  if (positionals.empty() ||
      std::find(kActions.begin(), kActions.end(), positionals[0]) == kActions.end()) {
    ReportError(positionals.empty() ? std::string("'db' needs an action")
                                    : "unknown db action '" + positionals[0] + "'");
    std::cerr << "actions: best, list, show FINGERPRINT, stats, export [FILE], import FILE, "
                 "vacuum (see 'tilesmith db --help')\n";
    return kExitUsage;
  }
  const std::string& action = positionals[0];
  if (positionals.size() > 1 && action != "best" && action != "show" && action != "export" &&
      action != "import") {
    ReportError("'db " + action + "' takes no arguments");
    return kExitUsage;
  }
  std::string path = DatabasePath(args);
  // Only import may create the file; reading a mistyped path should not leave one behind.
  auto store = db::OpenStore(
      path, action == "import" ? db::StoreAccess::kCreate : db::StoreAccess::kReadWrite);
  if (!store) return ReportError(store.error().message);
  TS_LOG(kDebug) << "results database " << db::DescribeLocation(path);
  auto filter = Filter(args, **store);
  if (!filter) return ReportError(filter.error().message);

  if (action == "best") return Best(args, **store, *filter);
  if (action == "list") return List(args, **store, *filter);
  if (action == "show") return Show(args, **store, *filter);
  if (action == "stats") return Stats(args, **store, db::DescribeLocation(path));
  if (action == "export") return Export(args, **store, *filter);
  if (action == "import") return Import(args, **store);
  return Vacuum(args, **store);
}

}  // namespace

Subcommand DbSubcommand() {
  cli::Command command(
      "db", "inspect, export, import and compact the results database",
      "best [FINGERPRINT]|list|show FINGERPRINT|stats|export [FILE]|import FILE|vacuum "
      "[--db PATH|URL] [--json] [--device KEY] [--compiler-version V]");
  command
      .Flag("db", "PATH|URL",
            "the database: a SQLite file or a postgresql:// URL (default: $TILESMITH_DB, else "
            "./tilesmith.db)")
      .Flag("device", "KEY",
            "only this device: its full key, a unique prefix such as cuda:sm_90 or host, or "
            "its name")
      .Flag("compiler-version", "V", "only results of this compiler version")
      .Switch("json", "print JSON instead of tables")
      .Epilog(
          "Actions:\n"
          "  best [FINGERPRINT]  the best verified config per kernel, device and compiler\n"
          "                      version, with the default config's time and the speedup\n"
          "  list                kernels with their trial counts and best time\n"
          "  show FINGERPRINT    one kernel's best results and every trial (a unique prefix\n"
          "                      of 6+ hex digits is enough; --json adds the canonical text)\n"
          "  stats               counts by status, compiler versions, file sizes\n"
          "  export [FILE]       a versioned JSON document (stdout without FILE); --device\n"
          "                      and --compiler-version narrow it\n"
          "  import FILE         merge an export; the same export twice adds nothing; an\n"
          "                      export of another schema version is refused\n"
          "  vacuum              reclaim free space and truncate the write-ahead log\n\n"
          "Only import creates a missing database. The file is plain SQLite: see docs/cli.md's\n"
          "'Results database' section for queries with the sqlite3 shell. A postgresql:// URL\n"
          "as --db opens a shared PostgreSQL database instead; export from one --db and\n"
          "import into another moves results between the two.\n\n"
          "Examples:\n"
          "  tilesmith db best --device cuda:sm_90\n"
          "  tilesmith db show 3fa94c --json\n"
          "  tilesmith db export results.json --compiler-version tilesmith-0.5.0\n"
          "  TILESMITH_DB=/data/tune.db tilesmith db stats");
  return {std::move(command), &Run};
}

}  // namespace tilesmith::tools
