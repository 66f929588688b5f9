// POST /v1/split: `tilesmith split` on the service. The per-device kernels are predicted by
// the mesh device's cost model, never measured, so the request never waits on a tune; the
// mesh comes inline or by the name of a file in configs/meshes/, and names from the client
// are never turned into paths outside the configuration folders.
#include <cctype>
#include <filesystem>

#include "service/api.h"
#include "service/fusion_input.h"
#include "split/dim_labels.h"
#include "split/mesh.h"
#include "split/partition_spec.h"
#include "split/rank.h"
#include "split/strategy.h"
#include "tuner/device.h"

namespace tilesmith::service {
namespace {

using nlohmann::json;

bool IsPlainName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

std::string MeshesDir() {
  return (std::filesystem::path(tuner::DefaultDevicesDir()).parent_path() / "meshes").string();
}

// Messages name meshes and devices by their place in the configs folder, never by the
// server's install path, which is no business of a client's.
Expected<split::Mesh> MeshOf(const json& body) {
  auto mesh = body.find("mesh");
  if (mesh == body.end()) {
    return InvalidArgument(
        "\"mesh\" is required: a mesh object or the name of one in configs/meshes");
  }
  if (mesh->is_object()) return split::ParseMesh(mesh->dump(), "mesh");
  if (!mesh->is_string() || !IsPlainName(mesh->get<std::string>())) {
    return InvalidArgument("\"mesh\" must be a mesh object or a mesh name (letters, digits, _ -)");
  }
  std::string name = mesh->get<std::string>();
  std::string path = MeshesDir() + "/" + name + ".json";
  if (!std::filesystem::exists(path)) {
    return InvalidArgument("no mesh named \"" + name + "\" in configs/meshes");
  }
  return split::LoadMeshFile(path, "configs/meshes/" + name + ".json");
}

// Specs given as text (`"P('i', None)"`), JSON (`["i", null]`), or null (free).
Expected<std::vector<std::optional<split::PartitionSpec>>> SpecsOf(const json& body,
                                                                   const char* field) {
  std::vector<std::optional<split::PartitionSpec>> specs;
  auto list = body.find(field);
  if (list == body.end()) return specs;
  if (!list->is_array()) return InvalidArgument(std::string("\"") + field + "\" must be a list");
  for (const json& entry : *list) {
    if (entry.is_null()) {
      specs.emplace_back(std::nullopt);
      continue;
    }
    auto spec = entry.is_string() ? split::ParseSpec(entry.get<std::string>())
                                  : split::ParseSpecJson(entry);
    if (!spec) return std::unexpected(spec.error().WithContext(field));
    specs.emplace_back(std::move(*spec));
  }
  return specs;
}

}  // namespace

HttpResponse Api::Split(const json& body) {
  auto mesh = MeshOf(body);
  if (!mesh) return ErrorResponse(400, mesh.error().message);
  if (!IsPlainName(mesh->device)) {
    return ErrorResponse(400, "the mesh's device must name a description in configs/devices");
  }
  auto device = tuner::LoadDeviceFile(tuner::DefaultDevicesDir() + "/" + mesh->device + ".json");
  if (!device) {
    return ErrorResponse(400, "the mesh's device \"" + mesh->device +
                                  "\" is not a readable description in configs/devices");
  }
  auto in_specs = SpecsOf(body, "in_specs");
  if (!in_specs) return ErrorResponse(400, in_specs.error().message);
  auto out_specs = SpecsOf(body, "out_specs");
  if (!out_specs) return ErrorResponse(400, out_specs.error().message);
  auto top_field = body.find("top");
  if (top_field != body.end() && !top_field->is_number_integer()) {
    return ErrorResponse(400, "\"top\" must be an integer (0: every strategy)");
  }
  int64_t top = top_field == body.end() ? 10 : top_field->get<int64_t>();
  auto input = ReadFusion(body, options_.max_instructions);
  if (!input) {
    bool too_large = input.error().code == ErrorCode::kResourceExhausted;
    return ErrorResponse(too_large ? 422 : 400, input.error().message);
  }
  const hlo::HloModule& module = *input->module;
  auto labels = split::LabelDims(*module.fusion());
  if (!labels) return ErrorResponse(400, labels.error().message);
  split::SplitRequest request{*in_specs, *out_specs};
  request.max_strategies = std::min<int64_t>(request.max_strategies, options_.max_space);
  auto strategies = split::EnumerateStrategies(*module.fusion(), *labels, *mesh, request);
  if (!strategies) {
    int status = strategies.error().code == ErrorCode::kResourceExhausted ? 422 : 400;
    return ErrorResponse(status, strategies.error().message);
  }
  split::PredictedKernelTimer timer(*device);
  if (auto ranked = split::RankStrategies(module, *labels, *mesh, timer, *strategies); !ranked) {
    // What the fusion or mesh asks for and tilesmith cannot do is the request's (400); only
    // our own failures are 500.
    return ErrorResponse(StatusFor(ranked.error()), ranked.error().message);
  }
  const int64_t count = static_cast<int64_t>(strategies->size());
  const int64_t shown = top <= 0 ? count : std::min(top, count);
  json rows = json::array();
  for (int64_t r = 0; r < shown; ++r) {
    json row = split::StrategyToJson((*strategies)[r]);
    row["rank"] = r + 1;
    rows.push_back(std::move(row));
  }
  return JsonResponse(200, {{"fingerprint", input->fingerprint},
                            {"name", input->name},
                            {"mesh", {{"name", mesh->name}, {"shape", mesh->ShapeString()}}},
                            {"device", device->record.Key()},
                            {"kernel_times", "predicted"},
                            {"strategies", count},
                            {"top", std::move(rows)}});
}

}  // namespace tilesmith::service
