#include "costmodel/learned_selection.h"

#include <cstdio>

#include "costmodel/features.h"

namespace tilesmith::costmodel {
namespace {

std::string Fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", value);
  return text;
}

nlohmann::json EvidenceJson(const SelectionEvidence& e) {
  return {{"fusions", e.fusions},
          {"analytic", e.analytic},
          {"learned", e.learned},
          {"difference_error", e.difference_error}};
}

Expected<SelectionEvidence> EvidenceFrom(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("fusions") || !json["fusions"].is_number_integer() ||
      !json.contains("analytic") || !json["analytic"].is_number() || !json.contains("learned") ||
      !json["learned"].is_number()) {
    return InvalidArgument("a selection's evidence needs 'fusions', 'analytic' and 'learned'");
  }
  return SelectionEvidence{json["fusions"].get<int64_t>(), json["analytic"].get<double>(),
                           json["learned"].get<double>(), json.value("difference_error", 0.0)};
}

}  // namespace

bool LearnedSelection::UsesLearned(std::string_view emitter) const {
  if (!decided) return true;
  auto found = learned_for.find(emitter);
  return found != learned_for.end() ? found->second : learned_elsewhere;
}

std::string LearnedSelection::Describe() const {
  if (!decided) return "learned everywhere (no held-out selection)";
  std::string learned, analytic;
  for (const auto& [emitter, uses] : learned_for) {
    std::string& into = uses ? learned : analytic;
    into += (into.empty() ? "" : ", ") + emitter;
  }
  std::string text;
  if (!learned.empty()) text += "learned for " + learned + "; ";
  if (!analytic.empty()) text += "analytic for " + analytic + "; ";
  return text + (learned_elsewhere ? "learned" : "analytic") +
         " elsewhere (held out: " + std::to_string(overall.fusions) + " fusions, analytic " +
         Fixed(overall.analytic) + ", learned " + Fixed(overall.learned) + ")";
}

nlohmann::json LearnedSelection::ToJson() const {
  nlohmann::json by_emitter = nlohmann::json::object();
  for (const auto& [emitter, e] : evidence) by_emitter[emitter] = EvidenceJson(e);
  for (const auto& [emitter, uses] : learned_for) {
    if (!by_emitter.contains(emitter)) by_emitter[emitter] = EvidenceJson({});
    by_emitter[emitter]["learned_answers"] = uses;
  }
  return {{"decided", decided},
          {"learned_elsewhere", learned_elsewhere},
          {"overall", EvidenceJson(overall)},
          {"emitters", std::move(by_emitter)}};
}

Expected<LearnedSelection> LearnedSelection::FromJson(const nlohmann::json& json) {
  LearnedSelection selection;
  if (!json.is_object() || !json.contains("decided") || !json["decided"].is_boolean()) {
    return InvalidArgument("a model's selection needs 'decided'");
  }
  selection.decided = json["decided"].get<bool>();
  if (!selection.decided) return selection;
  if (!json.contains("learned_elsewhere") || !json["learned_elsewhere"].is_boolean() ||
      !json.contains("emitters") || !json["emitters"].is_object()) {
    return InvalidArgument("a decided selection needs 'learned_elsewhere' and 'emitters'");
  }
  selection.learned_elsewhere = json["learned_elsewhere"].get<bool>();
  TS_ASSIGN_OR_RETURN(selection.overall, EvidenceFrom(json.value("overall", nlohmann::json())));
  for (const auto& [emitter, item] : json["emitters"].items()) {
    TS_ASSIGN_OR_RETURN(selection.evidence[emitter], EvidenceFrom(item));
    if (item.contains("learned_answers")) {
      if (!item["learned_answers"].is_boolean()) {
        return InvalidArgument("selection of '" + emitter + "': 'learned_answers' is not a bool");
      }
      selection.learned_for[emitter] = item["learned_answers"].get<bool>();
    }
  }
  return selection;
}

std::string EmitterOfFeatures(std::span<const float> features) {
  static constexpr std::string_view kPrefix = "emitter.";
  std::span<const std::string> names = FeatureNames();
  for (size_t c = 0; c < names.size() && c < features.size(); ++c) {
    if (names[c].starts_with(kPrefix) && features[c] == 1) {
      return names[c].substr(kPrefix.size());
    }
  }
  return "";
}

}  // namespace tilesmith::costmodel
