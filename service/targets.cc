#include "service/targets.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "tuner/backends/backend.h"
#include "tuner/cuda_driver.h"

namespace tilesmith::service {

const ServedTarget* FindServedTarget(const std::vector<ServedTarget>& targets,
                                     const std::string& name) {
  for (const ServedTarget& target : targets) {
    if (target.name == name || (!target.alias.empty() && target.alias == name)) return &target;
  }
  return nullptr;
}

Expected<std::vector<ServedTarget>> ResolveTargets(const std::vector<std::string>& names,
                                                   const std::string& devices_dir) {
  if (names.empty()) return InvalidArgument("no targets to serve (e.g. --targets host)");
  std::vector<ServedTarget> targets;
  for (const std::string& text : names) {
    std::string name = text;
    std::string device_id;
    if (size_t equals = text.find('='); equals != std::string::npos) {
      name = text.substr(0, equals);
      device_id = text.substr(equals + 1);
    }
    std::string served_name = name;
    std::string alias;
    if (name.starts_with("cuda:") && name.size() > 5 &&
        std::all_of(name.begin() + 5, name.end(), [](char c) { return std::isdigit(c); })) {
      TS_ASSIGN_OR_RETURN(alias, tuner::GpuTargetOf(name));
      name = alias;
    }
    auto device = tuner::ResolveDevice(name, device_id, devices_dir);
    if (!device) return std::unexpected(device.error().WithContext("target '" + text + "'"));
    if (FindServedTarget(targets, served_name) ||
        (!alias.empty() && FindServedTarget(targets, alias))) {
      return InvalidArgument("target '" + text + "' is given twice");
    }
    ServedTarget target{served_name, alias, std::move(*device), true, "timed on this host"};
    if (auto backend = tuner::MakeBackend(target.device); !backend->MeasuresWithoutDevice()) {
      tuner::CudaDriverProbe driver = tuner::ProbeCudaDriver();
      target.can_tune = backend->CanMeasure(driver);
      target.note = target.can_tune
                        ? "timed on GPU 0 (" + driver.message + ")"
                        : "answers queries only; no GPU to time on (" + driver.message + ")";
    }
    targets.push_back(std::move(target));
  }
  return targets;
}

}  // namespace tilesmith::service
