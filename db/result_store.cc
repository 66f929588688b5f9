#include "db/result_store.h"

namespace tilesmith::db {
namespace {

std::string ListChoices(const std::vector<std::string>& choices) {
  std::string text;
  for (const std::string& choice : choices) text += "\n  " + choice;
  return text.empty() ? " (none stored)" : ":" + text;
}

}  // namespace

Expected<std::vector<std::optional<BestResult>>> ResultStore::BestMany(
    std::span<const ResultKey> keys) {
  std::vector<std::optional<BestResult>> results;
  results.reserve(keys.size());
  for (const ResultKey& key : keys) {
    TS_ASSIGN_OR_RETURN(std::optional<BestResult> best, Best(key));
    results.push_back(std::move(best));
  }
  return results;
}

Expected<std::string> ResolveDeviceKey(ResultStore& store, std::string_view text) {
  TS_ASSIGN_OR_RETURN(std::vector<DeviceRecord> devices, store.ListDevices());
  std::vector<std::string> keys;
  std::vector<std::string> matches;
  for (const DeviceRecord& device : devices) {
    std::string key = device.Key();
    if (key == text) return key;
    // A prefix must end at a field boundary, so `cuda:sm_9` does not pick `cuda:sm_90`.
    bool prefix = key.starts_with(text) && (key.size() == text.size() || key[text.size()] == ',');
    if (prefix || device.name == text) matches.push_back(key);
    keys.push_back(std::move(key));
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty()) {
    return MakeError(ErrorCode::kNotFound, "no device '" + std::string(text) +
                                               "' in the store; devices" + ListChoices(keys));
  }
  return InvalidArgument("device '" + std::string(text) + "' matches several; give the key" +
                         ListChoices(matches));
}

Expected<std::string> ResolveFingerprint(ResultStore& store, std::string_view text) {
  if (text.size() < 6) {
    return InvalidArgument("fingerprint prefix '" + std::string(text) +
                           "' is too short (at least 6 hex digits)");
  }
  TS_ASSIGN_OR_RETURN(std::vector<KernelSummary> kernels, store.ListKernels({}));
  std::vector<std::string> matches;
  for (const KernelSummary& kernel : kernels) {
    if (kernel.fingerprint == text) return kernel.fingerprint;
    if (kernel.fingerprint.starts_with(text)) matches.push_back(kernel.fingerprint);
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty()) {
    return MakeError(ErrorCode::kNotFound,
                     "no kernel with fingerprint '" + std::string(text) + "' in the store");
  }
  return InvalidArgument("fingerprint prefix '" + std::string(text) + "' matches several" +
                         ListChoices(matches));
}

}  // namespace tilesmith::db
