#include "split/partition_spec.h"

#include <cctype>
#include <set>

namespace tilesmith::split {

using nlohmann::json;

const std::vector<std::string>& PartitionSpec::AxesOf(int64_t d) const {
  static const std::vector<std::string> kNone;
  return d < static_cast<int64_t>(dims.size()) ? dims[d] : kNone;
}

PartitionSpec PartitionSpec::Padded(int64_t rank) const {
  PartitionSpec padded = *this;
  if (static_cast<int64_t>(padded.dims.size()) < rank) padded.dims.resize(rank);
  return padded;
}

PartitionSpec PartitionSpec::Normalized() const {
  PartitionSpec normal = *this;
  while (!normal.dims.empty() && normal.dims.back().empty()) normal.dims.pop_back();
  return normal;
}

std::string SpecToString(const PartitionSpec& spec) {
  std::string text = "P(";
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    if (d) text += ", ";
    const std::vector<std::string>& axes = spec.dims[d];
    if (axes.empty()) {
      text += "None";
    } else if (axes.size() == 1) {
      text += "'" + axes[0] + "'";
    } else {
      text += "(";
      for (size_t a = 0; a < axes.size(); ++a) text += (a ? ", '" : "'") + axes[a] + "'";
      text += ")";
    }
  }
  return text + ")";
}

json SpecToJson(const PartitionSpec& spec) {
  json value = json::array();
  for (const std::vector<std::string>& axes : spec.dims) {
    if (axes.empty()) {
      value.push_back(nullptr);
    } else if (axes.size() == 1) {
      value.push_back(axes[0]);
    } else {
      value.push_back(axes);
    }
  }
  return value;
}

namespace {

// A small recursive-descent reader over one spec's text.
class SpecReader {
 public:
  explicit SpecReader(std::string_view text) : text_(text) {}

  Expected<PartitionSpec> Read() {
    SkipSpace();
    if (text_.substr(pos_, 13) == "PartitionSpec") {
      pos_ += 13;
    } else if (Peek() == 'P') {
      ++pos_;
    } else {
      return Fail("expected P(...)");
    }
    TS_RETURN_IF_ERROR(Expect('('));
    PartitionSpec spec;
    SkipSpace();
    if (Peek() == ')') {
      ++pos_;
    } else {
      while (true) {
        TS_ASSIGN_OR_RETURN(std::vector<std::string> axes, ReadEntry());
        spec.dims.push_back(std::move(axes));
        SkipSpace();
        if (Peek() == ',') {
          ++pos_;
          SkipSpace();
          if (Peek() == ')') {  // a trailing comma, as Python allows
            ++pos_;
            break;
          }
          continue;
        }
        if (Peek() == ')') {
          ++pos_;
          break;
        }
        return Fail("expected ',' or ')'");
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the spec");
    return spec;
  }

 private:
  // None | 'axis' | ('a', 'b') | ()
  Expected<std::vector<std::string>> ReadEntry() {
    SkipSpace();
    if (text_.substr(pos_, 4) == "None") {
      pos_ += 4;
      return std::vector<std::string>{};
    }
    if (Peek() == '\'' || Peek() == '"') {
      TS_ASSIGN_OR_RETURN(std::string name, ReadName());
      return std::vector<std::string>{name};
    }
    if (Peek() != '(') return Fail("expected None, a quoted axis name or a tuple of names");
    ++pos_;
    std::vector<std::string> axes;
    while (true) {
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        return axes;
      }
      TS_ASSIGN_OR_RETURN(std::string name, ReadName());
      axes.push_back(std::move(name));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        return Fail("expected ',' or ')' in a tuple of axis names");
      }
    }
  }

  Expected<std::string> ReadName() {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Fail("expected a quoted axis name");
    size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) ++pos_;
    if (pos_ >= text_.size()) {
      pos_ = start - 1;
      return Fail("unterminated axis name");
    }
    std::string name(text_.substr(start, pos_ - start));
    ++pos_;
    if (name.empty()) {
      pos_ = start - 1;
      return Fail("empty axis name");
    }
    return name;
  }

  Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Fail(std::string("expected '") + c + "'");
    ++pos_;
    return OkStatus();
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::unexpected<Error> Fail(const std::string& what) const {
    return InvalidArgument("partition spec '" + std::string(text_) + "', col " +
                           std::to_string(pos_ + 1) + ": " + what);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Expected<PartitionSpec> ParseSpec(std::string_view text) { return SpecReader(text).Read(); }

Expected<PartitionSpec> ParseSpecJson(const json& value) {
  if (!value.is_array()) {
    return InvalidArgument("a partition spec in JSON is an array such as [\"i\", null], not " +
                           value.dump());
  }
  PartitionSpec spec;
  for (size_t d = 0; d < value.size(); ++d) {
    const json& entry = value[d];
    std::vector<std::string> axes;
    auto bad = [&] {
      return InvalidArgument("partition spec " + value.dump() + ", entry " + std::to_string(d) +
                             ": expected null, an axis name or an array of axis names, not " +
                             entry.dump());
    };
    if (entry.is_string()) {
      axes.push_back(entry.get<std::string>());
    } else if (entry.is_array()) {
      for (const json& name : entry) {
        if (!name.is_string()) return bad();
        axes.push_back(name.get<std::string>());
      }
    } else if (!entry.is_null()) {
      return bad();
    }
    for (const std::string& name : axes) {
      if (name.empty()) return bad();
    }
    spec.dims.push_back(std::move(axes));
  }
  return spec;
}

Expected<std::vector<PartitionSpec>> ParseSpecList(std::string_view text) {
  std::vector<PartitionSpec> specs;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(start, end - start);
    bool blank = piece.find_first_not_of(" \t\n") == std::string_view::npos;
    if (!blank || end != text.size()) {
      auto spec = ParseSpec(piece);
      if (!spec) {
        return InvalidArgument("spec " + std::to_string(specs.size()) + ": " +
                               spec.error().message);
      }
      specs.push_back(std::move(*spec));
    }
    start = end + 1;
  }
  return specs;
}

Status ValidateSpec(const PartitionSpec& spec, std::span<const int64_t> dims, const Mesh& mesh,
                    std::string_view what) {
  const std::string prefix = std::string(what) + " " + SpecToString(spec) + ": ";
  if (spec.dims.size() > dims.size()) {
    return InvalidArgument(prefix + "has " + std::to_string(spec.dims.size()) +
                           " entries but the array has rank " + std::to_string(dims.size()));
  }
  std::set<std::string> used;
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    int64_t factor = 1;
    for (const std::string& name : spec.dims[d]) {
      int64_t axis = mesh.AxisIndex(name);
      if (axis < 0) {
        return InvalidArgument(prefix + "dim " + std::to_string(d) + " names axis '" + name +
                               "', which mesh " + mesh.ShapeString() + " does not have");
      }
      if (!used.insert(name).second) {
        return InvalidArgument(prefix + "mesh axis '" + name +
                               "' appears more than once (each axis at most once per spec)");
      }
      factor *= mesh.axes[axis].size;
    }
    if (dims[d] % factor != 0) {
      std::string axes;
      for (const std::string& name : spec.dims[d]) axes += (axes.empty() ? "'" : ",'") + name + "'";
      return InvalidArgument(prefix + "dim " + std::to_string(d) + " of size " +
                             std::to_string(dims[d]) + " is not divisible by mesh axis " + axes +
                             " of size " + std::to_string(factor));
    }
  }
  return OkStatus();
}

int64_t SplitFactor(const PartitionSpec& spec, int64_t d, const Mesh& mesh) {
  int64_t factor = 1;
  for (const std::string& name : spec.AxesOf(d)) factor *= mesh.axes[mesh.AxisIndex(name)].size;
  return factor;
}

std::vector<int64_t> BlockShape(const PartitionSpec& spec, std::span<const int64_t> dims,
                                const Mesh& mesh) {
  std::vector<int64_t> block(dims.begin(), dims.end());
  for (size_t d = 0; d < block.size(); ++d) block[d] /= SplitFactor(spec, d, mesh);
  return block;
}

std::string DimsToString(std::span<const int64_t> dims) {
  std::string text = "(";
  for (size_t d = 0; d < dims.size(); ++d) text += (d ? "," : "") + std::to_string(dims[d]);
  return text + ")";
}

}  // namespace tilesmith::split
