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

// The record's data: {"compiled": [booster, …], "estimated": [booster, …]}, each booster
// XGBoost's own JSON as a string.
constexpr char kFormat[] = "xgboost-json-bags";
constexpr const char* kKindNames[] = {"compiled", "estimated"};

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

// What one kind's trees are trained on: the compiled rows, or the rows as seen before
// compiling (the uncompiled rows and the compiled rows' estimates; a compiled row without
// one, made by hand, as it is); ordered by fusion (stable), as pairwise groups need.
std::vector<TrainingRow> TrainingSet(std::span<const TrainingRow> rows, bool compiled) {
  std::vector<TrainingRow> set;
  for (const TrainingRow& row : rows) {
    if (compiled) {
      if (row.compiled) set.push_back(row);
    } else {
      set.push_back(row.compiled && !row.estimate_features.empty() ? EstimateRow(row) : row);
    }
  }
  std::stable_sort(set.begin(), set.end(),
                   [](const TrainingRow& a, const TrainingRow& b) { return a.fusion < b.fusion; });
  return set;
}

// `rounds` more boosting rounds of `booster` on `matrix`, its row and column samples seeded
// by `seed`.
Status BoostOne(BoosterHandle booster, const Matrix& matrix, const LearnedModelOptions& options,
                uint64_t seed, int rounds) {
  bool pairwise = options.objective == Objective::kPairwise;
  const std::map<std::string, std::string> params = {
      {"objective", pairwise ? "rank:pairwise" : "reg:squarederror"},
      // The base margin carries the analytic time; the trees add a correction around 0.
      {"base_score", "0"},
      {"tree_method", "hist"},
      {"max_depth", std::to_string(options.max_depth)},
      {"eta", std::to_string(options.eta)},
      {"min_child_weight", std::to_string(options.min_child_weight)},
      {"subsample", std::to_string(options.subsample)},
      {"colsample_bytree", std::to_string(options.colsample)},
      {"nthread", std::to_string(options.threads)},
      {"seed", std::to_string(seed)},
      {"verbosity", "0"},
  };
  for (const auto& [key, value] : params) {
    TS_XGB(XGBoosterSetParam(booster, key.c_str(), value.c_str()), "setting " + key);
  }
  int done = 0;
  TS_XGB(XGBoosterBoostedRounds(booster, &done), "counting rounds");
  for (int i = 0; i < rounds; ++i) {
    TS_XGB(XGBoosterUpdateOneIter(booster, done + i, matrix.handle_), "boosting");
  }
  return OkStatus();
}

// Rows and distinct fusions of the compiled rows among `rows`.
std::pair<int64_t, int64_t> CompiledCounts(std::span<const TrainingRow> rows) {
  std::set<std::string_view> fusions;
  int64_t count = 0;
  for (const TrainingRow& row : rows) {
    if (!row.compiled) continue;
    ++count;
    fusions.insert(row.fusion);
  }
  return {count, static_cast<int64_t>(fusions.size())};
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
  estimate.compiled = false;
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
    row.compiled = true;
    TS_ASSIGN_OR_RETURN(Prediction estimate, analytic.Predict(kernel, device, nullptr));
    row.estimate_features = KernelFeatures(kernel, device, nullptr, estimate);
    row.estimate_analytic_us = estimate.microseconds;
  }
  return row;
}

LearnedModel::LearnedModel(std::unique_ptr<CostModel> analytic, LearnedModelOptions options)
    : analytic_(std::move(analytic)), options_(options), random_(options.seed) {}

LearnedModel::~LearnedModel() {
  Free(kCompiledRows);
  Free(kEstimatedRows);
}

void LearnedModel::Free(Kind kind) {
  for (void* booster : boosters_[kind]) XGBoosterFree(booster);
  boosters_[kind].clear();
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
  std::string id = std::to_string(record.id);
  nlohmann::json bags = nlohmann::json::parse(record.data, nullptr, /*allow_exceptions=*/false);
  if (!bags.is_object() || !bags.contains(kKindNames[kEstimatedRows])) {
    return InvalidArgument("stored model " + id + ": its data is not a " + kFormat + " document");
  }
  for (Kind kind : {kCompiledRows, kEstimatedRows}) {
    const nlohmann::json& bag = bags.value(kKindNames[kind], nlohmann::json::array());
    if (!bag.is_array() || (kind == kEstimatedRows && bag.empty())) {
      return InvalidArgument("stored model " + id + ": no " + kKindNames[kind] + " boosters");
    }
    for (const nlohmann::json& saved : bag) {
      if (!saved.is_string()) {
        return InvalidArgument("stored model " + id + ": a booster is not a JSON string");
      }
      BoosterHandle booster = nullptr;
      TS_XGB(XGBoosterCreate(nullptr, 0, &booster), "creating a booster");
      model->boosters_[kind].push_back(booster);
      const std::string& text = saved.get_ref<const std::string&>();
      TS_XGB(XGBoosterLoadModelFromBuffer(booster, text.data(), text.size()),
             "loading stored model " + id);
      // The schema version should have caught a different column count; a record written
      // by hand or by a build that changed features without bumping it must not reach
      // Predict.
      bst_ulong columns = 0;
      TS_XGB(XGBoosterGetNumFeature(booster, &columns), "reading the model's feature count");
      if (columns != FeatureNames().size()) {
        return InvalidArgument("stored model " + id + " has " + std::to_string(columns) +
                               " features, schema " + std::to_string(kFeatureSchemaVersion) +
                               " has " + std::to_string(FeatureNames().size()));
      }
    }
  }
  model->seen_rows_ = record.training_rows;
  model->loaded_fusions_ = record.fusions;
  if (record.meta.contains("selection")) {
    auto selection = LearnedSelection::FromJson(record.meta["selection"]);
    if (!selection) {
      return InvalidArgument("stored model " + id + ": " + selection.error().message);
    }
    model->selection_ = std::move(*selection);
  }
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
      row.compiled = item.value("compiled", false);
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
  return TrainedLocked();
}

bool LearnedModel::compiled_trained() const {
  std::lock_guard lock(mutex_);
  return !boosters_[kCompiledRows].empty();
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
  return RoundsLocked();
}

int LearnedModel::RoundsLocked() const {
  int rounds = 0;
  if (TrainedLocked()) XGBoosterBoostedRounds(boosters_[kEstimatedRows].front(), &rounds);
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
  std::lock_guard lock(mutex_);
  int64_t fusions = std::max<int64_t>(loaded_fusions_, seen_fusions_.size());
  if (!TrainedLocked()) {
    return std::string(analytic_->name()) + " (fallback: " + FallbackReason() + ")";
  }
  std::string kinds =
      boosters_[kCompiledRows].empty() ? "estimated rows" : "compiled and estimated rows";
  return std::string(kLearnedModelName) + " (" + std::to_string(seen_rows_) + " measurements, " +
         std::to_string(fusions) + " fusions, " + std::to_string(boosters_[kEstimatedRows].size()) +
         " x " + std::to_string(RoundsLocked()) + " trees for " + kinds + ", " +
         std::string(ObjectiveName(options_.objective)) + "; " + selection_.Describe() + ")";
}

void LearnedModel::set_selection(LearnedSelection selection) {
  std::lock_guard lock(mutex_);
  selection_ = std::move(selection);
}

LearnedSelection LearnedModel::selection() const {
  std::lock_guard lock(mutex_);
  return selection_;
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
  if (!TrainedLocked()) {
    if (seen_rows_ < options_.min_rows || fusions < options_.min_fusions) return OkStatus();
    return TrainFresh(pool_);
  }
  if (RoundsLocked() + options_.retrain_rounds > options_.max_rounds) return TrainFresh(pool_);
  // Compiled rows get trees of their own once there are enough of them.
  auto [compiled_rows, compiled_fusions] = CompiledCounts(pool_);
  if (boosters_[kCompiledRows].empty() && compiled_rows >= options_.min_rows &&
      compiled_fusions >= options_.min_fusions) {
    return TrainFresh(pool_);
  }
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
  for (Kind kind : {kCompiledRows, kEstimatedRows}) {
    if (boosters_[kind].empty()) continue;
    std::vector<TrainingRow> set = TrainingSet(batch, kind == kCompiledRows);
    if (!set.empty()) TS_RETURN_IF_ERROR(Boost(kind, set, options_.retrain_rounds));
  }
  return OkStatus();
}

Status LearnedModel::TrainFresh(std::span<const TrainingRow> rows) {
  Free(kCompiledRows);
  Free(kEstimatedRows);
  auto [compiled_rows, compiled_fusions] = CompiledCounts(rows);
  if (compiled_rows >= options_.min_rows && compiled_fusions >= options_.min_fusions) {
    TS_RETURN_IF_ERROR(Boost(kCompiledRows, TrainingSet(rows, true), options_.rounds));
  }
  return Boost(kEstimatedRows, TrainingSet(rows, false), options_.rounds);
}

Status LearnedModel::Boost(Kind kind, std::span<const TrainingRow> rows, int rounds) {
  Matrix matrix;
  TS_RETURN_IF_ERROR(MakeMatrix(rows, options_.objective, /*labelled=*/true, matrix));
  std::vector<void*>& bag = boosters_[kind];
  if (bag.empty()) {
    for (int b = 0; b < std::max(1, options_.bag); ++b) {
      BoosterHandle booster = nullptr;
      TS_XGB(XGBoosterCreate(&matrix.handle_, 1, &booster), "creating a booster");
      bag.push_back(booster);
    }
  }
  for (size_t b = 0; b < bag.size(); ++b) {
    TS_RETURN_IF_ERROR(BoostOne(bag[b], matrix, options_, options_.seed + b, rounds));
  }
  return OkStatus();
}

// Each row by its kind's trees: a compiled row by the compiled rows' trees where there
// are some, else (and every other row) by the estimates' trees from its estimate.
Expected<std::vector<double>> LearnedModel::PredictLocked(std::span<const TrainingRow> rows) const {
  std::vector<double> times;
  if (!TrainedLocked()) {
    for (const TrainingRow& row : rows) times.push_back(row.analytic_us);
    return times;
  }
  bool compiled_trees = !boosters_[kCompiledRows].empty();
  std::array<std::vector<TrainingRow>, 2> by_kind;
  std::array<std::vector<size_t>, 2> positions;
  for (size_t i = 0; i < rows.size(); ++i) {
    const TrainingRow& row = rows[i];
    Kind kind = row.compiled && compiled_trees ? kCompiledRows : kEstimatedRows;
    bool from_estimate = kind == kEstimatedRows && row.compiled && !row.estimate_features.empty();
    by_kind[kind].push_back(from_estimate ? EstimateRow(row) : row);
    positions[kind].push_back(i);
  }
  times.assign(rows.size(), 0);
  for (Kind kind : {kCompiledRows, kEstimatedRows}) {
    if (by_kind[kind].empty()) continue;
    TS_ASSIGN_OR_RETURN(std::vector<double> predicted, PredictKind(kind, by_kind[kind]));
    for (size_t k = 0; k < predicted.size(); ++k) times[positions[kind][k]] = predicted[k];
  }
  // Where the selection gives the emitter to the analytic model, its time answers.
  if (selection_.decided) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!selection_.UsesLearned(EmitterOfFeatures(rows[i].features))) {
        times[i] = rows[i].analytic_us;
      }
    }
  }
  return times;
}

// The rows by `kind`'s bag: the boosters' margins (log times, the analytic base included)
// averaged, then `correction_share` of the correction applied.
Expected<std::vector<double>> LearnedModel::PredictKind(Kind kind,
                                                        std::span<const TrainingRow> rows) const {
  Matrix matrix;
  TS_RETURN_IF_ERROR(MakeMatrix(rows, options_.objective, /*labelled=*/false, matrix));
  std::vector<double> margins(rows.size(), 0);
  const std::vector<void*>& bag = boosters_[kind];
  for (void* booster : bag) {
    const bst_ulong* shape = nullptr;
    bst_ulong dims = 0;
    const float* result = nullptr;
    TS_XGB(XGBoosterPredictFromDMatrix(booster, matrix.handle_,
                                       R"({"type": 1, "training": false, "iteration_begin": 0, )"
                                       R"("iteration_end": 0, "strict_shape": false})",
                                       &shape, &dims, &result),
           "predicting");
    for (size_t i = 0; i < rows.size(); ++i) {
      margins[i] += static_cast<double>(result[i]) / static_cast<double>(bag.size());
    }
  }
  bool pairwise = options_.objective == Objective::kPairwise;
  std::vector<double> times;
  for (size_t i = 0; i < rows.size(); ++i) {
    double log_time = pairwise ? -margins[i] : margins[i];
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
  if (!TrainedLocked()) {
    analytic.breakdown["fallback"] = FallbackReason();
    return analytic;
  }
  if (!selection_.UsesLearned(kernel.emitter)) {
    analytic.breakdown["selected"] =
        "analytic: it ranked held-out fusions of emitter '" + kernel.emitter + "' better";
    return analytic;
  }
  TrainingRow row;
  row.compiled = usage != nullptr && usage->known() && !boosters_[kCompiledRows].empty();
  if (!row.compiled && usage != nullptr && usage->known()) {
    // No trees for compiled rows yet: the estimates' trees rank the kernel as estimated.
    TS_ASSIGN_OR_RETURN(analytic, analytic_->Predict(kernel, device, nullptr));
  }
  row.features = KernelFeatures(kernel, device, row.compiled ? usage : nullptr, analytic);
  row.analytic_us = analytic.microseconds;
  TS_ASSIGN_OR_RETURN(std::vector<double> times, PredictLocked(std::span(&row, 1)));
  Prediction prediction;
  prediction.microseconds = times[0];
  prediction.breakdown = {
      {"model", kLearnedModelName},
      {"objective", ObjectiveName(options_.objective)},
      {"trees", kKindNames[row.compiled ? kCompiledRows : kEstimatedRows]},
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
  if (!TrainedLocked()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the learned model is not trained (" + FallbackReason() + ")");
  }
  nlohmann::json bags = nlohmann::json::object();
  for (Kind kind : {kCompiledRows, kEstimatedRows}) {
    nlohmann::json& bag = bags[kKindNames[kind]] = nlohmann::json::array();
    for (void* booster : boosters_[kind]) {
      bst_ulong length = 0;
      const char* buffer = nullptr;
      TS_XGB(XGBoosterSaveModelToBuffer(booster, R"({"format": "json"})", &length, &buffer),
             "saving the model");
      bag.push_back(std::string(buffer, length));
    }
  }
  int rounds = RoundsLocked();
  db::ModelRecord record;
  record.name = kLearnedModelName;
  record.device_key = device_key;
  record.compiler_version = compiler_version;
  record.feature_schema = kFeatureSchemaVersion;
  record.format = kFormat;
  record.data = bags.dump();
  record.training_rows = seen_rows_;
  record.fusions = std::max<int64_t>(loaded_fusions_, seen_fusions_.size());
  record.meta = {{"objective", ObjectiveName(options_.objective)},
                 {"trees", rounds},
                 {"bag", boosters_[kEstimatedRows].size()},
                 {"compiled_trees", !boosters_[kCompiledRows].empty()},
                 {"analytic_model", analytic_->name()},
                 {"features", FeatureNames().size()},
                 {"selection", selection_.ToJson()}};
  // An evenly spaced sample of the rows kept, for FromRecord's retrains to replay.
  nlohmann::json replay = nlohmann::json::array();
  size_t kept =
      std::min(pool_.size(), static_cast<size_t>(std::max<int64_t>(0, options_.replay_rows)));
  for (size_t k = 0; k < kept; ++k) {
    const TrainingRow& row = pool_[k * pool_.size() / kept];
    nlohmann::json item = {{"fusion", row.fusion},
                           {"x", row.features},
                           {"compiled", row.compiled},
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
