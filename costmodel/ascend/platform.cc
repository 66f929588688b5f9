#include "costmodel/ascend/platform.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tilesmith::costmodel::ascend {
namespace {

// The spec's 910B numbers (vector cores 48 on B1/B2, 40 on B3/B4) are in the JSON files;
// the code only knows which names exist, so a file stays the one place a number lives.
constexpr const char* kKnownNames[] = {"910b1", "910b2", "910b3", "910b4"};

// Generous bounds that catch typos (a UB given in KiB, a core count of 0) without
// guessing future chips.
constexpr int64_t kMaxVectorCores = 4096;
constexpr int64_t kMinUbBytes = 1024;
constexpr int64_t kMaxUbBytes = int64_t{1} << 30;

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// "910b1", "ascend:910b1", "ascend910b1", "Ascend910B1" -> "910b1"; nullopt for others.
std::optional<std::string> KnownName(std::string_view name_or_path) {
  std::string name = Lower(name_or_path);
  for (std::string_view prefix : {"ascend:", "ascend_", "ascend"}) {
    if (name.starts_with(prefix)) {
      name.erase(0, prefix.size());
      break;
    }
  }
  for (const char* known : kKnownNames) {
    if (name == known) return name;
  }
  return std::nullopt;
}

Expected<int64_t> IntegerField(const nlohmann::json& json, const char* key, int64_t min,
                               int64_t max, std::string_view source) {
  const nlohmann::json& value = json.at(key);
  if (!value.is_number_integer()) {
    return InvalidArgument(std::string(source) + ": '" + key + "' must be an integer");
  }
  int64_t number = value.get<int64_t>();
  if (number < min || number > max) {
    return InvalidArgument(std::string(source) + ": '" + key + "' is " + std::to_string(number) +
                           "; expected " + std::to_string(min) + " to " + std::to_string(max));
  }
  return number;
}

}  // namespace

std::vector<std::string> KnownPlatformNames() {
  return std::vector<std::string>(std::begin(kKnownNames), std::end(kKnownNames));
}

Expected<ascgraph::Platform> ParsePlatformJson(std::string_view text, std::string_view source) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    return InvalidArgument(std::string(source) + ": not JSON: " + error.what());
  }
  if (!json.is_object()) return InvalidArgument(std::string(source) + ": expected a JSON object");
  static const char* kAllowed[] = {"name",         "target",   "description",
                                   "vector_cores", "ub_bytes", "ub_total_bytes"};
  for (const auto& [key, value] : json.items()) {
    if (std::find(std::begin(kAllowed), std::end(kAllowed), key) == std::end(kAllowed)) {
      return InvalidArgument(std::string(source) + ": unknown key '" + key +
                             "' (known: name, target, description, vector_cores, ub_bytes, "
                             "ub_total_bytes)");
    }
  }
  for (const char* required : {"vector_cores", "ub_bytes"}) {
    if (!json.contains(required)) {
      return InvalidArgument(std::string(source) + ": missing '" + required + "'");
    }
  }
  for (const char* text_key : {"name", "target", "description"}) {
    if (json.contains(text_key) && !json[text_key].is_string()) {
      return InvalidArgument(std::string(source) + ": '" + text_key + "' must be a string");
    }
  }
  ascgraph::Platform platform;
  TS_ASSIGN_OR_RETURN(platform.vector_cores,
                      IntegerField(json, "vector_cores", 1, kMaxVectorCores, source));
  TS_ASSIGN_OR_RETURN(platform.ub_bytes,
                      IntegerField(json, "ub_bytes", kMinUbBytes, kMaxUbBytes, source));
  if (json.contains("ub_total_bytes")) {
    TS_ASSIGN_OR_RETURN(int64_t total, IntegerField(json, "ub_total_bytes", platform.ub_bytes,
                                                    kMaxUbBytes, source));
    (void)total;  // documents the physical size; the model uses the usable part only
  }
  platform.name = json.contains("name") ? json["name"].get<std::string>()
                                        : std::filesystem::path(source).stem().string();
  return platform;
}

Expected<ascgraph::Platform> LoadPlatform(std::string_view name_or_path,
                                          const std::string& devices_dir) {
  std::filesystem::path path;
  if (auto known = KnownName(name_or_path)) {
    path = std::filesystem::path(devices_dir) / ("ascend_" + *known + ".json");
  } else if (name_or_path.ends_with(".json") || name_or_path.find('/') != std::string_view::npos) {
    path = std::string(name_or_path);
  } else {
    return InvalidArgument("unknown platform '" + std::string(name_or_path) +
                           "' (910b1, 910b2, 910b3, 910b4, or a PATH.json)");
  }
  std::ifstream file(path);
  if (!file) {
    return MakeError(ErrorCode::kNotFound, "cannot read platform file " + path.string());
  }
  std::stringstream contents;
  contents << file.rdbuf();
  return ParsePlatformJson(contents.str(), path.string());
}

std::string DefaultDevicesDir() {
  if (const char* dir = std::getenv("TILESMITH_DEVICES_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return TILESMITH_DEFAULT_DEVICES_DIR;
}

}  // namespace tilesmith::costmodel::ascend
