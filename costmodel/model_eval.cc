#include "costmodel/model_eval.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <random>

#include "costmodel/ranking_metrics.h"

namespace tilesmith::costmodel {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

nlohmann::json ScoresJson(const ModelScores& scores) {
  nlohmann::json fusions = nlohmann::json::array();
  for (const FusionScore& f : scores.fusions) {
    fusions.push_back({{"fusion", f.fusion},
                       {"configs", f.configs},
                       {"spearman", f.spearman},
                       {"kendall", f.kendall},
                       {"top1_regret", f.top1_regret},
                       {"top5_regret", f.top5_regret}});
  }
  return {{"model", scores.model},
          {"spearman", scores.spearman},
          {"kendall", scores.kendall},
          {"top1_regret", scores.top1_regret},
          {"top5_regret", scores.top5_regret},
          {"median_top1_regret", scores.median_top1_regret},
          {"fusions", fusions}};
}

// The rows as seen before compiling (their estimates); empty unless every row has one.
std::vector<TrainingRow> Estimates(const std::vector<TrainingRow>& rows) {
  std::vector<TrainingRow> estimates;
  for (const TrainingRow& row : rows) {
    if (row.estimate_features.empty()) return {};
    estimates.push_back(EstimateRow(row));
  }
  return estimates;
}

}  // namespace

nlohmann::json Evaluation::ToJson() const {
  nlohmann::json json = {{"train", {{"rows", train_rows}, {"fusions", train_fusions}}},
                         {"heldout", {{"rows", heldout_rows}, {"fusions", heldout_fusions}}},
                         {"learned_trained", learned_trained},
                         {"learned_model", learned_description},
                         {"analytic", ScoresJson(analytic)},
                         {"learned", ScoresJson(learned)}};
  if (analytic_estimated && learned_estimated) {
    json["estimated"] = {{"analytic", ScoresJson(*analytic_estimated)},
                         {"learned", ScoresJson(*learned_estimated)}};
  }
  if (within_fusion) json["within_fusion"] = ScoresJson(*within_fusion);
  return json;
}

ModelScores Score(const std::string& model, const std::vector<TrainingRow>& rows,
                  const std::vector<double>& predicted_us) {
  std::map<std::string, std::vector<size_t>> by_fusion;
  for (size_t i = 0; i < rows.size(); ++i) by_fusion[rows[i].fusion].push_back(i);
  ModelScores scores;
  scores.model = model;
  std::vector<double> top1;
  for (const auto& [fusion, indices] : by_fusion) {
    if (indices.size() < 2) continue;
    std::vector<double> predicted, measured;
    for (size_t i : indices) {
      predicted.push_back(predicted_us[i]);
      measured.push_back(rows[i].measured_us);
    }
    FusionScore score{fusion,
                      static_cast<int64_t>(indices.size()),
                      Spearman(predicted, measured),
                      KendallTau(predicted, measured),
                      TopKRegret(predicted, measured, 1),
                      TopKRegret(predicted, measured, 5)};
    scores.spearman += score.spearman;
    scores.kendall += score.kendall;
    scores.top1_regret += score.top1_regret;
    scores.top5_regret += score.top5_regret;
    top1.push_back(score.top1_regret);
    scores.fusions.push_back(std::move(score));
  }
  if (!scores.fusions.empty()) {
    double n = static_cast<double>(scores.fusions.size());
    scores.spearman /= n;
    scores.kendall /= n;
    scores.top1_regret /= n;
    scores.top5_regret /= n;
  }
  scores.median_top1_regret = Median(top1);
  return scores;
}

Expected<Evaluation> EvaluateHeldOut(const std::vector<TrainingRow>& rows, double holdout,
                                     std::unique_ptr<CostModel> analytic,
                                     const LearnedModelOptions& options) {
  std::set<std::string> held = HeldOutFusions(rows, holdout);
  if (held.empty()) return InvalidArgument("no fusion to hold out (no rows, or --holdout 0)");
  std::vector<TrainingRow> train, test;
  for (const TrainingRow& row : rows) (held.contains(row.fusion) ? test : train).push_back(row);
  Evaluation evaluation;
  evaluation.train_rows = static_cast<int64_t>(train.size());
  evaluation.train_fusions = FusionCount(train);
  evaluation.heldout_rows = static_cast<int64_t>(test.size());
  evaluation.heldout_fusions = static_cast<int64_t>(held.size());
  std::string analytic_name(analytic->name());
  LearnedModel learned(std::move(analytic), options);
  TS_RETURN_IF_ERROR(learned.Retrain(train));
  evaluation.learned_trained = learned.trained();
  evaluation.learned_description = learned.Describe();
  std::vector<double> analytic_us;
  for (const TrainingRow& row : test) analytic_us.push_back(row.analytic_us);
  TS_ASSIGN_OR_RETURN(std::vector<double> learned_us, learned.PredictRows(test));
  evaluation.analytic = Score(analytic_name, test, analytic_us);
  evaluation.learned = Score(std::string(learned.name()), test, learned_us);
  std::vector<TrainingRow> estimates = Estimates(test);
  if (!estimates.empty()) {
    std::vector<double> estimate_us;
    for (const TrainingRow& row : estimates) estimate_us.push_back(row.analytic_us);
    TS_ASSIGN_OR_RETURN(std::vector<double> learned_estimate_us, learned.PredictRows(estimates));
    evaluation.analytic_estimated = Score(analytic_name, estimates, estimate_us);
    evaluation.learned_estimated =
        Score(std::string(learned.name()), estimates, learned_estimate_us);
  }
  return evaluation;
}

Expected<Evaluation> CrossValidate(const std::vector<TrainingRow>& rows, int folds,
                                   const std::function<std::unique_ptr<CostModel>()>& make_analytic,
                                   const LearnedModelOptions& options) {
  std::map<std::string, int> fold_of;
  for (const TrainingRow& row : rows) fold_of.emplace(row.fusion, 0);
  if (folds < 2 || static_cast<size_t>(folds) > fold_of.size()) {
    return InvalidArgument("cross-validation needs 2 <= folds <= fusions (" +
                           std::to_string(fold_of.size()) + "), not " + std::to_string(folds));
  }
  int next = 0;
  for (auto& [fusion, fold] : fold_of) fold = next++ % folds;
  Evaluation evaluation;
  evaluation.learned_trained = true;
  std::vector<TrainingRow> scored, scored_estimates;
  std::vector<double> analytic_us, learned_us, learned_estimate_us;
  bool estimated = true;  // every row carries its estimate
  evaluation.heldout_learned_us.assign(rows.size(), 0.0);
  std::string analytic_name, learned_name;
  int64_t train_rows = 0, train_fusions = 0;
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<TrainingRow> train, test;
    std::vector<size_t> test_rows;  // input positions of `test`
    for (size_t i = 0; i < rows.size(); ++i) {
      bool held = fold_of[rows[i].fusion] == fold;
      (held ? test : train).push_back(rows[i]);
      if (held) test_rows.push_back(i);
    }
    train_rows += static_cast<int64_t>(train.size());
    train_fusions += FusionCount(train);
    std::unique_ptr<CostModel> analytic = make_analytic();
    analytic_name = std::string(analytic->name());
    LearnedModel learned(std::move(analytic), options);
    TS_RETURN_IF_ERROR(learned.Retrain(train));
    evaluation.learned_trained = evaluation.learned_trained && learned.trained();
    evaluation.learned_description = learned.Describe();
    learned_name = std::string(learned.name());
    TS_ASSIGN_OR_RETURN(std::vector<double> predicted, learned.PredictRows(test));
    for (size_t i = 0; i < test.size(); ++i) {
      analytic_us.push_back(test[i].analytic_us);
      learned_us.push_back(predicted[i]);
      evaluation.heldout_learned_us[test_rows[i]] = predicted[i];
    }
    std::vector<TrainingRow> estimates = Estimates(test);
    estimated = estimated && !estimates.empty();
    if (estimated) {
      TS_ASSIGN_OR_RETURN(std::vector<double> predicted_estimates, learned.PredictRows(estimates));
      learned_estimate_us.insert(learned_estimate_us.end(), predicted_estimates.begin(),
                                 predicted_estimates.end());
      for (TrainingRow& estimate : estimates) scored_estimates.push_back(std::move(estimate));
    }
    for (TrainingRow& row : test) scored.push_back(std::move(row));
  }
  evaluation.train_rows = train_rows / folds;  // per fold, on average
  evaluation.train_fusions = train_fusions / folds;
  evaluation.heldout_rows = static_cast<int64_t>(rows.size());
  evaluation.heldout_fusions = static_cast<int64_t>(fold_of.size());
  evaluation.analytic = Score(analytic_name, scored, analytic_us);
  evaluation.learned = Score(learned_name, scored, learned_us);
  if (estimated) {
    std::vector<double> estimate_us;
    for (const TrainingRow& row : scored_estimates) estimate_us.push_back(row.analytic_us);
    evaluation.analytic_estimated = Score(analytic_name, scored_estimates, estimate_us);
    evaluation.learned_estimated = Score(learned_name, scored_estimates, learned_estimate_us);
  }
  return evaluation;
}

Expected<LearnedSelection> DecideSelection(
    const std::vector<TrainingRow>& rows, int folds,
    const std::function<std::unique_ptr<CostModel>()>& make_analytic,
    const LearnedModelOptions& options) {
  TS_ASSIGN_OR_RETURN(Evaluation evaluation, CrossValidate(rows, folds, make_analytic, options));
  if (!evaluation.learned_trained) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "too few rows to train every fold of the selection (" +
                         evaluation.learned_description + ")");
  }
  // Each fusion's kind: the emitter most of its rows were emitted by.
  std::map<std::string, std::map<std::string, int>> emitters;
  for (const TrainingRow& row : rows) ++emitters[row.fusion][EmitterOfFeatures(row.features)];
  std::map<std::string, std::string> kind;
  for (const auto& [fusion, counts] : emitters) {
    kind[fusion] = std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
                     return a.second < b.second;
                   })->first;
  }
  LearnedSelection selection;
  selection.decided = true;
  // Paired differences (learned - analytic) per fusion, by emitter and over all.
  std::map<std::string, std::vector<std::pair<double, double>>> by_emitter;
  std::vector<std::pair<double, double>> all;
  // Score() lists fusions in the same (sorted) order for both models.
  for (size_t i = 0; i < evaluation.analytic.fusions.size(); ++i) {
    const FusionScore& a = evaluation.analytic.fusions[i];
    const FusionScore& l = evaluation.learned.fusions[i];
    by_emitter[kind[a.fusion]].emplace_back(a.spearman, l.spearman);
    all.emplace_back(a.spearman, l.spearman);
  }
  auto evidence = [](const std::vector<std::pair<double, double>>& pairs) {
    SelectionEvidence e;
    e.fusions = static_cast<int64_t>(pairs.size());
    if (pairs.empty()) return e;
    double n = static_cast<double>(pairs.size()), squares = 0;
    for (auto [analytic, learned] : pairs) {
      e.analytic += analytic / n;
      e.learned += learned / n;
    }
    for (auto [analytic, learned] : pairs) {
      double deviation = learned - analytic - (e.learned - e.analytic);
      squares += deviation * deviation;
    }
    e.difference_error = pairs.size() > 1 ? std::sqrt(squares / (n - 1) / n) : 0;
    return e;
  };
  selection.overall = evidence(all);
  selection.learned_elsewhere = selection.overall.learned > selection.overall.analytic;
  for (const auto& [emitter, pairs] : by_emitter) {
    SelectionEvidence e = evidence(pairs);
    selection.evidence[emitter] = e;
    // An emitter gets a verdict of its own only where the models differ by more than the
    // fusions drawn could make them: on 46 training fusions, emitters whose models differed
    // by under 0.01 were otherwise given to whichever the draw favoured.
    if (e.fusions >= kMinSelectionFusions &&
        std::abs(e.learned - e.analytic) > e.difference_error) {
      selection.learned_for[emitter] = e.learned > e.analytic;
    }
  }
  return selection;
}

Expected<std::vector<double>> FitWithinFusion(
    const std::vector<TrainingRow>& rows,
    const std::function<std::unique_ptr<CostModel>()>& make_analytic,
    const WithinFusionOptions& options) {
  if (rows.size() < 2) return InvalidArgument("a fit within a fusion needs two configs or more");
  for (const TrainingRow& row : rows) {
    if (row.fusion != rows.front().fusion) {
      return InvalidArgument("a fit within a fusion got rows of '" + rows.front().fusion +
                             "' and '" + row.fusion + "'");
    }
  }
  size_t folds = std::min(rows.size(), static_cast<size_t>(std::max(options.folds, 2)));
  // Shuffled into folds: a space lists its configs in order, so neighbours share fields, and
  // folds by position would hold out one value of a field at a time.
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 random(options.seed);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<size_t> fold_of(rows.size());
  for (size_t k = 0; k < order.size(); ++k) fold_of[order[k]] = k % folds;

  LearnedModelOptions learned;
  learned.min_rows = 1;  // one fusion's configs are all there is
  learned.min_fusions = 1;
  learned.objective = Objective::kLogTime;
  learned.correction_share = 1;  // no other fusion's correction to guard against
  learned.bag = 1;
  learned.max_depth = options.max_depth;
  learned.rounds = options.rounds;
  learned.seed = options.seed;
  std::vector<double> predicted(rows.size(), 0);
  for (size_t fold = 0; fold < folds; ++fold) {
    std::vector<TrainingRow> train, held_out;
    std::vector<size_t> held_out_index;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (fold_of[i] == fold) {
        held_out.push_back(rows[i]);
        held_out_index.push_back(i);
      } else {
        train.push_back(rows[i]);
      }
    }
    LearnedModel model(make_analytic(), learned);
    TS_RETURN_IF_ERROR(model.Retrain(train));
    TS_ASSIGN_OR_RETURN(std::vector<double> answer, model.PredictRows(held_out));
    for (size_t k = 0; k < answer.size(); ++k) predicted[held_out_index[k]] = answer[k];
  }
  return predicted;
}

Expected<ModelScores> ScoreWithinFusion(
    const std::vector<TrainingRow>& rows, const std::vector<std::string>& fusions,
    const std::function<std::unique_ptr<CostModel>()>& make_analytic,
    const WithinFusionOptions& options) {
  std::map<std::string, std::vector<TrainingRow>> by_fusion;
  for (const std::string& fusion : fusions) by_fusion[fusion];
  for (const TrainingRow& row : rows) {
    if (auto it = by_fusion.find(row.fusion); it != by_fusion.end()) it->second.push_back(row);
  }
  std::vector<TrainingRow> scored;
  std::vector<double> predicted;
  for (auto& [fusion, fusion_rows] : by_fusion) {
    if (fusion_rows.size() < 2) continue;
    TS_ASSIGN_OR_RETURN(std::vector<double> fitted,
                        FitWithinFusion(fusion_rows, make_analytic, options));
    std::ranges::move(fusion_rows, std::back_inserter(scored));
    std::ranges::move(fitted, std::back_inserter(predicted));
  }
  return Score("within each fusion", scored, predicted);
}

}  // namespace tilesmith::costmodel
