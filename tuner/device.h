// Device descriptions (`configs/devices/*.json`): the limits the search space is pruned by
// and the facts results are keyed by. A GPU's figures come from its datasheet file; the
// host's model, cores and last-level cache are read from the machine itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/emitters/target.h"
#include "db/records.h"
#include "support/status.h"

namespace tilesmith::tuner {

/// One device a fusion is tuned for.
struct Device {
  std::string id;  ///< The description's file stem (`h100_sxm`, `host`).
  emitters::Target target;
  emitters::DeviceInfo info;  ///< What emitters and the space's constraints see.
  db::DeviceRecord record;    ///< What results are keyed by (`record.Key()`).
  int64_t cache_bytes = 0;    ///< L2 (GPU) or last-level cache (CPU): the flush size.
};

/// `$TILESMITH_DEVICES_DIR`, else `configs/devices` beside the executable (an unpacked
/// bundle), else the repository's `configs/devices`.
std::string DefaultDevicesDir();

/// Reads one description file; messages name the file and the field.
Expected<Device> LoadDeviceFile(const std::string& path);

/// The description for `target` (`host`, `cuda:sm_90`): `device` names a file stem in
/// `devices_dir` (or a path) when given, else the target's representative part (sm_90: H100
/// SXM, sm_80: A100, sm_89: L4). A device whose target differs from `target` is an error.
Expected<Device> ResolveDevice(std::string_view target, std::string_view device,
                               const std::string& devices_dir);

/// Stems of the GPU and host descriptions in `devices_dir`, sorted.
std::vector<std::string> ListDeviceIds(const std::string& devices_dir);

}  // namespace tilesmith::tuner
