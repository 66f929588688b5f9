// Reading AscGraph requests: text, binary and JSON encodings of the same graph, the schema
// quirks of real files (bare-integer align, dtype names), JSON requests with sizes and
// platform, and errors located the way protobuf reports them.
#include "compiler/ascgraph/reader.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "compiler/ascgraph/ascgraph.pb.h"
#include "compiler/ascgraph/lower.h"
#include "compiler/hlo/canonical.h"
#include "tests/ascgraph/test_util.h"

namespace tilesmith::ascgraph {
namespace {

// A complete graph in the compact text style: x[s0,4] -> Load -> Abs -> Store -> Output.
constexpr std::string_view kAbsGraph = R"(asc_graph_attr {
  axis { name: "z0" size: "s0" align: 1 }
  axis { id: 1 name: "z1" size: "4" align: "2" }
  size_var: "s0"
}
asc_node {
  outputs { attr { dtype: FLOAT16 axis_ids: 0 axis_ids: 1 repeats: "s0" repeats: "4" strides: "4" strides: "1" } }
  attr { name: "x" type: "Data" sched { axis: 0 axis: 1 } ir_attr_def { attr { key: "index" value { i: 0 } } } }
}
asc_node {
  input_src { src_node_name: "x" }
  outputs { attr { dtype: 1 axis_ids: 0 axis_ids: 1 repeats: "s0" repeats: "4" strides: "4" strides: "1" } }
  attr { name: "load" type: "Load" sched { axis: 0 axis: 1 } }
}
asc_node {
  input_src { src_node_name: "load" }
  outputs { attr { dtype: 1 axis_ids: 0 axis_ids: 1 repeats: "s0" repeats: "4" strides: "4" strides: "1" } }
  attr { name: "abs" type: "Abs" sched { axis: 0 axis: 1 } }
  ir_def { type: "Abs" }
}
asc_node {
  input_src { src_node_name: "abs" }
  outputs { attr { dtype: 1 axis_ids: 0 axis_ids: 1 repeats: "s0" repeats: "4" strides: "4" strides: "1" } }
  attr { name: "store" type: "Store" sched { axis: 0 axis: 1 } }
}
asc_node {
  input_src { src_node_name: "store" }
  attr { name: "out" type: "Output" ir_attr_def { attr { key: "index" value { i: 0 } } } }
}
graph_name: "abs_graph"
)";

// The same text with the quirks spelled the way the schema itself reads them.
std::string SchemaText(std::string text) {
  for (auto [from, to] : {std::pair{"align: 1", "align: \"1\""}, {"FLOAT16", "1"}}) {
    for (size_t at; (at = text.find(from)) != std::string::npos;)
      text.replace(at, strlen(from), to);
  }
  return text;
}

std::string Fingerprint(const Expected<Request>& request) {
  EXPECT_TRUE(request.has_value()) << request.error().message;
  if (!request) return "";
  auto module = LowerToHlo(*request);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? *hlo::FusionFingerprint(**module) : "";
}

TEST(ReaderTest, ReadsTheModel) {
  auto request = ReadRequest(kAbsGraph, "abs.ascgraph.txt", {.sizes = {{"s0", 8}}});
  ASSERT_TRUE(request.has_value()) << request.error().message;
  const Graph& graph = request->graph;
  EXPECT_EQ(graph.name, "abs_graph");
  EXPECT_EQ(graph.size_vars, std::vector<std::string>{"s0"});
  ASSERT_EQ(graph.axes.size(), 2u);
  EXPECT_EQ(graph.axes[0].size.ToString(), "s0");
  EXPECT_EQ(graph.axes[0].align, 1);  // a bare integer in the text
  EXPECT_EQ(graph.axes[1].align, 2);  // a string, as the schema has it
  ASSERT_EQ(graph.nodes.size(), 5u);
  const Node& x = graph.nodes[0];
  EXPECT_EQ(x.type, "Data");
  EXPECT_EQ(x.IntAttr("index"), 0);
  EXPECT_EQ(x.outputs[0].dtype, hlo::PrimitiveType::kF16);               // FLOAT16 by name
  EXPECT_EQ(graph.nodes[1].outputs[0].dtype, hlo::PrimitiveType::kF16);  // 1 by number
  EXPECT_EQ(graph.nodes[2].inputs[0].node, "load");
  EXPECT_EQ(graph.nodes[4].outputs.size(), 0u);
  EXPECT_EQ(request->sizes.at("s0"), 8);
}

TEST(ReaderTest, TextBinaryAndJsonEncodingsGiveTheSameFusion) {
  ReadOptions options{.sizes = {{"s0", 8}}};
  std::string text_fingerprint = Fingerprint(ReadRequest(kAbsGraph, "g.ascgraph.txt", options));
  ASSERT_FALSE(text_fingerprint.empty());

  proto::AscGraphDef def;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(SchemaText(std::string(kAbsGraph)), &def));
  EXPECT_EQ(Fingerprint(ReadRequest(def.SerializeAsString(), "g.pb", options)), text_fingerprint);

  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(def, &json).ok());
  EXPECT_EQ(Fingerprint(ReadRequest(json, "g.ascgraph.json", options)), text_fingerprint);
  // Without a telling name the contents decide.
  EXPECT_EQ(Fingerprint(ReadRequest(json, "request", options)), text_fingerprint);
  EXPECT_EQ(Fingerprint(ReadRequest(kAbsGraph, "request", options)), text_fingerprint);
  EXPECT_EQ(Fingerprint(ReadRequest(def.SerializeAsString(), "request", options)),
            text_fingerprint);
}

TEST(ReaderTest, BinaryAlignWrittenAsVarintIsRead) {
  proto::AscGraphDef def;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(SchemaText(std::string(kAbsGraph)), &def));
  proto::AxisDef* axis = def.mutable_asc_graph_attr()->mutable_axis(1);
  axis->clear_align();
  axis->GetReflection()->MutableUnknownFields(axis)->AddVarint(6, 16);
  auto request = ReadRequest(def.SerializeAsString(), "g.pb");
  ASSERT_TRUE(request.has_value()) << request.error().message;
  EXPECT_EQ(request->graph.axes[1].align, 16);
}

TEST(ReaderTest, JsonRequestsCarrySizesAndPlatform) {
  proto::AscGraphDef def;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(SchemaText(std::string(kAbsGraph)), &def));
  std::string graph_json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(def, &graph_json).ok());
  std::string request_json = R"({"graph": )" + graph_json +
                             R"(, "sizes": {"s0": 2048},
                                 "platform": {"name": "910b3", "vector_cores": 40}})";
  auto request = ReadRequest(request_json, "r.ascgraph.json");
  ASSERT_TRUE(request.has_value()) << request.error().message;
  EXPECT_EQ(request->sizes.at("s0"), 2048);
  ASSERT_TRUE(request->platform.has_value());
  EXPECT_EQ(request->platform->name, "910b3");
  EXPECT_EQ(request->platform->vector_cores, 40);
  EXPECT_EQ(request->platform->ub_bytes, 196352);
  // Bindings from the command line win over the request's.
  auto overridden = ReadRequest(request_json, "r.ascgraph.json", {.sizes = {{"s0", 4}}});
  ASSERT_TRUE(overridden.has_value());
  EXPECT_EQ(overridden->sizes.at("s0"), 4);

  // The graph may also be the text format, as a string.
  nlohmann::json wrapped = {{"graph", std::string(kAbsGraph)}, {"sizes", {{"s0", 8}}}};
  EXPECT_EQ(Fingerprint(ReadRequest(wrapped.dump(), "r.ascgraph.json")),
            Fingerprint(ReadRequest(kAbsGraph, "g.ascgraph.txt", {.sizes = {{"s0", 8}}})));
}

TEST(ReaderTest, JsonAcceptsDtypeNamesAndIntegerAlign) {
  std::string json =
      R"({"asc_graph_attr": {"axis": [{"id": 0, "name": "z0", "size": "4", "align": 8}]},
    "asc_node": [{"outputs": [{"attr": {"dtype": "DT_BF16", "axis_ids": [0], "repeats": ["4"],
                                         "strides": ["1"]}}],
                  "attr": {"name": "x", "type": "Data"}},
                 {"outputs": [{"attr": {"dtype": "3", "axisIds": [0]}}],
                  "attr": {"name": "y", "type": "Data"}}]})";
  auto request = ReadRequest(json, "g.ascgraph.json");
  ASSERT_TRUE(request.has_value()) << request.error().message;
  EXPECT_EQ(request->graph.axes[0].align, 8);
  EXPECT_EQ(request->graph.nodes[0].outputs[0].dtype, hlo::PrimitiveType::kBF16);
  EXPECT_EQ(request->graph.nodes[1].outputs[0].dtype, hlo::PrimitiveType::kS32);
  EXPECT_EQ(request->graph.nodes[1].outputs[0].axis_ids, std::vector<int64_t>{0});
}

TEST(ReaderTest, TextErrorsNameFileLineAndColumn) {
  // protobuf's own message and position; the column is that of the text as written, even
  // after the bare `align: 1` on the same line was quoted.
  std::string text = "asc_graph_attr {\n  axis { align: 1 size: 4 }\n}\n";
  auto request = ReadRequest(text, "bad.ascgraph.txt");
  ASSERT_FALSE(request.has_value());
  EXPECT_EQ(request.error().message, "bad.ascgraph.txt:2:25: error: Expected string, got: 4");

  request = ReadRequest("asc_node { attr { name: \"x\" }\n", "cut.ascgraph.txt");
  ASSERT_FALSE(request.has_value());
  EXPECT_NE(request.error().message.find("cut.ascgraph.txt:2:1: error: "), std::string::npos)
      << request.error().message;

  request = ReadRequest("asc_node {\n  outputs { attr { dtype: FLAOT } }\n}\n", "t.ascgraph.txt");
  ASSERT_FALSE(request.has_value());
  EXPECT_EQ(
      request.error().message,
      "t.ascgraph.txt:2:27: error: unknown data type 'FLAOT' for dtype (a GE number, or a name "
      "such as FLOAT16)");
}

TEST(ReaderTest, UnknownJsonFieldsAreSkippedUnlessStrict) {
  std::string json = R"({"graph_name": "g", "future_field": 3})";
  auto lenient = ReadRequest(json, "g.ascgraph.json");
  ASSERT_TRUE(lenient.has_value()) << lenient.error().message;
  EXPECT_EQ(lenient->graph.name, "g");
  auto strict = ReadRequest(json, "g.ascgraph.json", {.allow_unknown_fields = false});
  ASSERT_FALSE(strict.has_value());
  EXPECT_NE(strict.error().message.find("g.ascgraph.json: error: not a valid AscGraphDef: "),
            std::string::npos);
  EXPECT_NE(strict.error().message.find("future_field"), std::string::npos)
      << strict.error().message;
}

TEST(ReaderTest, UnknownFieldsAreSkippedUnlessStrict) {
  std::string text = std::string(kAbsGraph) + "future_field: 3\n";
  auto lenient = ReadRequest(text, "g.ascgraph.txt");
  EXPECT_TRUE(lenient.has_value()) << lenient.error().message;
  auto strict = ReadRequest(text, "g.ascgraph.txt", {.allow_unknown_fields = false});
  ASSERT_FALSE(strict.has_value());
  // protobuf reports the position after the field name.
  EXPECT_EQ(strict.error().message,
            "g.ascgraph.txt:31:13: error: Message type \"tilesmith.ascgraph.proto.AscGraphDef\" "
            "has no field named \"future_field\".");
}

TEST(ReaderTest, RequestErrors) {
  auto error = [](std::string_view json) {
    auto request = ReadRequest(json, "r.ascgraph.json");
    EXPECT_FALSE(request.has_value());
    return request ? "" : request.error().message;
  };
  EXPECT_NE(error("{\"graph\": {}, \n \"sizes\": {\"s0\": 1,}}")
                .find("r.ascgraph.json: error: "
                      "[json.exception.parse_error.101] "
                      "parse error at line 2, column"),
            std::string::npos);
  EXPECT_EQ(error(R"({"asc_node": [], "sizes": {"s0": 4}})"),
            "r.ascgraph.json: error: a request with sizes or platform needs a \"graph\"");
  EXPECT_EQ(error(R"({"graph": {}, "size": {}})"),
            "r.ascgraph.json: error: unknown request key 'size' (expected graph, sizes, platform)");
  EXPECT_EQ(error(R"({"graph": {}, "sizes": {"s0": -3}})"),
            "r.ascgraph.json: error: sizes.s0: a size must be positive");
  EXPECT_EQ(error(R"({"graph": {}, "sizes": {"s0": "big"}})"),
            "r.ascgraph.json: error: sizes.s0: expected an integer");
  EXPECT_EQ(error(R"({"graph": {}, "platform": {"cores": 8}})"),
            "r.ascgraph.json: error: platform: unknown key 'cores' (expected name, vector_cores, "
            "ub_bytes)");
  EXPECT_NE(error(R"({"graph": {"asc_node": 3}})")
                .find("r.ascgraph.json: graph: error: not a valid AscGraphDef"),
            std::string::npos);
  EXPECT_NE(error(R"({"graph": "asc_node {"})").find("r.ascgraph.json: graph:1:11: error:"),
            std::string::npos);
  EXPECT_EQ(
      error(R"({"asc_node": [{"outputs": [{"attr": {"dtype": "HALF"}}]}]})"),
      "r.ascgraph.json: error: asc_node[0].outputs[0].attr.dtype: unknown data type 'HALF' (a GE "
      "number, or a name such as FLOAT16)");
  auto binary = ReadRequest(std::string("\x0a\xff\xff", 3), "g.pb");
  ASSERT_FALSE(binary.has_value());
  EXPECT_EQ(binary.error().message,
            "g.pb: error: not a valid binary AscGraphDef (protobuf wire format)");
  auto missing = ReadRequestFile("/nonexistent/g.ascgraph.txt");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "cannot open '/nonexistent/g.ascgraph.txt'");
}

TEST(ReaderTest, ModelErrorsNameTheNodeAndField) {
  auto error = [](std::string_view text) {
    auto request = ReadRequest(text, "g.ascgraph.txt");
    EXPECT_FALSE(request.has_value());
    return request ? "" : request.error().message;
  };
  EXPECT_EQ(error("asc_node { attr { type: \"Abs\" } }"),
            "g.ascgraph.txt: error: asc_node[0]: attr.name is empty");
  EXPECT_EQ(error("asc_node { attr { name: \"a\" } }"),
            "g.ascgraph.txt: error: node 'a': neither attr.type nor ir_def.type");
  EXPECT_EQ(error("asc_graph_attr { axis { name: \"z0\" size: \"4\" axis_type: 9 } }"),
            "g.ascgraph.txt: error: axis 'z0' (id 0): axis_type 9 is not one of 0 (ORIGINAL) … 5 "
            "(MERGED)");
  EXPECT_EQ(error("asc_graph_attr { axis { name: \"z0\" } }"),
            "g.ascgraph.txt: error: axis 'z0' (id 0) size: the size expression is empty");
  EXPECT_EQ(error("asc_graph_attr { axis { name: \"z0\" size: \"4\" align: \"s0\" } }"),
            "g.ascgraph.txt: error: axis 'z0' (id 0): align 's0' must be an integer");
  EXPECT_EQ(
      error("asc_node { outputs { attr { dtype: 99 } } attr { name: \"a\" type: \"Abs\" } }"),
      "g.ascgraph.txt: error: node 'a' output 0 dtype: data type 99 is not supported (supported: "
      "FLOAT 0, FLOAT16 1, INT8 2, INT32 3, UINT8 4, INT16 6, UINT16 7, UINT32 8, INT64 9, "
      "UINT64 10, DOUBLE 11, BOOL 12, BF16 27)");
  // The node type may come from ir_def alone.
  auto request =
      ReadRequest("asc_node { attr { name: \"a\" } ir_def { type: \"Abs\" } }", "g.ascgraph.txt");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->graph.nodes[0].type, "Abs");
}

TEST(ReaderTest, IrAttributesKeepTheirTypes) {
  auto request = ReadRequest(R"(asc_node { attr { name: "a" type: "Abs" ir_attr_def {
      attr { key: "i" value { i: -3 } }
      attr { key: "f" value { f: 0.25 } }
      attr { key: "b" value { b: true } }
      attr { key: "s" value { s: "1.5" } }
      attr { key: "e" value { expression: "s0 * 2" } }
      attr { key: "dt" value { dt: 1 } }
      attr { key: "li" value { list { i: 1 i: 2 } } }
      attr { key: "lf" value { list { f: 0.5 } } }
      attr { key: "ls" value { list { s: "a" s: "b" } } } } } })",
                             "g.ascgraph.txt");
  ASSERT_TRUE(request.has_value()) << request.error().message;
  const Node& node = request->graph.nodes[0];
  EXPECT_EQ(node.IntAttr("i"), -3);
  EXPECT_EQ(node.FloatAttr("f"), 0.25);
  EXPECT_EQ(node.FloatAttr("s"), 1.5);  // Scalar's value is a numeric string
  EXPECT_EQ(std::get<bool>(node.ir_attrs.at("b")), true);
  EXPECT_EQ(std::get<std::string>(node.ir_attrs.at("e")), "s0 * 2");
  EXPECT_EQ(node.IntAttr("dt"), 1);
  EXPECT_EQ(std::get<std::vector<int64_t>>(node.ir_attrs.at("li")), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(std::get<std::vector<double>>(node.ir_attrs.at("lf")), std::vector<double>{0.5});
  EXPECT_EQ(std::get<std::vector<std::string>>(node.ir_attrs.at("ls")),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(node.IntAttr("missing").has_value());
  EXPECT_FALSE(node.IntAttr("f").has_value());
}

TEST(ReaderTest, SizeBindingsFromTheCommandLine) {
  auto sizes = ParseSizeBindings("s0=2048,s1=64");
  ASSERT_TRUE(sizes.has_value());
  EXPECT_EQ(*sizes, (SizeBindings{{"s0", 2048}, {"s1", 64}}));
  EXPECT_TRUE(ParseSizeBindings("")->empty());
  for (auto [text, message] : {
           std::pair{"s0", "size binding 's0': expected NAME=VALUE"},
           {"=4", "size binding '=4': expected NAME=VALUE"},
           {"s0=abc", "size binding 's0=abc': the value must be a positive integer"},
           {"s0=0", "size binding 's0=0': the value must be a positive integer"},
           {"s0=4x", "size binding 's0=4x': the value must be a positive integer"},
       }) {
    auto parsed = ParseSizeBindings(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_EQ(parsed.error().message, message);
  }
  EXPECT_TRUE(IsAscGraphPath("a/b.ascgraph.txt"));
  EXPECT_TRUE(IsAscGraphPath("b.ascgraph.json"));
  EXPECT_TRUE(IsAscGraphPath("b.pb"));
  EXPECT_FALSE(IsAscGraphPath("b.hlo"));
  EXPECT_FALSE(IsAscGraphPath("b.json"));
}

}  // namespace
}  // namespace tilesmith::ascgraph
