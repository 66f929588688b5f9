#include "db/models.h"

namespace tilesmith::db {

Status ValidateModel(const ModelRecord& model) {
  if (model.name.empty()) return InvalidArgument("model name is empty");
  if (model.device_key.empty()) return InvalidArgument("model " + model.name + ": no device key");
  if (model.compiler_version.empty()) {
    return InvalidArgument("model " + model.name + ": no compiler version");
  }
  if (model.feature_schema <= 0) {
    return InvalidArgument("model " + model.name + ": feature schema must be >= 1");
  }
  if (model.format.empty()) return InvalidArgument("model " + model.name + ": no format");
  if (model.data.empty()) return InvalidArgument("model " + model.name + ": empty model data");
  if (model.training_rows < 0 || model.fusions < 0) {
    return InvalidArgument("model " + model.name + ": negative training counts");
  }
  if (!model.meta.is_object())
    return InvalidArgument("model " + model.name + ": meta not an object");
  return OkStatus();
}

}  // namespace tilesmith::db
