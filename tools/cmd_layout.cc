// `tilesmith layout`: where elements of a shape live in memory.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/tiling.h"
#include "tools/commands.h"

namespace tilesmith::tools {
namespace {

Expected<std::vector<int64_t>> ParseIndex(const std::string& text) {
  std::vector<int64_t> index;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    try {
      size_t used = 0;
      index.push_back(std::stoll(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      return InvalidArgument("--index expects integers separated by commas, got '" + text + "'");
    }
  }
  return index;
}

std::string JoinDims(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

int Run(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one SHAPE, e.g. 'f32[3,5]{1,0:T(2,2)}' (quote it for the shell)");
    return kExitUsage;
  }
  auto shape = hlo::ParseShape(args.positionals()[0]);
  if (!shape) return ReportError(shape.error().message);
  auto physical = hlo::PhysicalLayout::Create(*shape);
  if (!physical) return ReportError(physical.error().message);

  nlohmann::json result = {
      {"shape", hlo::ShapeToString(*shape)},
      {"tiled_dims",
       std::vector<int64_t>(physical->tiled_dims().begin(), physical->tiled_dims().end())},
      {"elements", physical->element_count()},
      {"bytes", physical->byte_size()},
      {"element_bits", physical->element_bits()},
  };
  if (args.Has("index")) {
    auto index = ParseIndex(args.Get("index"));
    if (!index) return ReportError(index.error().message);
    if (static_cast<int64_t>(index->size()) != shape->rank()) {
      return ReportError("--index has " + std::to_string(index->size()) +
                         " entries; the shape has rank " + std::to_string(shape->rank()));
    }
    for (int64_t d = 0; d < shape->rank(); ++d) {
      if ((*index)[d] < 0 || (*index)[d] >= shape->dim(d)) {
        return ReportError("index " + std::to_string((*index)[d]) + " is outside dimension " +
                           std::to_string(d) + " of size " + std::to_string(shape->dim(d)));
      }
    }
    result["index"] = *index;
    result["linear_index"] = physical->LinearIndex(*index);
  }
  if (args.Has("slot")) {
    int64_t slot;
    try {
      slot = std::stoll(args.Get("slot"));
    } catch (const std::exception&) {
      return ReportError("--slot expects an integer");
    }
    auto element = physical->ElementAt(slot);
    result["slot"] = slot;
    result["element"] = element ? nlohmann::json(*element) : nlohmann::json(nullptr);
  }
  if (args.Has("json")) {
    std::cout << result.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "shape:        " << result["shape"].get<std::string>() << "\n"
            << "tiled dims:   " << JoinDims(physical->tiled_dims()) << "\n"
            << "elements:     " << physical->element_count() << " (including padding)\n"
            << "element bits: " << physical->element_bits() << "\n"
            << "bytes:        " << physical->byte_size() << "\n";
  if (result.contains("linear_index")) {
    std::cout << "linear index: " << result["linear_index"].get<int64_t>() << "\n";
  }
  if (result.contains("slot")) {
    std::cout << "slot " << result["slot"].get<int64_t>() << ":      "
              << (result["element"].is_null()
                      ? std::string("padding")
                      : JoinDims(result["element"].get<std::vector<int64_t>>()))
              << "\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand LayoutSubcommand() {
  cli::Command command("layout", "show where a shape's elements live in memory",
                       "SHAPE [--index I,J,...] [--slot N] [--json]");
  command.Flag("index", "I,J,...", "logical index to map to its linear slot")
      .Flag("slot", "N", "linear slot to map back to its element (or padding)")
      .Switch("json",
              "print a JSON object (keys: shape, tiled_dims, elements, bytes, "
              "element_bits, linear_index, element)")
      .Epilog(
          "Examples:\n"
          "  tilesmith layout 'f32[3,5]{1,0:T(2,2)}' --index 2,3      # linear index 17, 96 bytes\n"
          "  tilesmith layout 's32[4,8]{1,0:T(2,4)(2,1)}' --index 3,7 # linear index 31\n"
          "  tilesmith layout 'bf16[8,1280]{1,0:T(8,128)(2,1)}' --json");
  return {std::move(command), &Run};
}

}  // namespace tilesmith::tools
