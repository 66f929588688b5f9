#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/model.h"
#include "report/svg.h"

namespace tilesmith::report {
namespace {

using nlohmann::json;

constexpr const char* kMicros = "\u00b5s";

constexpr const char* kStyle = R"css(
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 0 auto; max-width: 1100px;
  padding: 16px 24px 48px; color: #1d2329; background: #fff; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 28px 0 8px; border-bottom: 2px solid #d8dee4; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
code, .mono { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
.meta { color: #57606a; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0 12px; }
th, td { border: 1px solid #d8dee4; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
dl.facts { display: grid; grid-template-columns: 150px 1fr; gap: 2px 12px; font-size: 13px; }
dl.facts dt { color: #57606a; } dl.facts dd { margin: 0; word-break: break-all; }
.note { color: #57606a; font-size: 13px; font-style: italic; }
section.fusion { border-top: 1px solid #d8dee4; margin-top: 24px; }
svg.chart { width: 100%; height: auto; display: block; margin: 6px 0 14px; background: #fff; }
.chart-title { font-size: 15px; font-weight: bold; text-anchor: middle; fill: #1d2329; }
.axis-label { font-size: 13px; fill: #1d2329; }
.tick { font-size: 11px; fill: #424a53; }
.tick-y { text-anchor: end; }
.axis { stroke: #1d2329; stroke-width: 1; }
.grid { stroke: #e6e9ec; stroke-width: 1; }
.reference { stroke: #6e7781; stroke-width: 1.5; stroke-dasharray: 6 4; }
.whisker { stroke: #1d2329; stroke-width: 1; opacity: 0.6; }
rect.bar { fill: #4c78a8; } rect.bar:hover { opacity: 0.75; }
rect.bar.default { fill: #f58518; } rect.bar.best { fill: #2ca02c; }
rect.bar.default.best { fill: #2ca02c; stroke: #f58518; stroke-width: 3; }
rect.bar.slower { fill: #b279a2; }
circle.trial { fill: #4c78a8; opacity: 0.75; } circle.trial.default { fill: #f58518; opacity: 1; }
circle.trial.best { fill: #2ca02c; opacity: 1; }
.best-line { fill: none; stroke: #2ca02c; stroke-width: 2.5; }
path.fail { fill: none; stroke-width: 2.5; }
.cell { stroke: #fff; stroke-width: 1; } .cell.empty { fill: #f3f5f7; }
.cell-text { font-size: 11px; fill: #1d2329; pointer-events: none; }
.swatch { stroke: none; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px;
  vertical-align: -1px; }
.fail-compile { fill: #8e44ad; stroke: #8e44ad; color: #8e44ad; }
.fail-launch { fill: #e67e22; stroke: #e67e22; color: #e67e22; }
.fail-timeout { fill: #b8860b; stroke: #b8860b; color: #b8860b; }
.fail-crash { fill: #c0392b; stroke: #c0392b; color: #c0392b; }
.fail-wrong_result { fill: #e91e63; stroke: #e91e63; color: #e91e63; }
.fail-constraint { fill: #7f8c8d; stroke: #7f8c8d; color: #7f8c8d; }
.fail-red_zone { fill: #d35400; stroke: #d35400; color: #d35400; }
text.fail-compile, text.fail-launch, text.fail-timeout, text.fail-crash, text.fail-wrong_result,
text.fail-constraint, text.fail-red_zone { stroke: none; font-weight: bold; }
td.status { font-weight: bold; }
)css";

std::string Micros(std::optional<double> value) {
  return value ? Fixed(*value) + " " + kMicros : std::string("-");
}

std::string Speedup(std::optional<double> value) {
  return value ? Fixed(*value, 2) + "x" : std::string("-");
}

// `cuda:sm_90, NVIDIA H100 80GB HBM3, …` -> `cuda:sm_90, NVIDIA H100 80GB HBM3`.
std::string DeviceLabel(const std::string& key) {
  size_t first = key.find(", ");
  size_t second = first == std::string::npos ? first : key.find(", ", first + 2);
  return key.substr(0, second);
}

std::string Anchor(const KeyTrials& entry, size_t index) {
  return "f-" + entry.key.fingerprint + "-" + std::to_string(index);
}

std::string FusionName(const KeyTrials& entry) {
  return entry.kernel_name.empty() ? entry.key.fingerprint.substr(0, 12) : entry.kernel_name;
}

bool Verified(const db::MeasurementRecord& m) {
  return m.status == db::TrialStatus::kOk && m.timing.has_value();
}

// A config value as a label: strings without quotes, whole numbers without ".0".
std::string ValueText(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float() && value.get<double>() == std::floor(value.get<double>()) &&
      std::abs(value.get<double>()) < 1e15) {
    return std::to_string(static_cast<int64_t>(value.get<double>()));
  }
  return value.dump();
}

// The config's varying fields as a bar label: `name=value` for one, `v1/v2/…` for several (the
// axis names them), else the whole config.
std::string ShortConfig(const json& config, const std::vector<std::string>& varying) {
  if (varying.empty() || !config.is_object()) return config.dump();
  std::string out;
  for (const std::string& name : varying) {
    auto field = config.find(name);
    std::string value = field == config.end() ? "-" : ValueText(*field);
    if (varying.size() == 1) return name + "=" + value;
    out += (out.empty() ? "" : "/") + value;
  }
  return out;
}

std::string Joined(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : separator) + name;
  return out;
}

std::string TimingText(const db::Timing& t) {
  return "median " + Fixed(t.median_us) + " " + kMicros + " (p20 " + Fixed(t.p20_us) + ", p80 " +
         Fixed(t.p80_us) + ", min " + Fixed(t.min_us) + ")";
}

std::string Cell(const std::string& text, bool number = false) {
  return std::string(number ? "<td class=\"num\">" : "<td>") + Escape(text) + "</td>";
}

std::string SummarySection(const std::vector<KeyTrials>& keys) {
  std::string out = "<section id=\"summary\">\n<h2>Summary</h2>\n";
  if (keys.empty()) return out + "<p class=\"note\">No measurements match.</p>\n</section>\n";
  out +=
      "<table class=\"summary\">\n<tr><th>fusion</th><th>fingerprint</th><th>device</th>"
      "<th>compiler</th><th>emitter</th><th>configs measured</th><th>failures</th>"
      "<th>default time</th><th>best time</th><th>speedup</th></tr>\n";
  BarChart chart;
  chart.title = "Speedup of the best config over the default, per fusion";
  chart.x_label = "fusion (sorted by speedup)";
  chart.y_label = "speedup (default time / best time)";
  chart.reference = 1.0;
  chart.reference_label = "1.0x = the default";
  std::set<std::string> devices;
  for (const KeyTrials& entry : keys) devices.insert(entry.key.device_key);
  std::vector<std::pair<double, Bar>> bars;
  double log_sum = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const KeyTrials& entry = keys[i];
    std::optional<double> speedup = entry.Speedup();
    out += "<tr><td><a href=\"#" + Anchor(entry, i) + "\">" + Escape(FusionName(entry)) +
           "</a></td><td><code>" + Escape(entry.key.fingerprint.substr(0, 12)) + "</code></td>" +
           Cell(DeviceLabel(entry.key.device_key)) + Cell(entry.key.compiler_version) +
           Cell(entry.emitter) + Cell(std::to_string(entry.configs), true) +
           Cell(std::to_string(entry.failures), true) + Cell(Micros(entry.DefaultMedian()), true) +
           Cell(Micros(entry.BestMedian()), true) + Cell(Speedup(speedup), true) + "</tr>\n";
    if (!speedup) continue;
    log_sum += std::log(*speedup);
    Bar bar;
    bar.value = *speedup;
    bar.label = FusionName(entry);
    if (devices.size() > 1) bar.label += " @ " + DeviceLabel(entry.key.device_key);
    bar.tooltip = FusionName(entry) + " on " + DeviceLabel(entry.key.device_key) + ": " +
                  Speedup(speedup) + " (default " + Micros(entry.DefaultMedian()) + ", best " +
                  Micros(entry.BestMedian()) + ")";
    bar.css_class = *speedup < 1 ? "bar slower" : "bar best";
    bars.emplace_back(*speedup, std::move(bar));
  }
  out += "</table>\n";
  std::stable_sort(bars.begin(), bars.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [value, bar] : bars) chart.bars.push_back(std::move(bar));
  if (chart.bars.empty()) {
    out +=
        "<p class=\"note\">No speedups yet: none of these fusions has both a verified default "
        "and a verified best config.</p>\n";
  } else {
    out += "<p class=\"meta\">Geometric-mean speedup " +
           Fixed(std::exp(log_sum / static_cast<double>(chart.bars.size())), 3) + "x over " +
           std::to_string(chart.bars.size()) + " of " + std::to_string(keys.size()) +
           " (fusion, device, compiler) keys.</p>\n";
    out += RenderBarChart(chart);
  }
  return out + "</section>\n";
}

// Every config's fastest verified trial, sorted by median: one bar each.
std::string ConfigChart(const KeyTrials& entry, const std::vector<std::string>& varying) {
  std::map<std::string, const db::MeasurementRecord*> fastest;
  std::map<std::string, int> trials;
  std::set<std::string> defaults;
  for (const db::MeasurementRecord& m : entry.trials) {
    ++trials[m.config_hash];
    if (m.is_default) defaults.insert(m.config_hash);
    if (!Verified(m)) continue;
    auto& slot = fastest[m.config_hash];
    if (slot == nullptr || m.timing->median_us < slot->timing->median_us) slot = &m;
  }
  if (fastest.empty()) return "<p class=\"note\">No verified config: nothing to chart.</p>\n";
  std::vector<const db::MeasurementRecord*> sorted;
  for (const auto& [hash, m] : fastest) sorted.push_back(m);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return a->timing->median_us < b->timing->median_us; });
  std::string best_hash = entry.best ? entry.best->measurement.config_hash : "";
  BarChart chart;
  chart.title = "Median time of every verified config (" + std::to_string(sorted.size()) +
                ", fastest first; whiskers p20 to p80)";
  chart.x_label = varying.size() > 1 && sorted.size() <= 30
                      ? "config (" + Joined(varying, "/") + "), sorted by median time"
                      : std::string("config, sorted by median time");
  chart.y_label = std::string("median time (") + kMicros + ")";
  for (size_t i = 0; i < sorted.size(); ++i) {
    const db::MeasurementRecord& m = *sorted[i];
    bool is_default = defaults.count(m.config_hash) > 0;
    bool is_best = m.config_hash == best_hash;
    Bar bar;
    bar.value = m.timing->median_us;
    bar.low = m.timing->p20_us;
    bar.high = m.timing->p80_us;
    bar.label = ShortConfig(m.config, varying);
    bar.css_class = std::string("bar") + (is_default ? " default" : "") + (is_best ? " best" : "");
    bar.tooltip = "#" + std::to_string(i + 1) + (is_best ? " BEST" : "") +
                  (is_default ? " DEFAULT" : "") + "\n" + m.config.dump() + "\n" +
                  TimingText(*m.timing) + "\n" + std::to_string(trials[m.config_hash]) +
                  " trial(s)";
    chart.bars.push_back(std::move(bar));
  }
  return RenderBarChart(chart) +
         "<p class=\"legend\"><span><i style=\"background:#2ca02c\"></i>best (the "
         "tuner's pick)</span><span><i style=\"background:#f58518\"></i>default</span><span><i "
         "style=\"background:#4c78a8\"></i>other configs</span></p>\n";
}

std::string TrialTooltip(size_t index, const db::MeasurementRecord& m) {
  std::string text =
      "trial " + std::to_string(index + 1) + " (" + m.measured_at + ")\n" + m.config.dump() + "\n";
  if (Verified(m)) return text + TimingText(*m.timing) + (m.is_default ? "\ndefault" : "");
  return text + "failed: " + std::string(db::TrialStatusName(m.status)) +
         (m.message.empty() ? "" : " - " + m.message);
}

std::string BestSoFarChart(const KeyTrials& entry) {
  SeriesChart chart;
  chart.title = "Search progress: every trial and the best time so far";
  chart.x_label = "trial (measurement order)";
  chart.y_label = std::string("median time (") + kMicros + ")";
  chart.line_label = "best so far";
  std::string best_hash = entry.best ? entry.best->measurement.config_hash : "";
  std::optional<double> best;
  for (size_t i = 0; i < entry.trials.size(); ++i) {
    const db::MeasurementRecord& m = entry.trials[i];
    SeriesPoint point;
    point.x = static_cast<double>(i + 1);
    point.tooltip = TrialTooltip(i, m);
    if (Verified(m)) {
      point.y = m.timing->median_us;
      point.css_class = std::string("trial") + (m.is_default ? " default" : "") +
                        (m.config_hash == best_hash ? " best" : "");
      if (!best || *point.y < *best) {
        best = point.y;
        chart.line.emplace_back(point.x, *best);
      }
    } else {
      point.css_class = "fail fail-" + std::string(db::TrialStatusName(m.status));
    }
    chart.points.push_back(std::move(point));
  }
  return RenderSeriesChart(chart);
}

std::string FailureSection(const KeyTrials& entry) {
  if (entry.failures == 0) {
    return "<p class=\"note failures-none\">No failed trials.</p>\n";
  }
  StripChart chart;
  chart.title = "Failed trials by class (" + std::to_string(entry.failures) + " of " +
                std::to_string(entry.trials.size()) + ")";
  chart.x_label = "trial (measurement order)";
  chart.x_max = static_cast<double>(entry.trials.size());
  std::string table =
      "<table class=\"failures\">\n<tr><th>class</th><th>trials</th><th>first message</th>"
      "<th>first config</th></tr>\n";
  for (db::TrialStatus status : db::AllTrialStatuses()) {
    if (status == db::TrialStatus::kOk) continue;
    std::string name(db::TrialStatusName(status));
    StripRow row;
    row.label = name;
    row.css_class = "fail-" + name;
    const db::MeasurementRecord* first = nullptr;
    for (size_t i = 0; i < entry.trials.size(); ++i) {
      const db::MeasurementRecord& m = entry.trials[i];
      if (m.status != status) continue;
      if (first == nullptr) first = &m;
      row.marks.push_back(
          {static_cast<double>(i + 1), std::nullopt, TrialTooltip(i, m), "fail fail-" + name});
    }
    if (first == nullptr) continue;
    table += "<tr class=\"fail-row\"><td class=\"status fail-" + name + "\">" + Escape(name) +
             "</td>" + Cell(std::to_string(row.marks.size()), true) + Cell(first->message) +
             "<td><code>" + Escape(first->config.dump()) + "</code></td></tr>\n";
    chart.rows.push_back(std::move(row));
  }
  return RenderStripChart(chart) + table + "</table>\n";
}

std::string HeatMapSection(const KeyTrials& entry, const std::vector<std::string>& varying) {
  auto axes = HeatMapAxes(entry.trials);
  if (!axes) {
    std::string names = Joined(varying, ", ");
    return "<p class=\"note no-heat-map\">No heat map: the verified configs vary in " +
           std::to_string(varying.size()) + " parameter(s)" +
           (names.empty() ? "" : " (" + Escape(names) + ")") +
           "; a heat map needs exactly two numeric ones.</p>\n";
  }
  std::set<double> xs;
  std::set<double> ys;
  std::map<std::pair<double, double>, const db::MeasurementRecord*> fastest;
  for (const db::MeasurementRecord& m : entry.trials) {
    if (!Verified(m)) continue;
    double x = m.config[axes->first].get<double>();
    double y = m.config[axes->second].get<double>();
    xs.insert(x);
    ys.insert(y);
    auto& slot = fastest[{x, y}];
    if (slot == nullptr || m.timing->median_us < slot->timing->median_us) slot = &m;
  }
  HeatMap map;
  map.title = "Median time over " + axes->first + " and " + axes->second;
  map.x_label = axes->first;
  map.y_label = axes->second;
  map.unit = kMicros;
  for (double x : xs) map.x_values.push_back(ValueText(json(x)));
  for (double y : ys) map.y_values.push_back(ValueText(json(y)));
  for (double y : ys) {
    map.cells.emplace_back();
    map.tooltips.emplace_back();
    for (double x : xs) {
      auto it = fastest.find({x, y});
      std::string where =
          axes->first + "=" + ValueText(json(x)) + ", " + axes->second + "=" + ValueText(json(y));
      if (it == fastest.end()) {
        map.cells.back().push_back(std::nullopt);
        map.tooltips.back().push_back(where);
      } else {
        map.cells.back().push_back(it->second->timing->median_us);
        map.tooltips.back().push_back(where + ": " + TimingText(*it->second->timing));
      }
    }
  }
  return RenderHeatMap(map);
}

std::string KeySection(const KeyTrials& entry, size_t index) {
  std::vector<std::string> varying = VaryingParameters(entry.trials);
  std::string out = "<div class=\"key\" id=\"" + Anchor(entry, index) + "\">\n<h3>" +
                    Escape(DeviceLabel(entry.key.device_key)) + " &middot; " +
                    Escape(entry.key.compiler_version) + "</h3>\n<dl class=\"facts\">\n";
  auto fact = [&out](const std::string& name, const std::string& value, bool code = false) {
    out += "<dt>" + Escape(name) + "</dt><dd>" + (code ? "<code>" : "") + Escape(value) +
           (code ? "</code>" : "") + "</dd>\n";
  };
  fact("device", entry.key.device_key);
  fact("emitter", entry.emitter);
  fact("trials", std::to_string(entry.trials.size()) + " (" + std::to_string(entry.configs) +
                     " configs, " + std::to_string(entry.failures) + " failed)");
  const db::MeasurementRecord* default_trial = nullptr;
  for (const db::MeasurementRecord& m : entry.trials) {
    if (m.is_default && (default_trial == nullptr || Verified(m))) default_trial = &m;
  }
  if (default_trial != nullptr) {
    fact("default config", default_trial->config.dump(), true);
  }
  fact("default time", Micros(entry.DefaultMedian()));
  if (entry.best) {
    fact("best config", entry.best->measurement.config.dump(), true);
    fact("best time", TimingText(*entry.best->measurement.timing));
  } else {
    fact("best config", "none verified");
  }
  fact("speedup", Speedup(entry.Speedup()));
  out += "</dl>\n";
  out += ConfigChart(entry, varying);
  out += FailureSection(entry);
  out += BestSoFarChart(entry);
  out += HeatMapSection(entry, varying);
  return out + "</div>\n";
}

}  // namespace

Expected<std::string> RenderReport(db::ResultStore& store, const ReportOptions& options) {
  std::optional<db::KernelRecord> only;
  if (options.fingerprint) {
    TS_ASSIGN_OR_RETURN(only, store.GetKernel(*options.fingerprint));
    if (!only) {
      return MakeError(ErrorCode::kNotFound, "no kernel with fingerprint " + *options.fingerprint);
    }
  }
  db::ResultFilter filter{options.fingerprint, options.device_key, options.compiler_version};
  TS_ASSIGN_OR_RETURN(std::vector<KeyTrials> keys, LoadTrials(store, filter));
  size_t trials = 0;
  for (const KeyTrials& entry : keys) trials += entry.trials.size();
  std::string title = only ? "tilesmith report: " +
                                 (only->name.empty() ? only->fingerprint.substr(0, 12) : only->name)
                           : std::string("tilesmith tuning report");
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>" +
      Escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<header>\n<h1>" +
      Escape(title) + "</h1>\n";
  out += "<p class=\"meta\">Generated " + Escape(db::UtcNow()) +
         (options.source.empty() ? "" : " from " + Escape(options.source)) + ": " +
         std::to_string(keys.size()) + " (fusion, device, compiler) keys, " +
         std::to_string(trials) + " trials. Times are medians in " + kMicros +
         "; hover over a bar, dot or cell for its config and timings.</p>\n</header>\n";
  out += SummarySection(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    const KeyTrials& entry = keys[i];
    bool first_of_fusion = i == 0 || keys[i - 1].key.fingerprint != entry.key.fingerprint;
    if (first_of_fusion) {
      if (i > 0) out += "</section>\n";
      out += "<section class=\"fusion\" id=\"f-" + Escape(entry.key.fingerprint) + "\">\n<h2>" +
             Escape(FusionName(entry)) + " <code>" + Escape(entry.key.fingerprint.substr(0, 12)) +
             "</code></h2>\n<p class=\"meta\">fingerprint <code>" + Escape(entry.key.fingerprint) +
             "</code>" + (entry.source_format.empty() ? "" : ", " + Escape(entry.source_format)) +
             "</p>\n";
    }
    out += KeySection(entry, i);
  }
  if (!keys.empty()) out += "</section>\n";
  return out + "</body>\n</html>\n";
}

}  // namespace tilesmith::report
