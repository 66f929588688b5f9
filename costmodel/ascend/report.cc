// The schedule as JSON (stable keys, for machines and the tuner) and as text (derived from
// the JSON, so the two never disagree).
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "costmodel/ascend/schedule.h"

namespace tilesmith::costmodel::ascend {
namespace {

using nlohmann::json;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

json CyclesJson(const Evaluation& evaluation) {
  return {{"mte2", evaluation.cycles.mte2},
          {"mte3", evaluation.cycles.mte3},
          {"vec", evaluation.cycles.vec},
          {"objective", evaluation.objective},
          {"bottleneck", PipeName(evaluation.cycles.Bottleneck())}};
}

// A ranked candidate in brief: enough to rebuild it (key, tiles, cores) and its price.
json CandidateJson(const TilingModel& model, const Candidate& candidate) {
  json split_axes = json::array();
  json tiles = json::object();
  for (size_t g = 0; g < model.groups().size(); ++g) {
    std::string axis = model.SplitAxisName(candidate.tiling_case, g);
    split_axes.push_back(axis.empty() ? json(nullptr) : json(axis));
    if (!axis.empty()) tiles[axis + "t_size"] = candidate.point.tiles[g];
  }
  return {{"tiling_key", candidate.tiling_case.key},
          {"split_axes", split_axes},
          {"tiles", tiles},
          {"block_dim", candidate.evaluation.block_dim},
          {"tb_size", candidate.evaluation.tb_size},
          {"ub_used", candidate.evaluation.ub_used},
          {"cycles", CyclesJson(candidate.evaluation)}};
}

std::string Join(const json& names, std::string_view separator) {
  std::string text;
  for (const json& name : names) {
    if (!text.empty()) text += separator;
    text += name.is_string() ? name.get<std::string>() : name.dump();
  }
  return text;
}

std::string Cycles(double cycles) { return std::to_string(std::llround(cycles)); }

// The text report: one labelled line (or block of lines) per part of the JSON.
std::ostream& Label(std::ostream& out, std::string_view name) {
  return out << name << std::string(name.size() < 14 ? 14 - name.size() : 1, ' ');
}

void WriteLoops(const json& j, std::ostream& out) {
  for (size_t a = 0; a < j["axes"].size(); ++a) {
    const json& axis = j["axes"][a];
    Label(out, a == 0 ? "axes" : "")
        << axis["name"].get<std::string>() << " = " << axis["size"] << " (group "
        << axis["group"].get<std::string>() << ", from " << Join(axis["from"], "*") << ", tiles of "
        << axis["align"] << (axis["splittable"] ? "" : ", loaded whole") << ")\n";
  }
  for (size_t g = 0; g < j["groups"].size(); ++g) {
    const json& group = j["groups"][g];
    Label(out, g == 0 ? "groups" : "")
        << group["kind"].get<std::string>() << ": [" << Join(group["axes"], ", ") << "] ";
    if (group["split_axis"].is_null()) {
      out << "loaded whole\n";
    } else {
      out << "split " << group["split_axis"].get<std::string>() << " -> "
          << group["tile_outer"].get<std::string>() << " (" << group["tile_loops"] << ") x "
          << group["tile_inner"].get<std::string>() << " (" << group["tile"] << ")\n";
    }
  }
  const json& block = j["block"];
  Label(out, "block");
  if (block["axis"].is_null()) {
    out << "nothing outside the tile: 1 core\n";
    return;
  }
  out << block["axis"].get<std::string>() << " (" << block["tiles"] << ") -> "
      << block["outer"].get<std::string>() << " (" << block["block_dim"] << " cores) x "
      << block["inner"].get<std::string>() << " (" << block["tb_size"] << ")";
  if (block["reduce_loops"] != 1) out << "; reduce loops " << block["reduce_loops"];
  out << "\n";
}

void WriteBuffers(const Schedule& schedule, const json& j, std::ostream& out) {
  for (size_t b = 0; b < j["buffers"].size(); ++b) {
    const json& buffer = j["buffers"][b];
    Label(out, b == 0 ? "buffers" : "")
        << buffer["name"].get<std::string>() << " " << buffer["kind"].get<std::string>() << " "
        << buffer["count"] << " x " << buffer["bytes"] << " B: " << Join(buffer["tensors"], ", ")
        << "\n";
  }
  std::string fields;  // in TilingData order, not the JSON object's sorted one
  for (const auto& [field, value] : schedule.model.TilingData(
           schedule.pick.tiling_case, schedule.pick.point, schedule.pick.evaluation)) {
    fields += (fields.empty() ? "" : " ") + field + "=" + std::to_string(value);
  }
  Label(out, "tiling data") << fields << "\n";
}

void WriteCycles(const json& j, std::ostream& out) {
  const json& cycles = j["cycles"];
  Label(out, "cycles") << "MTE2 " << Cycles(cycles["mte2"]) << ", MTE3 " << Cycles(cycles["mte3"])
                       << ", VEC " << Cycles(cycles["vec"]) << "; objective "
                       << Cycles(cycles["objective"]) << " ("
                       << cycles["bottleneck"].get<std::string>() << "-bound, + 300 per core)\n";
  const json& constraints = j["constraints"];
  Label(out, "constraints")
      << "UB " << constraints["ub_used"] << " / " << constraints["ub_available"]
      << " bytes, block_dim " << constraints["block_dim"] << " / " << constraints["vector_cores"]
      << " cores, rows 32-byte aligned: "
      << (constraints["ok"] ? "ok" : "VIOLATED: " + Join(constraints["violations"], "; ")) << "\n";
}

void WriteRanking(const json& j, std::ostream& out) {
  Label(out, "model best");
  if (j["pick_rank"] == 1) {
    out << "the solver's pick (rank 1 of " << j["alternatives_considered"] << ")\n";
  } else {
    out << "objective " << Cycles(j["model_best"]["cycles"]["objective"]) << " (tiling_key "
        << j["model_best"]["tiling_key"] << ", " << j["model_best"]["block_dim"]
        << " cores); the greedy solver's pick ranks " << j["pick_rank"] << " of "
        << j["alternatives_considered"] << "\n";
  }
  if (j["alternatives"].empty()) return;
  out << "alternatives  (best " << j["alternatives"].size() << " of "
      << j["alternatives_considered"] << " by predicted cycles)\n"
      << "  rank  key  block_dim  tb_size  ub_used  objective  bottleneck  tiles\n";
  for (size_t r = 0; r < j["alternatives"].size(); ++r) {
    const json& alt = j["alternatives"][r];
    std::string tiles;
    for (const auto& [field, value] : alt["tiles"].items()) {
      tiles += (tiles.empty() ? "" : " ") + field + "=" + value.dump();
    }
    char line[160];
    std::snprintf(line, sizeof(line), "  %4zu  %3lld  %9lld  %7lld  %7lld  %9lld  %-10s  ", r + 1,
                  static_cast<long long>(alt["tiling_key"].get<int64_t>()),
                  static_cast<long long>(alt["block_dim"].get<int64_t>()),
                  static_cast<long long>(alt["tb_size"].get<int64_t>()),
                  static_cast<long long>(alt["ub_used"].get<int64_t>()),
                  std::llround(alt["cycles"]["objective"].get<double>()),
                  alt["cycles"]["bottleneck"].get<std::string>().c_str());
    out << line << tiles << (alt == j["pick"] ? "  <- pick" : "") << "\n";
  }
}

}  // namespace

json ScheduleToJson(const Schedule& schedule) {
  const TilingModel& model = schedule.model;
  const LoopNest& nest = model.nest();
  const Candidate& pick = schedule.pick;
  const Evaluation& evaluation = pick.evaluation;

  json axes = json::array();
  for (const LoopAxis& axis : nest.axes) {
    axes.push_back({{"name", axis.name},
                    {"size", axis.size},
                    {"group", GroupName(axis.group)},
                    {"from", axis.from},
                    {"align", axis.align},
                    {"splittable", axis.splittable}});
  }
  json groups = json::array();
  for (size_t g = 0; g < model.groups().size(); ++g) {
    const AxisGroup& group = model.groups()[g];
    json names = json::array();
    for (int a : group.axes) names.push_back(nest.axes[a].name);
    json entry = {{"kind", GroupName(group.kind)}, {"axes", names}, {"split_axis", nullptr}};
    std::string split = model.SplitAxisName(pick.tiling_case, g);
    if (!split.empty()) {
      int64_t size = nest.axes[pick.tiling_case.split[g]].size;
      entry["split_axis"] = split;
      entry["tile"] = pick.point.tiles[g];
      entry["tile_loops"] = CeilDiv(size, pick.point.tiles[g]);
      entry["tile_outer"] = split + "T";
      entry["tile_inner"] = split + "t";
    }
    groups.push_back(std::move(entry));
  }
  std::string block_axis = model.BlockAxisName(pick.tiling_case);
  json block = {{"axis", block_axis.empty() ? json(nullptr) : json(block_axis)},
                {"tiles", evaluation.outer_tiles},
                {"tb_size", evaluation.tb_size},
                {"block_dim", evaluation.block_dim},
                {"reduce_loops", evaluation.reduce_loops}};
  if (!block_axis.empty()) {
    block["outer"] = block_axis + "B";
    block["inner"] = block_axis + "b";
  }
  json buffers = json::array();
  for (size_t b = 0; b < nest.buffers.size(); ++b) {
    const Buffer& buffer = nest.buffers[b];
    json tensors = json::array();
    for (int t : buffer.tensors) tensors.push_back(nest.tensors[t].name);
    buffers.push_back({{"name", buffer.name},
                       {"kind", BufferKindName(buffer.kind)},
                       {"count", buffer.count},
                       {"bytes", evaluation.buffer_bytes[b]},
                       {"tensors", tensors}});
  }
  json tiling_data = json::object();
  for (const auto& [field, value] : model.TilingData(pick.tiling_case, pick.point, evaluation)) {
    tiling_data[field] = value;
  }
  std::vector<std::string> violations = model.Violations(pick.tiling_case, pick.point, evaluation);
  json alternatives = json::array();
  for (const Candidate& candidate : schedule.alternatives) {
    alternatives.push_back(CandidateJson(model, candidate));
  }
  return {{"target", "ascend:" + model.platform().name},
          {"predicted", true},
          {"graph", nest.graph_name},
          {"platform",
           {{"name", model.platform().name},
            {"vector_cores", model.platform().vector_cores},
            {"ub_bytes", model.platform().ub_bytes}}},
          {"axes", axes},
          {"groups", groups},
          {"block", block},
          {"buffers", buffers},
          {"tiling_data", tiling_data},
          {"cycles", CyclesJson(evaluation)},
          {"constraints",
           {{"ub_used", evaluation.ub_used},
            {"ub_available", model.platform().ub_bytes},
            {"block_dim", evaluation.block_dim},
            {"vector_cores", model.platform().vector_cores},
            {"ok", violations.empty()},
            {"violations", violations}}},
          {"pick", CandidateJson(model, pick)},
          {"pick_rank", schedule.pick_rank},
          {"model_best", CandidateJson(model, schedule.model_best)},
          {"alternatives_considered", schedule.alternatives_considered},
          {"alternatives", alternatives},
          {"assumptions", nest.assumptions}};
}

std::string ScheduleToText(const Schedule& schedule) {
  json j = ScheduleToJson(schedule);
  std::ostringstream out;
  Label(out, "graph") << j["graph"].get<std::string>() << " (predicted for "
                      << j["target"].get<std::string>() << ", not measured)\n";
  Label(out, "platform") << j["platform"]["name"].get<std::string>() << ": "
                         << j["platform"]["vector_cores"] << " vector cores, "
                         << j["platform"]["ub_bytes"] << " bytes of unified buffer usable\n";
  WriteLoops(j, out);
  WriteBuffers(schedule, j, out);
  WriteCycles(j, out);
  WriteRanking(j, out);
  for (size_t i = 0; i < j["assumptions"].size(); ++i) {
    Label(out, i == 0 ? "assumed costs" : "") << j["assumptions"][i].get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace tilesmith::costmodel::ascend
