#include "costmodel/model_selection.h"

#include "costmodel/features.h"

namespace tilesmith::costmodel {

ModelChoice BestModelFor(const emitters::Target& target, int64_t cache_bytes, db::Store* store,
                         const std::string& device_key, const std::string& compiler_version,
                         const LearnedModelOptions& options) {
  ModelChoice choice;
  auto untrained = [&](const std::string& why) {
    auto model = std::make_unique<LearnedModel>(AnalyticModelFor(target, cache_bytes), options);
    choice.learned = model.get();
    choice.description = std::string(model->name()) + " (" + why + ")";
    choice.model = std::move(model);
    return std::move(choice);
  };
  if (store == nullptr) return untrained("no results database");
  auto stored =
      store->LatestModel(kLearnedModelName, device_key, compiler_version, kFeatureSchemaVersion);
  if (!stored) return untrained("reading the stored model failed: " + stored.error().message);
  if (!stored->has_value()) {
    return untrained(
        "no learned model stored for this device, compiler version and feature schema " +
        std::to_string(kFeatureSchemaVersion) + "; `tilesmith model train` makes one");
  }
  auto learned = LearnedModel::FromRecord(**stored, AnalyticModelFor(target, cache_bytes), options);
  if (!learned) return untrained("the stored model did not load: " + learned.error().message);
  choice.learned = learned->get();
  choice.stored = true;
  choice.description = (*learned)->Describe() + ", stored " + (*stored)->created_at;
  choice.model = std::move(*learned);
  return choice;
}

}  // namespace tilesmith::costmodel
