// What `tilesmith tune` and `tilesmith sweep` share: where the database is, how a worker is
// started for a fusion file, whether CUDA candidates can be timed here, and how a trial is
// printed.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tuner/backends/backend.h"
#include "tuner/cuda_driver.h"
#include "tuner/device.h"
#include "tuner/session.h"

namespace tilesmith::tools {

/// The running tilesmith binary: workers are started from it.
std::string SelfPath();

/// A time in microseconds with three decimals (`66.100`).
std::string Micros(double value);

/// `flag` when set, else `$TILESMITH_DB`, else `tilesmith.db` in the current directory.
std::string ResolveDbPath(const std::string& flag);

/// The `tilesmith worker` command line for the fusion in `path` on `device`; `input_flags`
/// are the fusion-input flags the fusion was loaded with (`--format`, `--sizes` and values).
std::vector<std::string> WorkerArgv(const std::string& path, const tuner::Device& device,
                                    const std::vector<std::string>& input_flags);

/// Whether candidates for `device` can be timed on this machine: always for the host, for a
/// CUDA target only with a driver that sees a GPU.
bool CanTime(const tuner::Device& device, const tuner::CudaDriverProbe& driver);

/// Whether `device`'s candidates are timed only where a device is found at run time (a GPU
/// and its driver), so a tune or sweep says what the driver said.
bool TimedOnlyWithDevice(const tuner::Device& device);

/// A measurement default (tuner::MeasureOptions) as help text shows it (`10`, `5000`).
std::string MeasureDefault(double value);

/// Why a CUDA tune stopped after compiling: what was compiled, and what the driver said.
std::string CompiledOnlyMessage(const tuner::TuneResult& result, const tuner::Device& device,
                                const tuner::CudaDriverProbe& driver);

}  // namespace tilesmith::tools
