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

// The units of the sweep, and the job id their content decides.
Expected<std::pair<std::string, std::vector<db::WorkUnit>>> PlanUnits(
    const SweepFile& sweep, std::span<const SweepPair> pairs, bool any_device) {
  std::vector<db::WorkUnit> units;
  json identity = json::array();
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
    unit.payload = UnitSettings(pair, loaded.request ? "ascgraph" : "hlo").ToJson();
    identity.push_back({fingerprint, unit.device_key, unit.payload});
    units.push_back(std::move(unit));
  }
  TS_ASSIGN_OR_RETURN(std::string hash,
                      Sha256Hex(json{{"sweep", sweep.name}, {"units", identity}}.dump()));
  std::string job_id = "sweep-" + sweep.name + "-" + hash.substr(0, 16);
  for (db::WorkUnit& unit : units) unit.job_id = job_id;
  return std::pair{job_id, std::move(units)};
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
  auto planned = PlanUnits(sweep, pairs, options.any_device);
  if (!planned) return ReportError(planned.error().message);
  auto& [job_id, units] = *planned;
  auto opened = db::OpenStore(options.db_location);
  if (!opened) return ReportError(opened.error().message);
  std::unique_ptr<db::Store> store = std::move(*opened);
  auto added = store->EnqueueUnits(units);
  if (!added) return ReportError(added.error().message);
  bool terminal = isatty(STDERR_FILENO);
  if (!options.quiet) {
    std::cerr << "sweep " << sweep.name << ": job " << job_id << ", " << units.size()
              << " units in " << db::DescribeLocation(options.db_location) << " (" << *added
              << " new, " << units.size() - *added << " already queued)" << std::endl;
  }

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
