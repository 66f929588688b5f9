#include "costmodel/training_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::costmodel {
namespace {

// A fusion parsed once for all its configs; the analysis points into the module.
struct ParsedFusion {
  std::unique_ptr<hlo::HloModule> module;
  std::optional<analysis::FusionAnalysis> analysis;
};

Expected<ParsedFusion> ParseStoredFusion(db::ResultStore& store, const std::string& fingerprint) {
  TS_ASSIGN_OR_RETURN(std::optional<db::KernelRecord> kernel, store.GetKernel(fingerprint));
  if (!kernel) return MakeError(ErrorCode::kNotFound, "kernel " + fingerprint + " is not stored");
  ParsedFusion parsed;
  TS_ASSIGN_OR_RETURN(parsed.module,
                      hlo::ParseHloModule(kernel->canonical_text, kernel->name + " (stored)"));
  parsed.analysis.emplace(analysis::AnalyzeFusion(*parsed.module->fusion()));
  return parsed;
}

void Note(TrainingSet& set, const std::string& note) {
  if (set.notes.size() < 8 &&
      std::find(set.notes.begin(), set.notes.end(), note) == set.notes.end()) {
    set.notes.push_back(note);
  }
}

}  // namespace

Expected<TrainingSet> LoadTrainingSet(db::ResultStore& store, const std::string& device_key,
                                      const std::string& compiler_version,
                                      const DeviceFigures& device, const CostModel& analytic) {
  TS_ASSIGN_OR_RETURN(
      std::vector<db::MeasurementRecord> trials,
      store.Measurements({.device_key = device_key, .compiler_version = compiler_version}));
  // The latest verified trial of each (fusion, config): trials come oldest first.
  std::map<std::pair<std::string, std::string>, const db::MeasurementRecord*> latest;
  TrainingSet set;
  for (const db::MeasurementRecord& trial : trials) {
    if (trial.status != db::TrialStatus::kOk || !trial.timing || trial.timing->median_us <= 0) {
      continue;
    }
    ++set.measurements;
    latest[{trial.key.fingerprint, trial.config_hash}] = &trial;
  }
  std::map<std::string, std::optional<ParsedFusion>> fusions;
  for (const auto& [key, trial] : latest) {
    const std::string& fingerprint = key.first;
    auto [entry, inserted] = fusions.try_emplace(fingerprint);
    if (inserted) {
      auto parsed = ParseStoredFusion(store, fingerprint);
      if (parsed) {
        entry->second = std::move(*parsed);
      } else {
        Note(set, parsed.error().message);
      }
    }
    if (!entry->second) {
      ++set.skipped;
      continue;
    }
    if (trial->config.contains("layouts")) {
      ++set.skipped;
      Note(set, "configs with tuned parameter or output layouts are not learned from");
      continue;
    }
    auto kernel = emitters::EmitKernel(*entry->second->analysis, trial->config, device.info);
    if (!kernel) {
      ++set.skipped;
      Note(set, "re-emitting " + trial->config.dump() + ": " + kernel.error().message);
      continue;
    }
    // CUDA trials carry the cubin's resources; the host has none.
    const nlohmann::json& stats = trial->compile_stats;
    ResourceUsage usage = ResourceUsageFromStats(stats);
    auto row = MakeTrainingRow(fingerprint, *kernel, device, usage.known() ? &usage : nullptr,
                               analytic, trial->timing->median_us);
    if (!row) {
      ++set.skipped;
      Note(set, "predicting " + trial->config.dump() + ": " + row.error().message);
      continue;
    }
    set.rows.push_back(std::move(*row));
  }
  set.fusions = FusionCount(set.rows);
  return set;
}

int64_t FusionCount(const std::vector<TrainingRow>& rows) {
  std::set<std::string> distinct;
  for (const TrainingRow& row : rows) distinct.insert(row.fusion);
  return static_cast<int64_t>(distinct.size());
}

std::set<std::string> HeldOutFusions(const std::vector<TrainingRow>& rows, double fraction) {
  std::set<std::string> fusions;
  for (const TrainingRow& row : rows) fusions.insert(row.fusion);
  if (fusions.empty() || fraction <= 0) return {};
  size_t count = std::max<size_t>(
      1, static_cast<size_t>(std::lround(fraction * static_cast<double>(fusions.size()))));
  std::set<std::string> held;
  for (const std::string& fusion : fusions) {
    if (held.size() == count) break;
    held.insert(fusion);
  }
  return held;
}

}  // namespace tilesmith::costmodel
