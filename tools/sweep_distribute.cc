#include "tools/sweep_distribute.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/printer.h"
#include "db/open_store.h"
#include "service/agent.h"
#include "support/sha256.h"
#include "tools/commands.h"
#include "tools/sweep_report.h"
#include "tuner/layouts.h"
#include "tuner/space.h"
#include "tuner/strategy.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

constexpr int kExitInterrupted = 130;
constexpr int64_t kAgentsSeenWithinMs = 60'000;

// The device key a unit asks for: exact, or the architecture's prefix of it.
std::string UnitDeviceKey(const tuner::Device& device, bool any_device) {
  return any_device ? db::ArchitectureKeyPrefix(device.record) : device.record.Key();
}

service::UnitTuneSettings UnitSettings(const SweepPair& pair, const std::string& source_format) {
  const SweepSettings& settings = pair.fusion->settings;
  service::UnitTuneSettings unit;
  unit.target = pair.target;
  unit.source_format = source_format;
  unit.compiler_version = TILESMITH_COMPILER_VERSION;
  unit.strategy = settings.strategy;
  unit.budget = settings.budget;
  unit.time_s = settings.time_s;
  unit.seed = settings.seed;
  unit.batch = settings.batch;
  unit.measure.warmup_ms = settings.warmup_ms;
  unit.measure.budget_ms = settings.rep_ms;
  unit.measure.timeout_ms = settings.timeout_ms;
  unit.measure.flush_bytes = settings.flush ? 0 : -1;
  unit.free_layouts = settings.free_layouts;
  return unit;
}

// The units of a sweep: `now` are enqueued at once; `held` (the units concluding a pair
// split into config batches) once every batch is finished. The job id is decided by all.
struct PlannedUnits {
  std::string job_id;
  std::vector<db::WorkUnit> now;
  std::vector<db::WorkUnit> held;
};

// The configs (hashes) a pair's tune measures, in its order, for splitting it.
Expected<std::vector<std::string>> PlannedConfigs(const SweepPair& pair,
                                                  const LoadedFusion& loaded) {
  const SweepSettings& settings = pair.fusion->settings;
  TS_ASSIGN_OR_RETURN(tuner::FreeLayouts free,
                      tuner::ParseFreeLayouts(settings.free_layouts, *loaded.module->fusion()));
  TS_ASSIGN_OR_RETURN(tuner::Space space,
                      tuner::BuildSpace(*loaded.module, pair.device->info, free));
  TS_ASSIGN_OR_RETURN(
      std::vector<int64_t> order,
      tuner::PlannedOrder(settings.strategy, space, settings.budget, settings.seed));
  std::vector<std::string> hashes;
  for (int64_t index : order) hashes.push_back(space.candidates[index].config_hash);
  return hashes;
}

Expected<PlannedUnits> PlanUnits(const SweepFile& sweep, std::span<const SweepPair> pairs,
                                 bool any_device, int64_t unit_configs) {
  PlannedUnits planned;
  json identity = json::array();
  // A pair's concluding unit keeps the pair's index as its sequence; batches come after.
  int64_t next_batch = static_cast<int64_t>(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const SweepPair& pair = pairs[i];
    TS_ASSIGN_OR_RETURN(LoadedFusion loaded, LoadSweepFusion(*pair.fusion));
    TS_ASSIGN_OR_RETURN(std::string fingerprint, hlo::FusionFingerprint(*loaded.module));
    db::WorkUnit unit;
    unit.sequence = static_cast<int64_t>(i);
    unit.device_key = UnitDeviceKey(*pair.device, any_device);
    unit.match_prefix = any_device;
    unit.fingerprint = fingerprint;
    unit.name = pair.fusion->name;
    unit.fusion_text = hlo::PrintModule(*loaded.module);
    service::UnitTuneSettings settings = UnitSettings(pair, loaded.request ? "ascgraph" : "hlo");
    unit.payload = settings.ToJson();
    identity.push_back({fingerprint, unit.device_key, unit.payload});
    std::vector<std::string> configs;
    if (unit_configs > 0) {
      auto plan = PlannedConfigs(pair, loaded);
      if (!plan) {
        return MakeError(plan.error().code, pair.fusion->name + " on " + pair.target +
                                                ": --unit-configs: " + plan.error().message);
      }
      configs = std::move(*plan);
    }
    if (static_cast<int64_t>(configs.size()) <= unit_configs) {
      planned.now.push_back(std::move(unit));
      continue;
    }
    for (size_t first = 0; first < configs.size(); first += unit_configs) {
      size_t last = std::min(configs.size(), first + static_cast<size_t>(unit_configs));
      db::WorkUnit batch = unit;
      batch.sequence = next_batch++;
      batch.name = unit.name + " [configs " + std::to_string(first + 1) + "-" +
                   std::to_string(last) + " of " + std::to_string(configs.size()) + "]";
      settings.configs.assign(configs.begin() + first, configs.begin() + last);
      batch.payload = settings.ToJson();
      identity.push_back({fingerprint, batch.device_key, batch.payload});
      planned.now.push_back(std::move(batch));
    }
    planned.held.push_back(std::move(unit));
  }
  TS_ASSIGN_OR_RETURN(std::string hash,
                      Sha256Hex(json{{"sweep", sweep.name}, {"units", identity}}.dump()));
  planned.job_id = "sweep-" + sweep.name + "-" + hash.substr(0, 16);
  for (db::WorkUnit& unit : planned.now) unit.job_id = planned.job_id;
  for (db::WorkUnit& unit : planned.held) unit.job_id = planned.job_id;
  return planned;
}

std::string CountsLine(const db::UnitCounts& counts, size_t agents) {
  return std::to_string(counts.done + counts.failed) + "/" + std::to_string(counts.total()) +
         " units finished (" + std::to_string(counts.done) + " done, " +
         std::to_string(counts.failed) + " failed), " + std::to_string(counts.leased) +
         " running, " + std::to_string(counts.queued) + " queued, " +
         std::to_string(counts.reclaims) + " leases taken over, " + std::to_string(agents) +
         (agents == 1 ? " agent" : " agents");
}

SweepRow RowOf(const db::WorkUnit& unit, const SweepPair& pair) {
  std::optional<SweepRow> reported;
  if (unit.state == db::UnitState::kDone) reported = SweepRow::FromJson(unit.result);
  SweepRow row = reported.value_or(SweepRow{});
  row.fusion = pair.fusion->name;
  row.path = pair.fusion->path;
  row.target = pair.target;
  if (row.device.empty()) row.device = unit.device_key;
  if (row.fingerprint.empty()) row.fingerprint = unit.fingerprint;
  if (unit.state == db::UnitState::kFailed) {
    row.status = "error";
    row.error = unit.error;
  } else if (unit.state != db::UnitState::kDone) {
    row.status = "not run";
  } else if (!reported) {
    row.status = "error";
    row.error = "the agent's report of this unit is unreadable";
  }
  return row;
}

}  // namespace

Expected<LoadedFusion> LoadSweepFusion(const SweepFusion& fusion) {
  cli::Command command("sweep", "", "");
  AddFusionInputFlags(command);
  std::vector<std::string> flags = fusion.InputFlags();
  std::vector<char*> argv;
  for (std::string& flag : flags) argv.push_back(flag.data());
  TS_ASSIGN_OR_RETURN(cli::Args args, command.Parse(argv));
  return LoadFusion(fusion.path, args);
}

int RunDistributedSweep(const SweepFile& sweep, std::span<const SweepPair> pairs,
                        const DistributeOptions& options) {
  auto planned = PlanUnits(sweep, pairs, options.any_device, options.unit_configs);
  if (!planned) return ReportError(planned.error().message);
  const std::string& job_id = planned->job_id;
  const std::vector<db::WorkUnit>& units = planned->now;
  auto opened = db::OpenStore(options.db_location);
  if (!opened) return ReportError(opened.error().message);
  std::unique_ptr<db::Store> store = std::move(*opened);
  auto added = store->EnqueueUnits(units);
  if (!added) return ReportError(added.error().message);
  bool terminal = isatty(STDERR_FILENO);
  if (!options.quiet) {
    std::cerr << "sweep " << sweep.name << ": job " << job_id << ", " << units.size()
              << " units in " << db::DescribeLocation(options.db_location) << " (" << *added
              << " new, " << units.size() - *added << " already queued)";
    if (!planned->held.empty()) {
      std::cerr << "; " << planned->held.size()
                << " more conclude the split pairs once every batch is finished";
    }
    std::cerr << std::endl;
  }
  bool held_enqueued = planned->held.empty();

  auto started = std::chrono::steady_clock::now();
  std::string last_line;
  bool warned_no_agents = false;
  db::UnitCounts counts;
  size_t agents_seen = 0;
  while (true) {
    auto counted = store->CountUnits(job_id);
    auto agents = store->ListAgents(kAgentsSeenWithinMs);
    if (!counted || !agents) {
      const Error& error = counted ? agents.error() : counted.error();
      if (error.code != ErrorCode::kIo) return ReportError(error.message);
      if (!options.quiet) std::cerr << "\nwaiting for the database: " << error.message << "\n";
    } else {
      counts = *counted;
      agents_seen = agents->size();
      std::string line = "sweep " + sweep.name + ": " + CountsLine(counts, agents_seen);
      if (!options.quiet && line != last_line) {
        std::cerr << (terminal ? "\r\033[K" : "") << line << (terminal ? "" : "\n") << std::flush;
        last_line = line;
      }
      if (counts.finished() && !held_enqueued) {
        // Every batch is in: the concluding units confirm each split pair's winner over
        // what its batches measured (measuring only what a failed batch left out).
        auto concluding = store->EnqueueUnits(planned->held);
        if (!concluding && concluding.error().code != ErrorCode::kIo) {
          return ReportError(concluding.error().message);
        }
        held_enqueued = concluding.has_value();
        std::this_thread::sleep_for(std::chrono::duration<double>(options.poll_s));
        continue;
      }
      if (counts.finished()) break;
      double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (agents_seen == 0 && waited > 5 && !warned_no_agents && !options.quiet) {
        std::cerr << "\nno agent has been seen in the last minute; start one on each host:\n"
                  << "  tilesmith agent --db " << db::DescribeLocation(options.db_location)
                  << " --targets host\n";
        warned_no_agents = true;
      }
    }
    if (options.interrupted && options.interrupted()) {
      std::cerr << "\nstopped following; the agents carry on. Follow the sweep again with\n"
                << "  tilesmith sweep " << sweep.path << " --db "
                << db::DescribeLocation(options.db_location) << " --distribute --resume\n";
      return kExitInterrupted;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(options.poll_s));
  }
  if (!options.quiet && terminal) std::cerr << "\n";

  auto finished = store->ListUnits(job_id);
  if (!finished) return ReportError(finished.error().message);
  std::vector<SweepRow> rows;
  for (const db::WorkUnit& unit : *finished) {
    if (unit.sequence < 0 || unit.sequence >= static_cast<int64_t>(pairs.size())) continue;
    rows.push_back(RowOf(unit, pairs[unit.sequence]));
  }
  if (options.json) {
    json table = TableJson(rows, sweep.name, db::DescribeLocation(options.db_location),
                           TILESMITH_COMPILER_VERSION, false);
    table["job"] = job_id;
    table["units"] = {{"total", counts.total()},
                      {"done", counts.done},
                      {"failed", counts.failed},
                      {"reclaimed_leases", counts.reclaims},
                      {"agents_seen", agents_seen}};
    std::cout << table.dump(2) << "\n";
  } else {
    PrintTable(std::cout, rows);
    std::cout << counts.total() << " units (" << counts.done << " done, " << counts.failed
              << " failed), " << counts.reclaims << " leases taken over\n";
  }
  std::cout << std::flush;
  return counts.failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace tilesmith::tools
