#include "tuner/backends/build_stats.h"

namespace tilesmith::tuner {
namespace {

int64_t Integer(const nlohmann::json& stats, const char* field) {
  auto found = stats.find(field);
  return found != stats.end() && found->is_number_integer() ? found->get<int64_t>() : 0;
}

std::optional<double> Number(const nlohmann::json& stats, const char* field) {
  auto found = stats.find(field);
  if (found == stats.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

}  // namespace

nlohmann::json BuildStats::ToJson() const {
  nlohmann::json stats = nlohmann::json::object();
  if (threads_per_block > 0) {
    stats["threads_per_block"] = threads_per_block;
    stats["blocks"] = blocks;
  }
  costmodel::AddResourceUsageToStats(usage, stats);
  if (compile_ms > 0) stats["compile_ms"] = compile_ms;
  if (worker_compile_ms) stats["worker_compile_ms"] = *worker_compile_ms;
  return stats;
}

BuildStats BuildStats::FromJson(const nlohmann::json& stats) {
  BuildStats build;
  if (!stats.is_object()) return build;
  build.threads_per_block = Integer(stats, "threads_per_block");
  build.blocks = Integer(stats, "blocks");
  build.compile_ms = Number(stats, "compile_ms").value_or(0);
  build.worker_compile_ms = Number(stats, "worker_compile_ms");
  build.usage = costmodel::ResourceUsageFromStats(stats);
  return build;
}

}  // namespace tilesmith::tuner
