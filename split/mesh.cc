#include "split/mesh.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace tilesmith::split {

using nlohmann::json;

int64_t Mesh::device_count() const {
  int64_t count = 1;
  for (const MeshAxis& axis : axes) count *= axis.size;
  return count;
}

int64_t Mesh::AxisIndex(std::string_view name) const {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

std::string Mesh::ShapeString() const {
  std::string sizes, names;
  for (size_t i = 0; i < axes.size(); ++i) {
    sizes += (i ? "," : "") + std::to_string(axes[i].size);
    names += (i ? "," : "") + std::string("'") + axes[i].name + "'";
  }
  return "(" + sizes + ") (" + names + ")";
}

std::vector<int64_t> Mesh::Coordinates(int64_t device) const {
  std::vector<int64_t> coordinates(axes.size());
  for (int64_t i = static_cast<int64_t>(axes.size()) - 1; i >= 0; --i) {
    coordinates[i] = device % axes[i].size;
    device /= axes[i].size;
  }
  return coordinates;
}

int64_t Mesh::DeviceAt(const std::vector<int64_t>& coordinates) const {
  int64_t device = 0;
  for (size_t i = 0; i < axes.size(); ++i) device = device * axes[i].size + coordinates[i];
  return device;
}

namespace {

// The largest mesh the enumeration and the simulation are meant for; bigger meshes are
// more likely a typo than a cluster.
constexpr int64_t kMaxDevices = 1 << 16;

Expected<double> PositiveNumber(const json& object, const std::string& field,
                                const std::string& where) {
  if (!object.contains(field)) return InvalidArgument(where + ": missing '" + field + "'");
  const json& value = object.at(field);
  if (!value.is_number() || value.get<double>() < 0 ||
      (field == "bandwidth_gbps" && value.get<double>() == 0)) {
    return InvalidArgument(where + ": '" + field + "' must be a " +
                           (field == "bandwidth_gbps" ? "positive" : "non-negative") +
                           " number, not " + value.dump());
  }
  return value.get<double>();
}

}  // namespace

Expected<Mesh> ParseMesh(std::string_view json_text, std::string_view label) {
  const std::string file(label);
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return InvalidArgument(file + ": not valid JSON");
  if (!root.is_object()) return InvalidArgument(file + ": a mesh is a JSON object");
  Mesh mesh;
  for (const char* field : {"name", "description"}) {
    if (root.contains(field) && !root[field].is_string()) {
      return InvalidArgument(file + ": '" + field + "' must be a string");
    }
  }
  mesh.name = root.value("name", "");
  mesh.description = root.value("description", "");
  if (!root.contains("device") || !root["device"].is_string() ||
      root["device"].get<std::string>().empty()) {
    return InvalidArgument(file +
                           ": 'device' must name a device description (configs/devices stem, "
                           "e.g. \"h100_sxm\" or \"host\")");
  }
  mesh.device = root["device"].get<std::string>();
  if (!root.contains("axes") || !root["axes"].is_array() || root["axes"].empty()) {
    return InvalidArgument(file +
                           ": 'axes' must be a non-empty array of {name, size, "
                           "bandwidth_gbps, latency_us}");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < root["axes"].size(); ++i) {
    const json& entry = root["axes"][i];
    const std::string where = file + ": axes[" + std::to_string(i) + "]";
    if (!entry.is_object()) return InvalidArgument(where + ": must be an object");
    MeshAxis axis;
    if (!entry.contains("name") || !entry["name"].is_string() ||
        entry["name"].get<std::string>().empty()) {
      return InvalidArgument(where + ": 'name' must be a non-empty string");
    }
    axis.name = entry["name"].get<std::string>();
    if (!names.insert(axis.name).second) {
      return InvalidArgument(where + ": axis name '" + axis.name + "' is used twice");
    }
    if (!entry.contains("size") || !entry["size"].is_number_integer() ||
        entry["size"].get<int64_t>() < 1) {
      return InvalidArgument(where + " ('" + axis.name + "'): 'size' must be an integer >= 1");
    }
    axis.size = entry["size"].get<int64_t>();
    TS_ASSIGN_OR_RETURN(axis.bandwidth_gbps,
                        PositiveNumber(entry, "bandwidth_gbps", where + " ('" + axis.name + "')"));
    TS_ASSIGN_OR_RETURN(axis.latency_us,
                        PositiveNumber(entry, "latency_us", where + " ('" + axis.name + "')"));
    mesh.axes.push_back(std::move(axis));
  }
  if (mesh.device_count() > kMaxDevices) {
    return InvalidArgument(file + ": " + std::to_string(mesh.device_count()) +
                           " devices; at most " + std::to_string(kMaxDevices) + " are supported");
  }
  if (mesh.name.empty()) mesh.name = file;
  return mesh;
}

Expected<Mesh> LoadMeshFile(const std::string& path, std::string_view label) {
  const std::string name = label.empty() ? path : std::string(label);
  std::ifstream in(path);
  if (!in) return MakeError(ErrorCode::kIo, name + ": cannot read the mesh file");
  std::stringstream text;
  text << in.rdbuf();
  return ParseMesh(text.str(), name);
}

Mesh UniformMesh(const std::vector<int64_t>& sizes, const std::vector<std::string>& names,
                 double bandwidth_gbps, double latency_us, std::string device) {
  Mesh mesh;
  mesh.name = "uniform";
  mesh.device = std::move(device);
  for (size_t i = 0; i < sizes.size(); ++i) {
    mesh.axes.push_back({names[i], sizes[i], bandwidth_gbps, latency_us});
  }
  return mesh;
}

}  // namespace tilesmith::split
