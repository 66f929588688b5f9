#include "costmodel/learned_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "costmodel/features.h"

namespace tilesmith::costmodel {
namespace {

constexpr char kFormat[] = "xgboost-json";

std::unexpected<Error> XgbError(const std::string& doing) {
  return MakeError(ErrorCode::kInternal, "xgboost: " + doing + ": " + XGBGetLastError());
}

#define TS_XGB(call, doing) \
  if ((call) != 0) return XgbError(doing)

// Owns a DMatrix.
class Matrix {
 public:
  ~Matrix() {
    if (handle_ != nullptr) XGDMatrixFree(handle_);
  }
  DMatrixHandle handle_ = nullptr;
};

// Times are floored here before their logs are taken.
constexpr double kLogFloorUs = 1e-3;

// The rows as a DMatrix with the analytic times as base margin (and labels when
// `labelled`). Rows must be grouped by fusion for the pairwise objective.
Status MakeMatrix(std::span<const TrainingRow> rows, Objective objective, bool labelled,
                  Matrix& matrix) {
  const size_t columns = FeatureNames().size();
  std::vector<float> data;
  data.reserve(rows.size() * columns);
  std::vector<float> margins, labels;
  for (const TrainingRow& row : rows) {
    if (row.features.size() != columns) {
      return InvalidArgument("a training row has " + std::to_string(row.features.size()) +
                             " features, the schema " + std::to_string(columns));
    }
    data.insert(data.end(), row.features.begin(), row.features.end());
    double analytic = std::log(std::max(kLogFloorUs, row.analytic_us));
    double measured = std::log(std::max(kLogFloorUs, row.measured_us));
    bool pairwise = objective == Objective::kPairwise;
    margins.push_back(static_cast<float>(pairwise ? -analytic : analytic));
    labels.push_back(static_cast<float>(pairwise ? -measured : measured));
  }
  TS_XGB(XGDMatrixCreateFromMat(data.data(), rows.size(), columns, std::nanf(""), &matrix.handle_),
         "making a matrix");
  TS_XGB(XGDMatrixSetFloatInfo(matrix.handle_, "base_margin", margins.data(), margins.size()),
         "setting base margins");
  if (!labelled) return OkStatus();
  TS_XGB(XGDMatrixSetFloatInfo(matrix.handle_, "label", labels.data(), labels.size()),
         "setting labels");
  if (objective == Objective::kPairwise) {
    std::vector<unsigned> groups;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i == 0 || rows[i].fusion != rows[i - 1].fusion) groups.push_back(0);
      ++groups.back();
    }
    TS_XGB(XGDMatrixSetUIntInfo(matrix.handle_, "group", groups.data(), groups.size()),
           "setting groups");
  }
  return OkStatus();
}

// What the trees are trained on: each row, and its estimate (the row as seen before
// compiling) in a ranking group of its own, since a pairwise model ranks compiled and
// estimated candidates apart; ordered by group (stable), as pairwise groups need.
std::vector<TrainingRow> TrainingSet(std::span<const TrainingRow> rows) {
  std::vector<TrainingRow> set(rows.begin(), rows.end());
  for (const TrainingRow& row : rows) {
    if (row.estimate_features.empty()) continue;
    TrainingRow estimate = EstimateRow(row);
    estimate.fusion += " (estimated)";
    set.push_back(std::move(estimate));
  }
  std::stable_sort(set.begin(), set.end(),
                   [](const TrainingRow& a, const TrainingRow& b) { return a.fusion < b.fusion; });
  return set;
}

}  // namespace

std::string_view ObjectiveName(Objective objective) {
  return objective == Objective::kPairwise ? "pairwise" : "log-time";
}

Expected<Objective> ParseObjective(std::string_view name) {
  if (name == "log-time") return Objective::kLogTime;
  if (name == "pairwise") return Objective::kPairwise;
  return InvalidArgument("unknown objective '" + std::string(name) + "' (log-time, pairwise)");
}

TrainingRow EstimateRow(const TrainingRow& row) {
  TrainingRow estimate;
  estimate.fusion = row.fusion;
  estimate.features = row.estimate_features;
  estimate.measured_us = row.measured_us;
  estimate.analytic_us = row.estimate_analytic_us;
  return estimate;
}

Expected<TrainingRow> MakeTrainingRow(std::string fusion, const emitters::KernelIR& kernel,
                                      const DeviceFigures& device, const ResourceUsage* usage,
                                      const CostModel& analytic, double measured_us) {
  TS_ASSIGN_OR_RETURN(Prediction prediction, analytic.Predict(kernel, device, usage));
  TrainingRow row;
  row.fusion = std::move(fusion);
  row.features = KernelFeatures(kernel, device, usage, prediction);
  row.measured_us = measured_us;
  row.analytic_us = prediction.microseconds;
  if (usage != nullptr && usage->known()) {
    TS_ASSIGN_OR_RETURN(Prediction estimate, analytic.Predict(kernel, device, nullptr));
    row.estimate_features = KernelFeatures(kernel, device, nullptr, estimate);
    row.estimate_analytic_us = estimate.microseconds;
  }
  return row;
}

LearnedModel::LearnedModel(std::unique_ptr<CostModel> analytic, LearnedModelOptions options)
    : analytic_(std::move(analytic)), options_(options), random_(options.seed) {}

LearnedModel::~LearnedModel() {
  if (booster_ != nullptr) XGBoosterFree(booster_);
}

Expected<std::unique_ptr<LearnedModel>> LearnedModel::FromRecord(
    const db::ModelRecord& record, std::unique_ptr<CostModel> analytic,
    LearnedModelOptions options) {
  if (record.format != kFormat) {
    return InvalidArgument("stored model " + std::to_string(record.id) + " has format '" +
                           record.format + "', not " + kFormat);
  }
  if (record.feature_schema != kFeatureSchemaVersion) {
    return InvalidArgument("stored model " + std::to_string(record.id) + " uses feature schema " +
                           std::to_string(record.feature_schema) + ", this tilesmith " +
                           std::to_string(kFeatureSchemaVersion));
  }
  if (record.meta.contains("objective")) {
    TS_ASSIGN_OR_RETURN(options.objective,
                        ParseObjective(record.meta["objective"].get<std::string>()));
  }
  auto model = std::make_unique<LearnedModel>(std::move(analytic), options);
  BoosterHandle booster = nullptr;
  TS_XGB(XGBoosterCreate(nullptr, 0, &booster), "creating a booster");
  model->booster_ = booster;
  TS_XGB(XGBoosterLoadModelFromBuffer(booster, record.data.data(), record.data.size()),
         "loading stored model " + std::to_string(record.id));
  // The schema version should have caught a different column count; a record written by
  // hand or by a build that changed features without bumping it must not reach Predict.
  bst_ulong columns = 0;
  TS_XGB(XGBoosterGetNumFeature(booster, &columns), "reading the model's feature count");
  if (columns != FeatureNames().size()) {
    return InvalidArgument("stored model " + std::to_string(record.id) + " has " +
                           std::to_string(columns) + " features, schema " +
                           std::to_string(kFeatureSchemaVersion) + " has " +
                           std::to_string(FeatureNames().size()));
  }
  model->seen_rows_ = record.training_rows;
  model->loaded_fusions_ = record.fusions;
  // The replay sample stored with the model, so a retrain after loading (a tune's, after
  // each measured batch) boosts on new rows beside old ones instead of on the new alone.
  if (record.meta.contains("replay") && record.meta["replay"].is_array()) {
    for (const nlohmann::json& item : record.meta["replay"]) {
      TrainingRow row;
      if (!item.is_object() || !item.contains("x") || !item["x"].is_array() ||
          item["x"].size() != FeatureNames().size()) {
        return InvalidArgument("stored model " + std::to_string(record.id) +
                               ": a replay row does not match the feature schema");
      }
      // JSON has no NaN: a missing feature (NaN, XGBoost's "missing") was written as null.
      auto features = [](const nlohmann::json& values) {
        std::vector<float> read;
        for (const nlohmann::json& x : values) {
          read.push_back(x.is_number() ? x.get<float>() : std::numeric_limits<float>::quiet_NaN());
        }
        return read;
      };
      row.features = features(item["x"]);
      auto number = [&](const char* name) {
        return item.contains(name) && item[name].is_number() ? item[name].get<double>() : 0.0;
      };
      // A row of a compiled kernel keeps its estimate (older records have none).
      if (item.contains("estimate_x") && item["estimate_x"].is_array() &&
          item["estimate_x"].size() == FeatureNames().size() &&
          number("estimate_analytic_us") > 0) {
        row.estimate_features = features(item["estimate_x"]);
        row.estimate_analytic_us = number("estimate_analytic_us");
      }
      row.fusion = item.contains("fusion") && item["fusion"].is_string()
                       ? item["fusion"].get<std::string>()
                       : std::string();
      row.measured_us = number("measured_us");
      row.analytic_us = number("analytic_us");
      if (!(row.measured_us > 0) || !(row.analytic_us > 0)) {
        return InvalidArgument("stored model " + std::to_string(record.id) +
                               ": a replay row has no positive times");
      }
      model->pool_.push_back(std::move(row));
    }
  }
  return model;
}

std::string_view LearnedModel::name() const {
  return trained() ? std::string_view(kLearnedModelName) : analytic_->name();
}

bool LearnedModel::trained() const {
  std::lock_guard lock(mutex_);
  return booster_ != nullptr;
}

int64_t LearnedModel::training_rows() const {
  std::lock_guard lock(mutex_);
  return seen_rows_;
}

int64_t LearnedModel::fusions() const {
  std::lock_guard lock(mutex_);
  return std::max<int64_t>(loaded_fusions_, static_cast<int64_t>(seen_fusions_.size()));
}

int LearnedModel::boosted_rounds() const {
  std::lock_guard lock(mutex_);
  int rounds = 0;
  if (booster_ != nullptr) XGBoosterBoostedRounds(booster_, &rounds);
  return rounds;
}

std::string LearnedModel::FallbackReason() const {
  int64_t fusions = std::max<int64_t>(loaded_fusions_, seen_fusions_.size());
  if (seen_rows_ < options_.min_rows) {
    return std::to_string(seen_rows_) + " measurements < " + std::to_string(options_.min_rows);
  }
  return std::to_string(fusions) + " fusions < " + std::to_string(options_.min_fusions);
}

std::string LearnedModel::Describe() const {
  int rounds = boosted_rounds();
  std::lock_guard lock(mutex_);
  int64_t fusions = std::max<int64_t>(loaded_fusions_, seen_fusions_.size());
  if (booster_ == nullptr) {
    return std::string(analytic_->name()) + " (fallback: " + FallbackReason() + ")";
  }
  return std::string(kLearnedModelName) + " (" + std::to_string(seen_rows_) + " measurements, " +
         std::to_string(fusions) + " fusions, " + std::to_string(rounds) + " trees, " +
         std::string(ObjectiveName(options_.objective)) + ")";
}

void LearnedModel::Keep(std::span<const TrainingRow> rows) {
  std::set<std::string> fusions(seen_fusions_.begin(), seen_fusions_.end());
  for (const TrainingRow& row : rows) {
    fusions.insert(row.fusion);
    ++seen_rows_;
    // Reservoir sampling (seeded): every row seen has the same chance to stay.
    if (static_cast<int64_t>(pool_.size()) < options_.max_rows) {
      pool_.push_back(row);
    } else {
      uint64_t slot = random_() % static_cast<uint64_t>(seen_rows_);
      if (slot < pool_.size()) pool_[slot] = row;
    }
  }
  seen_fusions_.assign(fusions.begin(), fusions.end());
}

Status LearnedModel::Retrain(std::span<const TrainingRow> rows) {
  std::lock_guard lock(mutex_);
  size_t pool_before = pool_.size();
  Keep(rows);
  int64_t fusions = std::max<int64_t>(loaded_fusions_, seen_fusions_.size());
  if (booster_ == nullptr) {
    if (seen_rows_ < options_.min_rows || fusions < options_.min_fusions) return OkStatus();
    return TrainFresh(pool_);
  }
  int rounds = 0;
  TS_XGB(XGBoosterBoostedRounds(booster_, &rounds), "counting rounds");
  if (rounds + options_.retrain_rounds > options_.max_rounds) return TrainFresh(pool_);
  // The new rows and a seeded replay of older ones, so the added trees fit the new data
  // without drifting away from what the earlier trees learned.
  std::vector<TrainingRow> batch(rows.begin(), rows.end());
  std::vector<size_t> old(std::min(pool_before, pool_.size()));
  std::iota(old.begin(), old.end(), 0);
  std::shuffle(old.begin(), old.end(), random_);
  old.resize(std::min<size_t>(old.size(), static_cast<size_t>(options_.replay_rows)));
  std::sort(old.begin(), old.end());
  for (size_t i : old) batch.push_back(pool_[i]);
  if (batch.empty()) return OkStatus();
  return Boost(TrainingSet(batch), options_.retrain_rounds);
}

Status LearnedModel::TrainFresh(std::span<const TrainingRow> rows) {
  if (booster_ != nullptr) {
    XGBoosterFree(booster_);
    booster_ = nullptr;
  }
  return Boost(TrainingSet(rows), options_.rounds);
}

Status LearnedModel::Boost(std::span<const TrainingRow> rows, int rounds) {
  Matrix matrix;
  TS_RETURN_IF_ERROR(MakeMatrix(rows, options_.objective, /*labelled=*/true, matrix));
  bool fresh = booster_ == nullptr;
  if (fresh) {
    BoosterHandle booster = nullptr;
    TS_XGB(XGBoosterCreate(&matrix.handle_, 1, &booster), "creating a booster");
    booster_ = booster;
  }
  bool pairwise = options_.objective == Objective::kPairwise;
  const std::map<std::string, std::string> params = {
      {"objective", pairwise ? "rank:pairwise" : "reg:squarederror"},
      // The base margin carries the analytic time; the trees add a correction around 0.
      {"base_score", "0"},
      {"tree_method", "hist"},
      {"max_depth", std::to_string(options_.max_depth)},
      {"eta", std::to_string(options_.eta)},
      {"min_child_weight", std::to_string(options_.min_child_weight)},
      {"subsample", std::to_string(options_.subsample)},
      {"colsample_bytree", std::to_string(options_.colsample)},
      {"nthread", std::to_string(options_.threads)},
      {"seed", std::to_string(options_.seed)},
      {"verbosity", "0"},
  };
  for (const auto& [key, value] : params) {
    TS_XGB(XGBoosterSetParam(booster_, key.c_str(), value.c_str()), "setting " + key);
  }
  int done = 0;
  TS_XGB(XGBoosterBoostedRounds(booster_, &done), "counting rounds");
  for (int i = 0; i < rounds; ++i) {
    TS_XGB(XGBoosterUpdateOneIter(booster_, done + i, matrix.handle_), "boosting");
  }
  return OkStatus();
}

Expected<std::vector<double>> LearnedModel::PredictLocked(std::span<const TrainingRow> rows) const {
  std::vector<double> times;
  if (booster_ == nullptr) {
    for (const TrainingRow& row : rows) times.push_back(row.analytic_us);
    return times;
  }
  if (rows.empty()) return times;
  Matrix matrix;
  TS_RETURN_IF_ERROR(MakeMatrix(rows, options_.objective, /*labelled=*/false, matrix));
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  TS_XGB(XGBoosterPredictFromDMatrix(booster_, matrix.handle_,
                                     R"({"type": 1, "training": false, "iteration_begin": 0, )"
                                     R"("iteration_end": 0, "strict_shape": false})",
                                     &shape, &dims, &result),
         "predicting");
  bool pairwise = options_.objective == Objective::kPairwise;
  for (size_t i = 0; i < rows.size(); ++i) {
    double log_time = pairwise ? -result[i] : result[i];
    double log_analytic = std::log(std::max(kLogFloorUs, rows[i].analytic_us));
    times.push_back(std::exp(log_analytic + options_.correction_share * (log_time - log_analytic)));
  }
  return times;
}

Expected<std::vector<double>> LearnedModel::PredictRows(std::span<const TrainingRow> rows) const {
  std::lock_guard lock(mutex_);
  return PredictLocked(rows);
}

Expected<Prediction> LearnedModel::Predict(const emitters::KernelIR& kernel,
                                           const DeviceFigures& device,
                                           const ResourceUsage* usage) const {
  TS_ASSIGN_OR_RETURN(Prediction analytic, analytic_->Predict(kernel, device, usage));
  std::lock_guard lock(mutex_);
  if (booster_ == nullptr) {
    analytic.breakdown["fallback"] = FallbackReason();
    return analytic;
  }
  TrainingRow row;
  row.features = KernelFeatures(kernel, device, usage, analytic);
  row.analytic_us = analytic.microseconds;
  TS_ASSIGN_OR_RETURN(std::vector<double> times, PredictLocked(std::span(&row, 1)));
  Prediction prediction;
  prediction.microseconds = times[0];
  prediction.breakdown = {
      {"model", kLearnedModelName},
      {"objective", ObjectiveName(options_.objective)},
      {"analytic_us", analytic.microseconds},
      {"correction", times[0] / std::max(1e-9, analytic.microseconds)},
      {"training_rows", seen_rows_},
      {"analytic", std::move(analytic.breakdown)},
  };
  return prediction;
}

Expected<db::ModelRecord> LearnedModel::ToRecord(const std::string& device_key,
                                                 const std::string& compiler_version) const {
  std::lock_guard lock(mutex_);
  if (booster_ == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the learned model is not trained (" + FallbackReason() + ")");
  }
  bst_ulong length = 0;
  const char* buffer = nullptr;
  TS_XGB(XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &length, &buffer),
         "saving the model");
  int rounds = 0;
  XGBoosterBoostedRounds(booster_, &rounds);
  db::ModelRecord record;
  record.name = kLearnedModelName;
  record.device_key = device_key;
  record.compiler_version = compiler_version;
  record.feature_schema = kFeatureSchemaVersion;
  record.format = kFormat;
  record.data.assign(buffer, length);
  record.training_rows = seen_rows_;
  record.fusions = std::max<int64_t>(loaded_fusions_, seen_fusions_.size());
  record.meta = {{"objective", ObjectiveName(options_.objective)},
                 {"trees", rounds},
                 {"analytic_model", analytic_->name()},
                 {"features", FeatureNames().size()}};
  // An evenly spaced sample of the rows kept, for FromRecord's retrains to replay.
  nlohmann::json replay = nlohmann::json::array();
  size_t kept =
      std::min(pool_.size(), static_cast<size_t>(std::max<int64_t>(0, options_.replay_rows)));
  for (size_t k = 0; k < kept; ++k) {
    const TrainingRow& row = pool_[k * pool_.size() / kept];
    nlohmann::json item = {{"fusion", row.fusion},
                           {"x", row.features},
                           {"measured_us", row.measured_us},
                           {"analytic_us", row.analytic_us}};
    if (!row.estimate_features.empty()) {
      item["estimate_x"] = row.estimate_features;
      item["estimate_analytic_us"] = row.estimate_analytic_us;
    }
    replay.push_back(std::move(item));
  }
  record.meta["replay"] = std::move(replay);
  return record;
}

}  // namespace tilesmith::costmodel
