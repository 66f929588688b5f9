#include "compiler/ascgraph/reader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/ascgraph/ascgraph.pb.h"
#include "compiler/ascgraph/data_type.h"
#include "compiler/ascgraph/wire_fixups.h"
#include "support/log.h"

namespace tilesmith::ascgraph {
namespace {

namespace pb = google::protobuf;

// Collects protobuf's text-format diagnostics with the positions of the text the user
// wrote (before wire_fixups moved columns).
class TextErrors : public pb::io::ErrorCollector {
 public:
  TextErrors(std::string_view file_name, const std::vector<internal::ColumnShift>& shifts)
      : file_name_(file_name), shifts_(shifts) {}

  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (first_error_.empty()) first_error_ = Format(line, column, "error", message);
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    TS_LOG(kWarning) << Format(line, column, "warning", message);
  }
  const std::string& first_error() const { return first_error_; }

 private:
  std::string Format(int line, int column, std::string_view kind,
                     const std::string& message) const {
    return file_name_ + ":" + std::to_string(line + 1) + ":" +
           std::to_string(internal::OriginalColumn(shifts_, line, column) + 1) + ": " +
           std::string(kind) + ": " + message;
  }

  std::string file_name_;
  const std::vector<internal::ColumnShift>& shifts_;
  std::string first_error_;
};

Expected<proto::AscGraphDef> ParseText(std::string_view text, std::string_view file_name,
                                       const ReadOptions& options) {
  std::vector<internal::ColumnShift> shifts;
  auto fixed = internal::FixTextFormat(text, shifts);
  if (!fixed) return InvalidArgument(std::string(file_name) + ":" + fixed.error().message);
  TextErrors errors(file_name, shifts);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.AllowUnknownField(options.allow_unknown_fields);
  proto::AscGraphDef graph;
  if (!parser.ParseFromString(*fixed, &graph)) {
    std::string message = errors.first_error();
    if (message.empty()) message = std::string(file_name) + ": error: not a valid AscGraphDef";
    return InvalidArgument(message);
  }
  return graph;
}

Expected<proto::AscGraphDef> ParseBinary(std::string_view bytes, std::string_view file_name) {
  proto::AscGraphDef graph;
  if (!graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument(std::string(file_name) +
                           ": error: not a valid binary AscGraphDef (protobuf wire format)");
  }
  internal::FixBinary(graph);
  return graph;
}

Expected<proto::AscGraphDef> ParseJsonGraph(nlohmann::json json, std::string_view where,
                                            const ReadOptions& options) {
  if (!json.is_object()) {
    return InvalidArgument(std::string(where) + ": error: expected a JSON object");
  }
  TS_RETURN_IF_ERROR(internal::FixJson(json, where));
  std::string text = json.dump();
  proto::AscGraphDef graph;
  pb::util::Status status = pb::util::JsonStringToMessage(text, &graph);
  if (!status.ok() && options.allow_unknown_fields) {
    // As for the text format: fields of newer schemas are skipped, with a warning.
    pb::util::JsonParseOptions lenient;
    lenient.ignore_unknown_fields = true;
    graph.Clear();
    if (pb::util::JsonStringToMessage(text, &graph, lenient).ok()) {
      TS_LOG(kWarning) << where << ": warning: " << status.message();
      status = pb::util::Status();
    }
  }
  if (!status.ok()) {
    return InvalidArgument(std::string(where) +
                           ": error: not a valid AscGraphDef: " + std::string(status.message()));
  }
  return graph;
}

Expected<int64_t> JsonInteger(const nlohmann::json& value, const std::string& where) {
  if (!value.is_number_integer()) return InvalidArgument(where + ": expected an integer");
  return value.get<int64_t>();
}

Expected<SizeBindings> JsonSizes(const nlohmann::json& sizes, const std::string& where) {
  if (!sizes.is_object()) return InvalidArgument(where + ": expected an object {\"s0\": 2048, …}");
  SizeBindings bindings;
  for (const auto& [name, value] : sizes.items()) {
    TS_ASSIGN_OR_RETURN(int64_t size, JsonInteger(value, where + "." + name));
    if (size <= 0) return InvalidArgument(where + "." + name + ": a size must be positive");
    bindings[name] = size;
  }
  return bindings;
}

Expected<Platform> JsonPlatform(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) return InvalidArgument(where + ": expected an object");
  Platform platform;
  platform.name = "custom";
  for (const auto& [key, value] : json.items()) {
    if (key == "name") {
      if (!value.is_string()) return InvalidArgument(where + ".name: expected a string");
      platform.name = value.get<std::string>();
    } else if (key == "vector_cores" || key == "ub_bytes") {
      TS_ASSIGN_OR_RETURN(int64_t number, JsonInteger(value, where + "." + key));
      if (number <= 0) return InvalidArgument(where + "." + key + ": must be positive");
      (key == "ub_bytes" ? platform.ub_bytes : platform.vector_cores) = number;
    } else {
      return InvalidArgument(where + ": unknown key '" + key +
                             "' (expected name, vector_cores, ub_bytes)");
    }
  }
  return platform;
}

Expected<SizeExpr> ParseExpr(const std::string& text, const std::string& where) {
  if (text.empty()) return InvalidArgument(where + ": the size expression is empty");
  auto expr = SizeExpr::Parse(text);
  if (!expr) return std::unexpected(expr.error().WithContext(where));
  return expr;
}

Expected<TensorAttr> ConvertTensor(const proto::AscTensorAttrGroupsDef& def,
                                   const std::string& where) {
  TensorAttr tensor;
  auto dtype = PrimitiveTypeFromGe(def.dtype());
  if (!dtype) return std::unexpected(dtype.error().WithContext(where + " dtype"));
  tensor.dtype = *dtype;
  tensor.axis_ids.assign(def.axis_ids().begin(), def.axis_ids().end());
  for (int i = 0; i < def.repeats_size(); ++i) {
    TS_ASSIGN_OR_RETURN(SizeExpr repeat,
                        ParseExpr(def.repeats(i), where + " repeats[" + std::to_string(i) + "]"));
    tensor.repeats.push_back(std::move(repeat));
  }
  for (int i = 0; i < def.strides_size(); ++i) {
    TS_ASSIGN_OR_RETURN(SizeExpr stride,
                        ParseExpr(def.strides(i), where + " strides[" + std::to_string(i) + "]"));
    tensor.strides.push_back(std::move(stride));
  }
  return tensor;
}

std::optional<AttrValue> ConvertAttr(const proto::AttrDef& def) {
  using Def = proto::AttrDef;
  switch (def.value_case()) {
    case Def::kS:
      return def.s();
    case Def::kI:
      return def.i();
    case Def::kF:
      return static_cast<double>(def.f());
    case Def::kB:
      return def.b();
    case Def::kDt:
      return def.dt();
    case Def::kExpression:
      return def.expression();
    case Def::kList: {
      const Def::ListValue& list = def.list();
      if (list.s_size() > 0) return std::vector<std::string>(list.s().begin(), list.s().end());
      if (list.f_size() > 0) return std::vector<double>(list.f().begin(), list.f().end());
      if (list.b_size() > 0) return std::vector<int64_t>(list.b().begin(), list.b().end());
      if (list.dt_size() > 0) return std::vector<int64_t>(list.dt().begin(), list.dt().end());
      return std::vector<int64_t>(list.i().begin(), list.i().end());
    }
    case Def::VALUE_NOT_SET:
      break;
  }
  return std::nullopt;
}

Expected<Node> ConvertNode(const proto::AscNodeDef& def, int position) {
  Node node;
  node.name = def.attr().name();
  std::string where = "asc_node[" + std::to_string(position) + "]";
  if (node.name.empty()) return InvalidArgument(where + ": attr.name is empty");
  where = "node '" + node.name + "'";
  node.type = def.attr().type().empty() ? def.ir_def().type() : def.attr().type();
  if (node.type.empty()) return InvalidArgument(where + ": neither attr.type nor ir_def.type");
  for (const proto::AscInputSourceDef& input : def.input_src()) {
    node.inputs.push_back({input.src_node_name(), input.src_out_index()});
  }
  for (int i = 0; i < def.outputs_size(); ++i) {
    TS_ASSIGN_OR_RETURN(TensorAttr output, ConvertTensor(def.outputs(i).attr(),
                                                         where + " output " + std::to_string(i)));
    node.outputs.push_back(std::move(output));
  }
  node.sched_axis.assign(def.attr().sched().axis().begin(), def.attr().sched().axis().end());
  for (const auto& [key, value] : def.attr().ir_attr_def().attr()) {
    if (std::optional<AttrValue> converted = ConvertAttr(value)) node.ir_attrs[key] = *converted;
  }
  return node;
}

Expected<Axis> ConvertAxis(const proto::AxisDef& def) {
  Axis axis;
  axis.id = def.id();
  axis.name = def.name();
  std::string where = "axis '" + def.name() + "' (id " + std::to_string(def.id()) + ")";
  if (def.axis_type() < 0 || def.axis_type() > static_cast<int>(AxisType::kMerged)) {
    return InvalidArgument(where + ": axis_type " + std::to_string(def.axis_type()) +
                           " is not one of 0 (ORIGINAL) … 5 (MERGED)");
  }
  axis.type = static_cast<AxisType>(def.axis_type());
  TS_ASSIGN_OR_RETURN(axis.size, ParseExpr(def.size(), where + " size"));
  axis.allow_unaligned_tail = def.allow_unaligned_tail();
  if (!def.align().empty()) {
    TS_ASSIGN_OR_RETURN(SizeExpr align, ParseExpr(def.align(), where + " align"));
    auto value = align.Evaluate({});
    if (!value) {
      return InvalidArgument(where + ": align '" + def.align() + "' must be an integer");
    }
    axis.align = *value;
  }
  return axis;
}

Expected<Graph> ConvertGraphDef(const proto::AscGraphDef& def) {
  Graph graph;
  graph.name = def.graph_name();
  graph.type = def.asc_graph_attr().type();
  graph.size_vars.assign(def.asc_graph_attr().size_var().begin(),
                         def.asc_graph_attr().size_var().end());
  for (const proto::AxisDef& axis_def : def.asc_graph_attr().axis()) {
    TS_ASSIGN_OR_RETURN(Axis axis, ConvertAxis(axis_def));
    graph.axes.push_back(std::move(axis));
  }
  for (int i = 0; i < def.asc_node_size(); ++i) {
    TS_ASSIGN_OR_RETURN(Node node, ConvertNode(def.asc_node(i), i));
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

// Errors read `file: error: node 'x' output 0 repeats[1]: …`.
Expected<Graph> ConvertGraph(const proto::AscGraphDef& def, std::string_view file_name) {
  auto graph = ConvertGraphDef(def);
  if (!graph) return std::unexpected(graph.error().WithContext(std::string(file_name) + ": error"));
  return graph;
}

// A JSON file holds a bare AscGraphDef, or a request that wraps one with sizes and platform.
Expected<Request> ParseJsonRequest(std::string_view bytes, std::string_view file_name,
                                   const ReadOptions& options) {
  std::string where(file_name);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(where + ": error: " + e.what());
  }
  Request request;
  if (json.is_object() && !json.contains("graph") &&
      (json.contains("sizes") || json.contains("platform"))) {
    return InvalidArgument(where + ": error: a request with sizes or platform needs a \"graph\"");
  }
  if (!json.is_object() || !json.contains("graph")) {
    TS_ASSIGN_OR_RETURN(proto::AscGraphDef def, ParseJsonGraph(std::move(json), where, options));
    TS_ASSIGN_OR_RETURN(request.graph, ConvertGraph(def, where));
    return request;
  }
  for (const auto& [key, value] : json.items()) {
    if (key == "graph") {
      proto::AscGraphDef def;
      if (value.is_string()) {
        TS_ASSIGN_OR_RETURN(def, ParseText(value.get<std::string>(), where + ": graph", options));
      } else {
        TS_ASSIGN_OR_RETURN(def, ParseJsonGraph(value, where + ": graph", options));
      }
      TS_ASSIGN_OR_RETURN(request.graph, ConvertGraph(def, where));
    } else if (key == "sizes") {
      TS_ASSIGN_OR_RETURN(request.sizes, JsonSizes(value, where + ": error: sizes"));
    } else if (key == "platform") {
      TS_ASSIGN_OR_RETURN(request.platform, JsonPlatform(value, where + ": error: platform"));
    } else {
      return InvalidArgument(where + ": error: unknown request key '" + key +
                             "' (expected graph, sizes, platform)");
    }
  }
  return request;
}

RequestFormat FormatFromName(std::string_view name) {
  if (name.ends_with(".ascgraph.txt") || name.ends_with(".pbtxt")) return RequestFormat::kText;
  if (name.ends_with(".json")) return RequestFormat::kJson;
  if (name.ends_with(".pb")) return RequestFormat::kBinary;
  return RequestFormat::kAuto;
}

// Without a telling name: JSON starts with '{', text format is printable, binary is not.
RequestFormat SniffFormat(std::string_view bytes) {
  for (char c : bytes) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '{') return RequestFormat::kJson;
    break;
  }
  for (unsigned char c : bytes) {
    if (c < 0x20 && !std::isspace(c)) return RequestFormat::kBinary;
  }
  return RequestFormat::kText;
}

}  // namespace

bool IsAscGraphPath(std::string_view path) {
  return path.ends_with(".ascgraph.txt") || path.ends_with(".ascgraph.json") ||
         path.ends_with(".pb");
}

Expected<Request> ReadRequest(std::string_view bytes, std::string_view file_name,
                              const ReadOptions& options) {
  RequestFormat format = options.format;
  if (format == RequestFormat::kAuto) format = FormatFromName(file_name);
  if (format == RequestFormat::kAuto) format = SniffFormat(bytes);
  Request request;
  if (format == RequestFormat::kJson) {
    TS_ASSIGN_OR_RETURN(request, ParseJsonRequest(bytes, file_name, options));
  } else {
    proto::AscGraphDef def;
    if (format == RequestFormat::kText) {
      TS_ASSIGN_OR_RETURN(def, ParseText(bytes, file_name, options));
    } else {
      TS_ASSIGN_OR_RETURN(def, ParseBinary(bytes, file_name));
    }
    TS_ASSIGN_OR_RETURN(request.graph, ConvertGraph(def, file_name));
  }
  for (const auto& [name, value] : options.sizes) request.sizes[name] = value;
  return request;
}

Expected<Request> ReadRequestFile(const std::string& path, const ReadOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return MakeError(ErrorCode::kIo, "cannot open '" + path + "'");
  std::stringstream bytes;
  bytes << file.rdbuf();
  if (file.bad()) return MakeError(ErrorCode::kIo, "cannot read '" + path + "'");
  return ReadRequest(bytes.str(), path, options);
}

Expected<SizeBindings> ParseSizeBindings(std::string_view text) {
  SizeBindings bindings;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t eq = item.find('=');
    std::string name(item.substr(0, eq));
    if (eq == std::string_view::npos || name.empty()) {
      return InvalidArgument("size binding '" + std::string(item) + "': expected NAME=VALUE");
    }
    std::string value_text(item.substr(eq + 1));
    int64_t value = 0;
    size_t used = 0;
    try {
      value = std::stoll(value_text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value_text.size() || value <= 0) {
      return InvalidArgument("size binding '" + std::string(item) +
                             "': the value must be a positive integer");
    }
    bindings[name] = value;
  }
  return bindings;
}

}  // namespace tilesmith::ascgraph
