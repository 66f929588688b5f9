#include "tools/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace tilesmith::tools {
namespace {

using nlohmann::json;

json Optional(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

std::optional<double> OptionalNumber(const json& object, const char* key) {
  if (!object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<double>();
}

std::string Fixed(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), format, *value);
  return text;
}

}  // namespace

json SweepRow::ToJson() const {
  json row = {{"fusion", fusion},
              {"path", path},
              {"target", target},
              {"device", device},
              {"status", status},
              {"fingerprint", fingerprint},
              {"emitter", emitter},
              {"planned", planned},
              {"measured", measured},
              {"measured_now", measured_now},
              {"failed", failed},
              {"compiled", compiled},
              {"compile_failed", compile_failed},
              {"predicted", predicted},
              {"predicted_us", Optional(predicted_us)},
              {"predicted_config", predicted_config},
              {"model", model},
              {"default_us", Optional(default_us)},
              {"best_us", Optional(best_us)},
              {"speedup", Optional(speedup)},
              {"speedup_low", Optional(speedup_low)},
              {"speedup_high", Optional(speedup_high)},
              {"significant", significant ? json(*significant) : json(nullptr)},
              {"best_config", best_config},
              {"failures", failures},
              {"seconds", seconds}};
  if (!error.empty()) row["error"] = error;
  return row;
}

std::optional<SweepRow> SweepRow::FromJson(const json& object) try {
  if (!object.is_object()) return std::nullopt;
  SweepRow row;
  row.fusion = object.value("fusion", "");
  row.path = object.value("path", "");
  row.target = object.value("target", "");
  row.device = object.value("device", "");
  row.status = object.value("status", "");
  row.error = object.value("error", "");
  row.fingerprint = object.value("fingerprint", "");
  row.emitter = object.value("emitter", "");
  row.planned = object.value("planned", int64_t{0});
  row.measured = object.value("measured", int64_t{0});
  row.measured_now = object.value("measured_now", int64_t{0});
  row.failed = object.value("failed", int64_t{0});
  row.compiled = object.value("compiled", int64_t{0});
  row.compile_failed = object.value("compile_failed", int64_t{0});
  row.predicted = object.value("predicted", int64_t{0});
  row.predicted_us = OptionalNumber(object, "predicted_us");
  row.predicted_config = object.value("predicted_config", json());
  row.model = object.value("model", "");
  row.default_us = OptionalNumber(object, "default_us");
  row.best_us = OptionalNumber(object, "best_us");
  row.speedup = OptionalNumber(object, "speedup");
  row.speedup_low = OptionalNumber(object, "speedup_low");
  row.speedup_high = OptionalNumber(object, "speedup_high");
  if (object.contains("significant") && object["significant"].is_boolean()) {
    row.significant = object["significant"].get<bool>();
  }
  row.best_config = object.value("best_config", json());
  row.failures = object.value("failures", json::object());
  if (!row.failures.is_object()) return std::nullopt;
  for (const auto& [status, failure] : row.failures.items()) {
    if (!failure.is_object() || !failure.value("count", json()).is_number_integer() ||
        !failure.value("example", json()).is_string()) {
      return std::nullopt;
    }
  }
  row.seconds = object.value("seconds", 0.0);
  return row;
} catch (const nlohmann::json::exception&) {
  return std::nullopt;  // a field of another type
}

Geomean GeomeanSpeedup(std::span<const SweepRow> rows) {
  Geomean mean;
  double log_sum = 0;
  for (const SweepRow& row : rows) {
    if (!row.speedup || *row.speedup <= 0) continue;
    log_sum += std::log(*row.speedup);
    ++mean.rows;
  }
  if (mean.rows > 0) mean.speedup = std::exp(log_sum / static_cast<double>(mean.rows));
  return mean;
}

void PrintTable(std::ostream& out, std::span<const SweepRow> rows) {
  std::vector<std::vector<std::string>> cells = {{"fusion", "target", "default_us", "best_us",
                                                  "speedup", "confirmed", "measured", "failed",
                                                  "status"}};
  bool confirmed_any = false;
  for (const SweepRow& row : rows) {
    bool ran = row.status != "not run" && row.status != "error";
    bool timed = ran && row.status != "compiled";
    std::string confirmed = "-";
    if (row.significant) {
      confirmed_any = true;
      confirmed = std::string(*row.significant ? "yes" : "no") + "[" +
                  Fixed(row.speedup_low, "%.2f") + "," + Fixed(row.speedup_high, "%.2f") + "]";
    }
    cells.push_back({row.fusion, row.target, Fixed(row.default_us, "%.3f"),
                     Fixed(row.best_us, "%.3f"), Fixed(row.speedup, "%.2fx"), confirmed,
                     timed ? std::to_string(row.measured) : "-",
                     !ran    ? "-"
                     : timed ? std::to_string(row.failed)
                             : std::to_string(row.compile_failed),
                     row.status});
  }
  std::vector<size_t> widths(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  }
  for (const auto& line : cells) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) {
      // Names and words left-aligned, numbers right-aligned.
      bool left = i < 2 || i + 1 == line.size();
      std::string pad(widths[i] - line[i].size(), ' ');
      text += left ? line[i] + (i + 1 == line.size() ? "" : pad) : pad + line[i];
      if (i + 1 < line.size()) text += "  ";
    }
    out << text << "\n";
  }
  if (confirmed_any) {
    out << "speedup: the paired rounds' verdict where `confirmed` shows one (yes: faster than "
           "the default at its confidence, [interval]); else default_us / best_us\n";
  }
  Geomean mean = GeomeanSpeedup(rows);
  out << "geomean speedup " << Fixed(mean.speedup, "%.3fx") << " over " << mean.rows << " of "
      << rows.size() << " (fusion, target) pairs\n";
  bool header = false;
  for (const SweepRow& row : rows) {
    if (row.error.empty()) continue;
    if (!header) out << "errors:\n";
    header = true;
    out << "  " << row.fusion << " (" << row.target << "): " << row.error << "\n";
  }
  header = false;
  for (const SweepRow& row : rows) {
    if (row.failures.empty()) continue;
    if (!header) out << "failed trials (status: count, an example):\n";
    header = true;
    for (const auto& [status, failure] : row.failures.items()) {
      out << "  " << row.fusion << " (" << row.target << "): " << status << " "
          << failure.value("count", int64_t{0}) << ", " << failure.value("example", "") << "\n";
    }
  }
}

json TableJson(std::span<const SweepRow> rows, const std::string& sweep,
               const std::string& database, const std::string& compiler_version, bool interrupted) {
  json list = json::array();
  int64_t done = 0;
  int64_t errors = 0;
  for (const SweepRow& row : rows) {
    list.push_back(row.ToJson());
    done += row.status == "done" || row.status == "resumed" || row.status == "compiled" ||
            row.status == "failed";
    errors += row.status == "error";
  }
  Geomean mean = GeomeanSpeedup(rows);
  return {{"sweep", sweep},
          {"database", database},
          {"compiler_version", compiler_version},
          {"complete", done == static_cast<int64_t>(rows.size())},
          {"interrupted", interrupted},
          {"pairs", rows.size()},
          {"done", done},
          {"errors", errors},
          {"geomean_speedup", Optional(mean.speedup)},
          {"geomean_rows", mean.rows},
          {"rows", list}};
}

}  // namespace tilesmith::tools
