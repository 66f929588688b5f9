#include "tools/sweep_file.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/ascgraph/reader.h"

namespace tilesmith::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Keys that may stand at the top level and in an entry (overriding the top level).
constexpr const char* kSettingKeys[] = {
    "targets", "strategy",   "budget", "time_s",       "seed",  "batch", "warmup_ms",
    "rep_ms",  "timeout_ms", "flush",  "free_layouts", "sizes", "format"};
constexpr const char* kTopLevelOnlyKeys[] = {"name", "description", "devices", "fusions"};

std::string KeyList(bool top_level) {
  std::string list;
  if (top_level) {
    for (const char* key : kTopLevelOnlyKeys) list += std::string(list.empty() ? "" : ", ") + key;
  } else {
    list = "path";
  }
  for (const char* key : kSettingKeys) list += std::string(", ") + key;
  return list;
}

bool IsKnownKey(const std::string& key, bool top_level) {
  auto in = [&](const auto& keys) {
    return std::any_of(std::begin(keys), std::end(keys), [&](const char* k) { return key == k; });
  };
  return in(kSettingKeys) || (top_level ? in(kTopLevelOnlyKeys) : key == "path");
}

// Checks and reads one JSON object's fields; errors name `path: error: where.key: …`.
class FieldReader {
 public:
  FieldReader(const std::string& path, std::string where) : path_(path), where_(std::move(where)) {}

  std::unexpected<Error> Fail(const std::string& key, const std::string& message) const {
    std::string at = where_.empty() ? key : key.empty() ? where_ : where_ + "." + key;
    return InvalidArgument(path_ + ": error: " + (at.empty() ? "" : at + ": ") + message);
  }
  std::string Where(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
  }

  Expected<int64_t> Integer(const json& value, const std::string& key, int64_t minimum) const {
    if (!value.is_number_integer() || value.get<int64_t>() < minimum) {
      return Fail(key,
                  "expected an integer >= " + std::to_string(minimum) + ", not " + value.dump());
    }
    return value.get<int64_t>();
  }
  Expected<double> Number(const json& value, const std::string& key) const {
    if (!value.is_number() || value.get<double>() < 0) {
      return Fail(key, "expected a non-negative number, not " + value.dump());
    }
    return value.get<double>();
  }
  Expected<std::string> String(const json& value, const std::string& key) const {
    if (!value.is_string() || value.get<std::string>().empty()) {
      return Fail(key, "expected a non-empty string, not " + value.dump());
    }
    return value.get<std::string>();
  }
  Expected<std::vector<std::string>> Strings(const json& value, const std::string& key) const {
    if (value.is_string()) return std::vector<std::string>{value.get<std::string>()};
    if (!value.is_array() || value.empty()) {
      return Fail(key, "expected a string or a non-empty list of strings, not " + value.dump());
    }
    std::vector<std::string> strings;
    for (size_t i = 0; i < value.size(); ++i) {
      TS_ASSIGN_OR_RETURN(std::string text, String(value[i], key + "[" + std::to_string(i) + "]"));
      strings.push_back(std::move(text));
    }
    return strings;
  }

  // Applies the setting keys present in `object` over `settings`.
  Status Settings(const json& object, SweepSettings* settings) const {
    for (const auto& [key, value] : object.items()) {
      if (key == "targets") {
        TS_ASSIGN_OR_RETURN(settings->targets, Strings(value, key));
        settings->targets_from = Where(key);
      } else if (key == "strategy") {
        TS_ASSIGN_OR_RETURN(settings->strategy, String(value, key));
        settings->strategy_from = Where(key);
      } else if (key == "budget") {
        TS_ASSIGN_OR_RETURN(settings->budget, Integer(value, key, 0));
      } else if (key == "time_s") {
        TS_ASSIGN_OR_RETURN(settings->time_s, Number(value, key));
      } else if (key == "seed") {
        TS_ASSIGN_OR_RETURN(int64_t seed, Integer(value, key, 0));
        settings->seed = static_cast<uint64_t>(seed);
      } else if (key == "batch") {
        TS_ASSIGN_OR_RETURN(settings->batch, Integer(value, key, 1));
      } else if (key == "warmup_ms") {
        TS_ASSIGN_OR_RETURN(settings->warmup_ms, Number(value, key));
      } else if (key == "rep_ms") {
        TS_ASSIGN_OR_RETURN(settings->rep_ms, Number(value, key));
      } else if (key == "timeout_ms") {
        TS_ASSIGN_OR_RETURN(settings->timeout_ms, Number(value, key));
      } else if (key == "flush") {
        if (!value.is_boolean()) return Fail(key, "expected true or false, not " + value.dump());
        settings->flush = value.get<bool>();
      } else if (key == "free_layouts") {
        TS_ASSIGN_OR_RETURN(settings->free_layouts, Strings(value, key));
      } else if (key == "format") {
        TS_ASSIGN_OR_RETURN(settings->format, String(value, key));
        if (settings->format != "hlo" && settings->format != "ascgraph") {
          return Fail(key, "expected \"hlo\" or \"ascgraph\", not " + value.dump());
        }
      } else if (key == "sizes") {
        TS_RETURN_IF_ERROR(Sizes(value, &settings->sizes));
      }
    }
    return OkStatus();
  }

  // `{"s0": 64, …}` or `"s0=64,…"`, merged over what is there.
  Status Sizes(const json& value, std::map<std::string, int64_t>* sizes) const {
    if (value.is_string()) {
      auto parsed = ascgraph::ParseSizeBindings(value.get<std::string>());
      if (!parsed) return Fail("sizes", parsed.error().message);
      for (const auto& [name, size] : *parsed) (*sizes)[name] = size;
      return OkStatus();
    }
    if (!value.is_object()) {
      return Fail("sizes",
                  "expected an object {\"s0\": 64, …} or \"s0=64,…\", not " + value.dump());
    }
    for (const auto& [name, size] : value.items()) {
      TS_ASSIGN_OR_RETURN((*sizes)[name], Integer(size, "sizes." + name, 1));
    }
    return OkStatus();
  }

  Status OnlyKnownKeys(const json& object, bool top_level) const {
    for (const auto& [key, value] : object.items()) {
      if (!IsKnownKey(key, top_level)) {
        return Fail("", "unknown key '" + key + "' (expected " + KeyList(top_level) + ")");
      }
    }
    return OkStatus();
  }

 private:
  const std::string& path_;
  std::string where_;
};

// `path:line:col: error: …` for a JSON syntax error at byte `byte` (1-based, as nlohmann
// counts the last character it read).
std::unexpected<Error> SyntaxError(const std::string& path, std::string_view text, size_t byte,
                                   std::string message) {
  size_t at = std::min(byte > 0 ? byte - 1 : 0, text.size());
  size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
  size_t line_start = text.rfind('\n', at == 0 ? std::string_view::npos : at - 1);
  size_t column = line_start == std::string_view::npos ? at + 1 : at - line_start;
  // nlohmann's text reads "[json.exception.parse_error.101] parse error at line 3, column 5:
  // syntax error while parsing …"; keep what follows the position.
  if (size_t colon = message.find(": "); colon != std::string::npos) {
    message = message.substr(colon + 2);
  }
  return InvalidArgument(path + ":" + std::to_string(line) + ":" + std::to_string(column) +
                         ": error: " + message);
}

bool IsAscGraph(const SweepFusion& fusion) {
  return fusion.settings.format.empty() ? ascgraph::IsAscGraphPath(fusion.path)
                                        : fusion.settings.format == "ascgraph";
}

// The deepest folder holding every file.
fs::path CommonFolder(const std::vector<SweepFusion>& fusions) {
  if (fusions.empty()) return {};
  fs::path common = fs::path(fusions[0].path).parent_path();
  for (const SweepFusion& fusion : fusions) {
    fs::path folder = fs::path(fusion.path).parent_path();
    fs::path shared;
    for (auto a = common.begin(), b = folder.begin(); a != common.end() && b != folder.end();
         ++a, ++b) {
      if (*a != *b) break;
      shared /= *a;
    }
    common = shared;
  }
  return common;
}

}  // namespace

json SweepSettings::ToJson() const {
  return {{"strategy", strategy}, {"budget", budget},
          {"time_s", time_s},     {"seed", seed},
          {"batch", batch},       {"warmup_ms", warmup_ms},
          {"rep_ms", rep_ms},     {"timeout_ms", timeout_ms},
          {"flush", flush},       {"free_layouts", free_layouts},
          {"sizes", sizes},       {"format", format}};
}

std::vector<std::string> SweepFusion::InputFlags() const {
  std::vector<std::string> flags;
  if (!settings.format.empty()) flags.insert(flags.end(), {"--format", settings.format});
  if (!settings.sizes.empty() && IsAscGraph(*this)) {
    std::string bindings;
    for (const auto& [name, size] : settings.sizes) {
      bindings += (bindings.empty() ? "" : ",") + name + "=" + std::to_string(size);
    }
    flags.insert(flags.end(), {"--sizes", bindings});
  }
  return flags;
}

bool HasGlob(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

std::vector<std::string> ExpandGlob(const std::string& pattern, const std::string& base) {
  fs::path whole(pattern);
  std::vector<fs::path> current = {whole.is_absolute() ? whole.root_path() : fs::path(base)};
  std::vector<std::string> parts;
  for (const fs::path& part : whole.relative_path()) parts.push_back(part.string());
  std::error_code error;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    std::vector<fs::path> next;
    for (const fs::path& folder : current) {
      if (part.empty() || part == ".") {
        next.push_back(folder);
      } else if (part == "**") {
        next.push_back(folder);
        // Every folder below, and on the last part every file too.
        for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end;
             it.increment(error)) {
          bool hidden = it->path().filename().string().starts_with(".");
          if (hidden) {
            if (it->is_directory(error)) it.disable_recursion_pending();
            continue;
          }
          if (it->is_directory(error) || i + 1 == parts.size()) next.push_back(it->path());
        }
        error.clear();
      } else if (!HasGlob(part)) {
        next.push_back(folder / part);
      } else {
        for (fs::directory_iterator it(folder, error), end; !error && it != end;
             it.increment(error)) {
          std::string name = it->path().filename().string();
          if (fnmatch(part.c_str(), name.c_str(), FNM_PERIOD) == 0) next.push_back(it->path());
        }
        error.clear();
      }
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    current = std::move(next);
  }
  std::vector<std::string> files;
  for (const fs::path& path : current) {
    if (fs::is_regular_file(path, error)) {
      files.push_back(fs::absolute(path, error).lexically_normal().string());
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

Expected<SweepFile> ParseSweep(std::string_view text, const std::string& path) {
  json document;
  try {
    document = json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& error) {
    return SyntaxError(path, text, error.byte, error.what());
  }
  FieldReader top(path, "");
  if (!document.is_object()) {
    return InvalidArgument(path +
                           ": error: expected a JSON object {\"targets\": […], "
                           "\"fusions\": […], …}");
  }
  TS_RETURN_IF_ERROR(top.OnlyKnownKeys(document, /*top_level=*/true));
  SweepFile sweep;
  sweep.path = path;
  sweep.name = fs::path(path).filename().string();
  if (sweep.name.ends_with(".json")) sweep.name.resize(sweep.name.size() - 5);
  if (document.contains("name")) {
    TS_ASSIGN_OR_RETURN(sweep.name, top.String(document["name"], "name"));
  }
  if (document.contains("description") && !document["description"].is_string()) {
    return top.Fail("description", "expected a string");
  }
  if (document.contains("devices")) {
    const json& devices = document["devices"];
    if (!devices.is_object()) {
      return top.Fail("devices", "expected an object {\"cuda:sm_90\": \"h100_pcie\", …}");
    }
    for (const auto& [target, device] : devices.items()) {
      TS_ASSIGN_OR_RETURN(sweep.devices[target], top.String(device, "devices." + target));
    }
  }
  SweepSettings defaults;
  defaults.targets.clear();
  TS_RETURN_IF_ERROR(top.Settings(document, &defaults));
  if (!document.contains("fusions")) return top.Fail("fusions", "missing (the files to tune)");
  const json& entries = document["fusions"];
  if (!entries.is_array() || entries.empty()) {
    return top.Fail("fusions", "expected a non-empty list of paths, globs or {\"path\": …}");
  }

  fs::path base = fs::absolute(fs::path(path)).parent_path();
  std::vector<std::string> missing;
  std::set<std::pair<std::string, std::string>> seen;  // (file, settings): listed once
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string where = "fusions[" + std::to_string(i) + "]";
    FieldReader entry(path, where);
    const json& value = entries[i];
    SweepSettings settings = defaults;
    std::string pattern;
    if (value.is_string()) {
      TS_ASSIGN_OR_RETURN(pattern, top.String(value, where));
    } else if (value.is_object()) {
      TS_RETURN_IF_ERROR(entry.OnlyKnownKeys(value, /*top_level=*/false));
      if (!value.contains("path")) return entry.Fail("path", "missing (a file or a glob)");
      TS_ASSIGN_OR_RETURN(pattern, entry.String(value["path"], "path"));
      TS_RETURN_IF_ERROR(entry.Settings(value, &settings));
    } else {
      return entry.Fail("",
                        "expected a path, a glob or {\"path\": …, overrides}, not " + value.dump());
    }
    if (settings.targets.empty()) {
      return entry.Fail("targets", "no targets: give \"targets\" at the top or in the entry");
    }
    std::vector<std::string> files = ExpandGlob(pattern, base.string());
    if (files.empty()) {
      if (HasGlob(pattern)) {
        sweep.warnings.push_back(path + ": " + where + ": '" + pattern +
                                 "' matches no file (looked from " + base.string() + ")");
      } else {
        missing.push_back(where + ": " + (base / pattern).lexically_normal().string());
      }
      continue;
    }
    for (std::string& file : files) {
      if (!seen.insert({file, settings.ToJson().dump() + json(settings.targets).dump()}).second) {
        continue;
      }
      sweep.fusions.push_back({std::move(file), "", where, settings});
    }
  }
  if (!missing.empty()) {
    std::string message = path + ": error: no such file";
    for (const std::string& line : missing) message += "\n  " + line;
    return MakeError(ErrorCode::kNotFound, message);
  }
  if (sweep.fusions.empty()) {
    return MakeError(ErrorCode::kNotFound, path + ": error: no fusion file matches any entry");
  }
  fs::path common = CommonFolder(sweep.fusions);
  std::map<std::string, int> named;
  for (SweepFusion& fusion : sweep.fusions) {
    fusion.name = fs::path(fusion.path).lexically_relative(common).string();
    ++named[fusion.path];
  }
  // A file listed with different settings (other sizes, say) says which in its name.
  for (SweepFusion& fusion : sweep.fusions) {
    if (named[fusion.path] < 2) continue;
    std::vector<std::string> flags = fusion.InputFlags();
    if (!flags.empty() && flags.size() % 2 == 0) fusion.name += " " + flags.back();
    fusion.name += " (" + fusion.entry + ")";
  }
  return sweep;
}

Expected<SweepFile> ReadSweepFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kNotFound, path + ": error: no such sweep file");
  std::stringstream text;
  text << in.rdbuf();
  return ParseSweep(text.str(), path);
}

}  // namespace tilesmith::tools
