#include "service/fusion_input.h"

#include "compiler/ascgraph/lower.h"
#include "compiler/ascgraph/reader.h"
#include "compiler/hlo/canonical.h"
#include "compiler/hlo/parser.h"
#include "support/sha256.h"

namespace tilesmith::service {
namespace {

using nlohmann::json;

Expected<ascgraph::SizeBindings> ReadSizes(const json& request) {
  ascgraph::SizeBindings sizes;
  auto found = request.find("sizes");
  if (found == request.end() || found->is_null()) return sizes;
  if (!found->is_object()) {
    return InvalidArgument("\"sizes\" must be an object of size variables, e.g. {\"s0\": 64}");
  }
  for (const auto& [name, value] : found->items()) {
    if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
      return InvalidArgument("\"sizes\": " + name + " must be a positive integer");
    }
    sizes[name] = value.get<int64_t>();
  }
  return sizes;
}

// Parses a request's module; one of more than `max_instructions` instructions is refused
// at the first instruction past the limit, before the rest is read.
Expected<std::unique_ptr<hlo::HloModule>> ParseBounded(const std::string& text,
                                                       std::string_view name,
                                                       int64_t max_instructions) {
  hlo::ParseLimits limits;
  if (max_instructions > 0) limits.max_instructions = max_instructions;
  auto module = hlo::ParseHloModule(text, name, limits);
  if (!module && module.error().code == ErrorCode::kResourceExhausted) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "the fusion module has more instructions than this server's limit of " +
                         std::to_string(max_instructions) + " (serve --max-instructions)");
  }
  return module;
}

}  // namespace

Expected<FusionInput> ReadFusion(const json& request, int64_t max_instructions) {
  if (!request.is_object()) return InvalidArgument("the request must be a JSON object");
  auto hlo = request.find("fusion");
  auto graph = request.find("ascgraph");
  bool has_hlo = hlo != request.end() && !hlo->is_null();
  bool has_graph = graph != request.end() && !graph->is_null();
  if (has_hlo == has_graph) {
    return InvalidArgument("give exactly one of \"fusion\" (HLO text) and \"ascgraph\"");
  }
  FusionInput input;
  if (has_hlo) {
    if (!hlo->is_string()) return InvalidArgument("\"fusion\" must be HLO text (a string)");
    if (request.contains("sizes") && !request["sizes"].is_null()) {
      return InvalidArgument("\"sizes\" applies to \"ascgraph\" requests only");
    }
    TS_ASSIGN_OR_RETURN(
        input.module, ParseBounded(hlo->get_ref<const std::string&>(), "fusion", max_instructions));
    input.source_format = "hlo";
    input.hlo_text = hlo->get<std::string>();
  } else {
    std::string bytes;
    std::string file_name;
    if (graph->is_object()) {
      bytes = graph->dump();
      file_name = "ascgraph.ascgraph.json";
    } else if (graph->is_string()) {
      bytes = graph->get<std::string>();
      size_t first = bytes.find_first_not_of(" \t\r\n");
      // Protobuf text format starts with a field name, JSON with '{'.
      bool is_json = first != std::string::npos && bytes[first] == '{';
      file_name = is_json ? "ascgraph.ascgraph.json" : "ascgraph.ascgraph.txt";
    } else {
      return InvalidArgument("\"ascgraph\" must be protobuf text (a string) or JSON");
    }
    ascgraph::ReadOptions options;
    TS_ASSIGN_OR_RETURN(options.sizes, ReadSizes(request));
    TS_ASSIGN_OR_RETURN(ascgraph::Request parsed, ascgraph::ReadRequest(bytes, file_name, options));
    TS_ASSIGN_OR_RETURN(input.hlo_text, ascgraph::LowerToHloText(parsed));
    TS_ASSIGN_OR_RETURN(input.module,
                        ParseBounded(input.hlo_text, "lowered ascgraph", max_instructions));
    input.source_format = "ascgraph";
  }
  if (input.module->fusion() == nullptr) return InvalidArgument("the module has no computation");
  TS_ASSIGN_OR_RETURN(input.fingerprint, hlo::FusionFingerprint(*input.module));
  input.name = input.module->fusion()->name();
  return input;
}

Expected<FingerprintCache::Entry> FingerprintCache::Lookup(const json& request) {
  std::string material;
  for (const char* field : {"fusion", "ascgraph", "sizes"}) {
    auto found = request.is_object() ? request.find(field) : request.end();
    material += field;
    material += '\0';
    if (found != request.end()) {
      material += found->is_string() ? found->get_ref<const std::string&>() : found->dump();
    }
    material += '\0';
  }
  TS_ASSIGN_OR_RETURN(std::string digest, Sha256Hex(material));
  {
    std::lock_guard lock(mutex_);
    auto hit = entries_.find(digest);
    if (hit != entries_.end()) return hit->second;
  }
  TS_ASSIGN_OR_RETURN(FusionInput input, ReadFusion(request, max_instructions_));
  Entry entry{std::move(input.fingerprint), std::move(input.name)};
  std::lock_guard lock(mutex_);
  if (entries_.size() >= capacity_) entries_.clear();
  entries_.emplace(std::move(digest), entry);
  return entry;
}

}  // namespace tilesmith::service
