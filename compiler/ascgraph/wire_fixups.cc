#include "compiler/ascgraph/wire_fixups.h"

#include <google/protobuf/unknown_field_set.h>

#include <cctype>

#include "compiler/ascgraph/data_type.h"

namespace tilesmith::ascgraph::internal {
namespace {

bool IsIdentifierStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Copies text to `out`, applying the two fixes, and keeps the position in `out` so that
// every fix can record how it moved the columns after it.
class TextFixer {
 public:
  TextFixer(std::string_view text, std::vector<ColumnShift>& shifts)
      : text_(text), shifts_(shifts) {}

  Expected<std::string> Run() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '#') {
        CopyWhile([](char ch) { return ch != '\n'; });
      } else if (c == '"' || c == '\'') {
        CopyString(c);
      } else if (IsIdentifierStart(c)) {
        size_t start = pos_;
        CopyWhile(IsIdentifierChar);
        std::string_view word = text_.substr(start, pos_ - start);
        if (word == "align" || word == "dtype") TS_RETURN_IF_ERROR(FixValue(word));
      } else {
        Emit(text_.substr(pos_++, 1));
      }
    }
    return std::move(out_);
  }

 private:
  template <typename Predicate>
  void CopyWhile(Predicate predicate) {
    size_t start = pos_;
    while (pos_ < text_.size() && predicate(text_[pos_])) ++pos_;
    Emit(text_.substr(start, pos_ - start));
  }

  void CopyString(char quote) {
    size_t start = pos_++;
    while (pos_ < text_.size() && text_[pos_] != quote && text_[pos_] != '\n') {
      pos_ += text_[pos_] == '\\' && pos_ + 1 < text_.size() ? 2 : 1;
    }
    if (pos_ < text_.size() && text_[pos_] == quote) ++pos_;
    Emit(text_.substr(start, pos_ - start));
  }

  void Emit(std::string_view piece) {
    for (char c : piece) {
      if (c == '\n') {
        ++line_;
        column_ = 0;
      } else {
        ++column_;
      }
    }
    out_ += piece;
  }

  // After `align` or `dtype`: `: VALUE` on the same line, where VALUE may need rewriting.
  Status FixValue(std::string_view field) {
    CopyWhile([](char ch) { return ch == ' ' || ch == '\t'; });
    if (pos_ >= text_.size() || text_[pos_] != ':') return OkStatus();
    CopyWhile([](char ch) { return ch == ':' || ch == ' ' || ch == '\t'; });
    size_t start = pos_;
    if (field == "align") {
      if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
      size_t digits = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ == digits ||
          (pos_ < text_.size() && (IsIdentifierChar(text_[pos_]) || text_[pos_] == '.'))) {
        pos_ = start;  // not a bare integer: protobuf reads (or rejects) it as written
        return OkStatus();
      }
      shifts_.push_back({line_, column_, 1});
      Emit("\"");
      Emit(text_.substr(start, pos_ - start));
      shifts_.push_back({line_, column_, 1});
      Emit("\"");
      return OkStatus();
    }
    if (pos_ >= text_.size() || !IsIdentifierStart(text_[pos_])) return OkStatus();
    while (pos_ < text_.size() && IsIdentifierChar(text_[pos_])) ++pos_;
    std::string_view name = text_.substr(start, pos_ - start);
    std::optional<int64_t> number = GeDataTypeFromName(name);
    if (!number) {
      return InvalidArgument(Location(start) + ": error: unknown data type '" + std::string(name) +
                             "' for dtype (a GE number, or a name such as FLOAT16)");
    }
    std::string replacement = std::to_string(*number);
    shifts_.push_back(
        {line_, column_, static_cast<int>(replacement.size()) - static_cast<int>(name.size())});
    Emit(replacement);
    return OkStatus();
  }

  std::string Location(size_t offset) const {
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < offset; ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    return std::to_string(line) + ":" + std::to_string(offset - line_start + 1);
  }

  std::string_view text_;
  std::vector<ColumnShift>& shifts_;
  std::string out_;
  size_t pos_ = 0;
  int line_ = 0;
  int column_ = 0;
};

// The value of `key` in `object` under its proto field name or its lowerCamelCase JSON name.
nlohmann::json* Member(nlohmann::json& object, const char* name, const char* json_name) {
  if (!object.is_object()) return nullptr;
  if (auto it = object.find(name); it != object.end()) return &*it;
  if (auto it = object.find(json_name); it != object.end()) return &*it;
  return nullptr;
}

}  // namespace

Expected<std::string> FixTextFormat(std::string_view text, std::vector<ColumnShift>& shifts) {
  return TextFixer(text, shifts).Run();
}

int OriginalColumn(const std::vector<ColumnShift>& shifts, int line, int column) {
  int original = column;
  for (const ColumnShift& shift : shifts) {
    if (shift.line == line && shift.column < column) original -= shift.delta;
  }
  return original;
}

Status FixJson(nlohmann::json& graph, std::string_view where) {
  if (nlohmann::json* attr = Member(graph, "asc_graph_attr", "ascGraphAttr")) {
    if (nlohmann::json* axes = Member(*attr, "axis", "axis"); axes && axes->is_array()) {
      for (nlohmann::json& axis : *axes) {
        nlohmann::json* align = Member(axis, "align", "align");
        if (align && align->is_number_integer()) *align = std::to_string(align->get<int64_t>());
      }
    }
  }
  nlohmann::json* nodes = Member(graph, "asc_node", "ascNode");
  if (nodes == nullptr || !nodes->is_array()) return OkStatus();
  for (size_t n = 0; n < nodes->size(); ++n) {
    nlohmann::json* outputs = Member((*nodes)[n], "outputs", "outputs");
    if (outputs == nullptr || !outputs->is_array()) continue;
    for (size_t o = 0; o < outputs->size(); ++o) {
      nlohmann::json* attr = Member((*outputs)[o], "attr", "attr");
      nlohmann::json* dtype = attr ? Member(*attr, "dtype", "dtype") : nullptr;
      if (dtype == nullptr || !dtype->is_string()) continue;
      std::string name = dtype->get<std::string>();
      if (!name.empty() && (std::isdigit(static_cast<unsigned char>(name[0])) || name[0] == '-')) {
        continue;  // proto3 JSON spells int64 values as strings too
      }
      std::optional<int64_t> number = GeDataTypeFromName(name);
      if (!number) {
        return InvalidArgument(std::string(where) + ": error: asc_node[" + std::to_string(n) +
                               "].outputs[" + std::to_string(o) +
                               "].attr.dtype: unknown data type '" + name +
                               "' (a GE number, or a name such as FLOAT16)");
      }
      *dtype = *number;
    }
  }
  return OkStatus();
}

void FixBinary(proto::AscGraphDef& graph) {
  constexpr int kAlignField = 6;
  for (proto::AxisDef& axis : *graph.mutable_asc_graph_attr()->mutable_axis()) {
    const google::protobuf::UnknownFieldSet& unknown = axis.GetReflection()->GetUnknownFields(axis);
    bool found = false;
    for (int i = 0; i < unknown.field_count(); ++i) {
      const google::protobuf::UnknownField& field = unknown.field(i);
      if (field.number() == kAlignField &&
          field.type() == google::protobuf::UnknownField::TYPE_VARINT) {
        axis.set_align(std::to_string(static_cast<int64_t>(field.varint())));
        found = true;
      }
    }
    if (found) axis.GetReflection()->MutableUnknownFields(&axis)->DeleteByNumber(kAlignField);
  }
}

}  // namespace tilesmith::ascgraph::internal
