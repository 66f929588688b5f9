// The work queue's own speed, so a fleet never waits on it: N agents (threads, each with a
// connection of its own, as separate hosts would have) claim and complete empty units
// (no measurements) until the queue is drained. Reports claims + completions per second,
// and the same with one agent beside it, against one database.
//
//   queue_bench --db postgresql://… [--agents 8] [--units 4000] [--json OUT]
//   queue_bench --db FILE.db …       (SQLite, for comparison)
//
// The database should be a fresh one: the bench enqueues its own job of units into it.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_output.h"
#include "db/open_store.h"

namespace {

using nlohmann::json;
using tilesmith::Expected;
namespace db = tilesmith::db;

int Fail(const std::string& message) {
  std::fprintf(stderr, "queue_bench: %s\n", message.c_str());
  return 1;
}

struct Run {
  int agents = 0;
  int64_t units = 0;
  double seconds = 0;
  double operations_per_s() const { return 2.0 * static_cast<double>(units) / seconds; }
};

// Enqueues `units` empty units under `job` and drains them with `agents` threads.
Expected<Run> Drain(const std::string& location, const std::string& job, int agents,
                    int64_t units) {
  const std::string key = "host, queue bench";
  {
    TS_ASSIGN_OR_RETURN(auto store, db::OpenStore(location));
    std::vector<db::WorkUnit> batch;
    for (int64_t i = 0; i < units; ++i) {
      db::WorkUnit unit;
      unit.job_id = job;
      unit.sequence = i;
      unit.device_key = key;
      unit.fingerprint = "bench";
      unit.fusion_text = "HloModule empty";
      batch.push_back(std::move(unit));
      if (batch.size() == 500 || i + 1 == units) {
        TS_ASSIGN_OR_RETURN(int64_t added, store->EnqueueUnits(batch));
        (void)added;
        batch.clear();
      }
    }
  }
  std::vector<std::unique_ptr<db::Store>> stores;
  for (int i = 0; i < agents; ++i) {
    TS_ASSIGN_OR_RETURN(auto store, db::OpenStore(location));
    stores.push_back(std::move(store));
  }
  std::atomic<int64_t> completed = 0;
  std::atomic<bool> failed = false;
  std::string error;
  std::mutex error_mutex;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < agents; ++i) {
    threads.emplace_back([&, i] {
      std::string owner = "bench-agent-" + std::to_string(i);
      std::vector<std::string> keys = {key};
      while (!failed) {
        auto unit = stores[i]->ClaimUnit(owner, keys, 60'000);
        tilesmith::Status done = tilesmith::OkStatus();
        if (unit && unit->has_value()) {
          done = stores[i]->CompleteUnit({(*unit)->id, (*unit)->attempt, owner}, {}, {});
        }
        if (!unit || !done) {
          std::lock_guard lock(error_mutex);
          error = unit ? done.error().message : unit.error().message;
          failed = true;
          return;
        }
        if (!unit->has_value()) return;
        ++completed;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed) return tilesmith::MakeError(tilesmith::ErrorCode::kInternal, error);
  if (completed != units) {
    return tilesmith::MakeError(
        tilesmith::ErrorCode::kInternal,
        std::to_string(completed.load()) + " of " + std::to_string(units) + " units completed");
  }
  return Run{agents, units, seconds};
}

}  // namespace

int main(int argc, char** argv) {
  std::string location;
  int agents = 8;
  int64_t units = 4000;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--db" && i + 1 < argc) {
      location = argv[++i];
    } else if (arg == "--agents" && i + 1 < argc) {
      agents = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--units" && i + 1 < argc) {
      units = std::max<int64_t>(1, std::stoll(argv[++i]));
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      return Fail("usage: queue_bench --db URL|FILE [--agents 8] [--units 4000] [--json OUT]");
    }
  }
  if (location.empty()) return Fail("--db is required (a fresh postgresql:// database)");
  std::string stamp = std::to_string(std::chrono::system_clock::now().time_since_epoch() /
                                     std::chrono::milliseconds(1));
  auto one = Drain(location, "queue-bench-1-" + stamp, 1, units / 4);
  if (!one) return Fail(one.error().message);
  auto many = Drain(location, "queue-bench-" + std::to_string(agents) + "-" + stamp, agents, units);
  if (!many) return Fail(many.error().message);
  std::printf("database: %s\n", db::DescribeLocation(location).c_str());
  for (const Run& run : {*one, *many}) {
    std::printf(
        "%d agent%s: %lld units claimed and completed in %.2f s: %.0f operations/s "
        "(claims + completions), %.0f units/s\n",
        run.agents, run.agents == 1 ? " " : "s", static_cast<long long>(run.units), run.seconds,
        run.operations_per_s(), run.operations_per_s() / 2);
  }
  std::printf("%d agents / 1 agent: %.2fx\n", agents,
              many->operations_per_s() / one->operations_per_s());
  if (!json_path.empty()) {
    json figures{{"database", db::DescribeLocation(location)},
                 {"agents", agents},
                 {"units", units},
                 {"seconds", many->seconds},
                 {"operations_per_s", many->operations_per_s()},
                 {"one_agent_operations_per_s", one->operations_per_s()}};
    tilesmith::bench::WriteOutput(json_path, figures.dump(2) + "\n", "figures");
  }
  return 0;
}
