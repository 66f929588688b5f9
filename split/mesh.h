// Device meshes (`configs/meshes/*.json`): an N-d array of devices with named axes, and
// the link each axis communicates over (bandwidth and latency), which is all the
// collective-communication model needs to know about the interconnect.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace tilesmith::split {

/// One named mesh axis and the link its collectives run over.
struct MeshAxis {
  std::string name;
  int64_t size = 1;
  double bandwidth_gbps = 0;  ///< Per device and direction, GB/s (1e9 bytes per second).
  double latency_us = 0;      ///< Per ring step (one hop's fixed cost).
};

/// A mesh of identical devices. Devices are numbered row-major over the axes, the first
/// axis major, as `jax.sharding.Mesh` lays out its device array.
struct Mesh {
  std::string name;
  std::string device;  ///< A `configs/devices` stem (`h100_sxm`, `host`).
  std::string description;
  std::vector<MeshAxis> axes;

  int64_t device_count() const;
  /// The axis called `name`, or -1.
  int64_t AxisIndex(std::string_view name) const;
  /// `(4,2) ('i','j')`.
  std::string ShapeString() const;
  /// A device's coordinate on every axis.
  std::vector<int64_t> Coordinates(int64_t device) const;
  /// The device at `coordinates`.
  int64_t DeviceAt(const std::vector<int64_t>& coordinates) const;
};

/// Reads a mesh description (JSON text). `label` prefixes errors (the file name); errors
/// name the field that is wrong.
Expected<Mesh> ParseMesh(std::string_view json_text, std::string_view label = "<mesh>");

/// Reads a mesh file. Errors name it by `label` when given (a server names its meshes by
/// their place under configs/, not by its install path), else by `path`.
Expected<Mesh> LoadMeshFile(const std::string& path, std::string_view label = {});

/// A mesh with `sizes` and `names` and one link for every axis; for tests and examples.
Mesh UniformMesh(const std::vector<int64_t>& sizes, const std::vector<std::string>& names,
                 double bandwidth_gbps, double latency_us, std::string device = "host");

}  // namespace tilesmith::split
