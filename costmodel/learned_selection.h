// Where the learned model answers: per emitter kind, the model (learned or analytic) that
// ranked better on fusions held out of the learned model's training. Decided once at
// training (model_eval.h's DecideSelection), stored with the model, and honoured by the
// model itself (LearnedModel::Predict, PredictRows), so every ranking that uses a stored
// model — `predict`, a tune's `model` strategy, `/v1/query` — follows the same rule.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "support/status.h"

namespace tilesmith::costmodel {

/// One emitter's held-out evidence: mean Spearman per fusion of each model, and the standard
/// error of their mean paired difference (how far apart they could be by the fusions drawn).
struct SelectionEvidence {
  int64_t fusions = 0;
  double analytic = 0;
  double learned = 0;
  double difference_error = 0;
};

/// The rule. Undecided (a model trained without held-out evidence, or stored before rules
/// existed): the learned model answers for every emitter, as it always did.
struct LearnedSelection {
  bool decided = false;
  /// Per emitter with enough held-out fusions (kMinSelectionFusions) and a difference
  /// beyond its standard error: whether the learned model answers for it.
  std::map<std::string, bool, std::less<>> learned_for;
  /// Other emitters follow the comparison over all held-out fusions.
  bool learned_elsewhere = true;
  std::map<std::string, SelectionEvidence, std::less<>> evidence;  ///< by emitter
  SelectionEvidence overall;

  /// Whether the learned model answers for a kernel of `emitter`.
  bool UsesLearned(std::string_view emitter) const;
  /// `learned for loop, reduction; analytic for transpose, elsewhere learned`, or
  /// `learned everywhere (undecided)`.
  std::string Describe() const;
  nlohmann::json ToJson() const;
  static Expected<LearnedSelection> FromJson(const nlohmann::json& json);
};

/// Held-out fusions an emitter needs before it gets a verdict of its own: fewer say more
/// about those fusions than about the emitter.
inline constexpr int64_t kMinSelectionFusions = 3;

/// The emitter a feature row was made for (its `emitter.*` column), or "" if none is set.
std::string EmitterOfFeatures(std::span<const float> features);

}  // namespace tilesmith::costmodel
