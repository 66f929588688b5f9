#include "tools/sweep_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "db/open_store.h"
#include "support/atomic_file.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "tilesmith-sweep-state";
constexpr int kVersion = 1;

// The pairs in the file at `path`; an empty object when there is none.
Expected<json> ReadPairs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return json::object();
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object() || document.value("format", "") != kFormat ||
      !document.contains("pairs") || !document["pairs"].is_object()) {
    return InvalidArgument(path + ": error: not a sweep state file (delete it to start over)");
  }
  if (document.value("version", 0) != kVersion) {
    return InvalidArgument(path + ": error: sweep state version " +
                           document.value("version", json(0)).dump() + ", this tilesmith reads " +
                           std::to_string(kVersion));
  }
  return document["pairs"];
}

}  // namespace

std::string SweepState::PathFor(const std::string& db_path) {
  if (!db::IsPostgresLocation(db_path)) return db_path + ".sweeps.json";
  // Host, port and database of the URL (its user and options dropped), as a file name.
  std::string url = db::DescribeLocation(db_path);
  url = url.substr(0, url.find('?'));
  size_t scheme = url.find("://");
  std::string rest = url.substr(scheme + 3);
  rest = rest.substr(rest.find('@') == std::string::npos ? 0 : rest.find('@') + 1);
  std::string name = "postgresql_";
  for (char c : rest) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + ".sweeps.json";
}

Expected<SweepState> SweepState::Load(const std::string& path) {
  SweepState state;
  state.path_ = path;
  TS_ASSIGN_OR_RETURN(state.pairs_, ReadPairs(path));
  return state;
}

const json* SweepState::Find(const std::string& key) const {
  auto found = pairs_.find(key);
  return found == pairs_.end() ? nullptr : &*found;
}

Status SweepState::Record(const std::string& key, const json& row) {
  // Another sweep on the same database may have finished pairs since this one read the file.
  auto current = ReadPairs(path_);
  if (current) pairs_.update(*current);
  pairs_[key] = row;
  json document = {{"format", kFormat}, {"version", kVersion}, {"pairs", pairs_}};
  return WriteFileAtomically(path_, document.dump(1) + "\n");
}

}  // namespace tilesmith::tools
