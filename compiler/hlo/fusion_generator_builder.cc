#include <algorithm>
#include <array>

#include "compiler/hlo/fusion_generator_internal.h"

namespace tilesmith::hlo::generator_internal {
namespace {

std::string Join(const std::vector<int64_t>& values, std::string_view separator = ",") {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += separator;
    text += std::to_string(values[i]);
  }
  return text;
}

int64_t ByteSize(const Value& value) {
  int64_t elements = 1;
  for (int64_t dim : value.dims) elements *= dim;
  return elements * std::max(1, BitWidth(value.type) / 8);
}

constexpr std::array<PrimitiveType, 5> kConvertTypes = {PrimitiveType::kF32, PrimitiveType::kBF16,
                                                        PrimitiveType::kF16, PrimitiveType::kS32,
                                                        PrimitiveType::kS8};

// Ops defined for every value of a type: no logarithm of a negative number, no division.
constexpr std::array<std::string_view, 9> kFloatUnary = {
    "negate", "abs",  "exponential", "tanh", "logistic", "exponential-minus-one",
    "floor",  "ceil", "sign"};
constexpr std::array<std::string_view, 3> kIntUnary = {"negate", "abs", "not"};
constexpr std::array<std::string_view, 5> kFloatBinary = {"add", "subtract", "multiply", "maximum",
                                                          "minimum"};
constexpr std::array<std::string_view, 8> kIntBinary = {
    "add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor"};
constexpr std::array<std::string_view, 6> kDirections = {"GT", "LT", "GE", "LE", "EQ", "NE"};

template <typename T, size_t N>
const T& Pick(Random& random, const std::array<T, N>& items) {
  return items[random.Below(N)];
}

// A type to convert a `type` value to.
PrimitiveType OtherType(Random& random, PrimitiveType type) {
  PrimitiveType other = Pick(random, kConvertTypes);
  if (other != type) return other;
  return type == PrimitiveType::kF32 ? PrimitiveType::kBF16 : PrimitiveType::kF32;
}

}  // namespace

std::string ShapeText(PrimitiveType type, const std::vector<int64_t>& dims) {
  return std::string(PrimitiveTypeName(type)) + "[" + Join(dims) + "]";
}

Value Builder::Op(std::string_view opcode, PrimitiveType type, std::vector<int64_t> dims,
                  const std::vector<Value>& operands, const std::string& attributes) {
  std::string name(opcode);
  std::replace(name.begin(), name.end(), '-', '_');
  Value value{name + "." + std::to_string(next_++), type, std::move(dims)};
  std::string line =
      value.name + " = " + ShapeText(type, value.dims) + " " + std::string(opcode) + "(";
  for (size_t i = 0; i < operands.size(); ++i) line += (i ? ", " : "") + operands[i].name;
  line += ")";
  if (!attributes.empty()) line += ", " + attributes;
  lines_.push_back(std::move(line));
  values_.push_back(value);
  ++ops_;
  return value;
}

Value Builder::Parameter(PrimitiveType type, std::vector<int64_t> dims) {
  Value value{"p" + std::to_string(parameters_.size()), type, std::move(dims)};
  lines_.push_back(value.name + " = " + ShapeText(type, value.dims) + " parameter(" +
                   std::to_string(parameters_.size()) + ")");
  parameters_.push_back(value);
  return value;
}

Value Builder::Constant(PrimitiveType type, const std::string& literal) {
  Value value{"c." + std::to_string(next_++), type, {}};
  lines_.push_back(value.name + " = " + ShapeText(type, {}) + " constant(" + literal + ")");
  return value;
}

std::vector<Value> Builder::ValuesLike(const Value& x) const {
  std::vector<Value> like;
  for (const Value& value : values_) {
    if (value.name != x.name && value.type == x.type && value.dims == x.dims) {
      like.push_back(value);
    }
  }
  return like;
}

Value Builder::OtherOperand(const Value& x, int& budget) {
  std::vector<Value> earlier = ValuesLike(x);
  if (!earlier.empty() && random_.OneIn(3)) return earlier[random_.Below(earlier.size())];
  if (budget > 1 && random_.OneIn(2)) {
    --budget;  // the broadcast
    if (random_.OneIn(2)) {
      static constexpr std::array<std::string_view, 5> kFloats = {"0.5", "2", "-1.5", "0.125", "3"};
      static constexpr std::array<std::string_view, 4> kInts = {"3", "-2", "7", "1"};
      std::string literal(IsFloatingPoint(x.type) ? Pick(random_, kFloats) : Pick(random_, kInts));
      return Broadcast(Constant(x.type, literal), x.dims, {});
    }
    std::vector<int64_t> kept, small;
    for (int64_t d = 0; d < static_cast<int64_t>(x.dims.size()); ++d) {
      if (random_.OneIn(2)) kept.push_back(d), small.push_back(x.dims[d]);
    }
    return Broadcast(Parameter(x.type, small), x.dims, kept);
  }
  return Parameter(x.type, x.dims);
}

Value Builder::Unary(const Value& x) {
  std::string_view opcode =
      IsFloatingPoint(x.type) ? Pick(random_, kFloatUnary) : Pick(random_, kIntUnary);
  return Op(opcode, x.type, x.dims, {x});
}

Value Builder::Binary(const Value& x, int& budget) {
  Value other = OtherOperand(x, budget);
  std::string_view opcode =
      IsFloatingPoint(x.type) ? Pick(random_, kFloatBinary) : Pick(random_, kIntBinary);
  std::vector<Value> operands = {x, other};
  if (random_.OneIn(2)) std::swap(operands[0], operands[1]);
  --budget;
  return Op(opcode, x.type, x.dims, operands);
}

Value Builder::Elementwise(Value x, int ops, bool convert) {
  int budget = ops;
  while (budget > 0) {
    int64_t choice = random_.Below(10);
    if (choice < 4) {
      x = Unary(x);
      --budget;
    } else if (choice < 8 || (choice == 8 && budget < 2)) {
      x = Binary(x, budget);
    } else if (choice == 8) {
      --budget;  // the select
      Value other = OtherOperand(x, budget);
      Value predicate = Op("compare", PrimitiveType::kPred, x.dims, {x, other},
                           "direction=" + std::string(Pick(random_, kDirections)));
      --budget;
      x = Op("select", x.type, x.dims, {predicate, x, other});
    } else if (convert) {
      x = Op("convert", OtherType(random_, x.type), x.dims, {x});
      --budget;
    } else {
      x = Unary(x);
      --budget;
    }
  }
  return x;
}

Value Builder::UnaryChain(Value x, int ops, bool convert) {
  for (int i = 0; i < ops; ++i) {
    if (convert && random_.OneIn(4)) {
      x = Op("convert", OtherType(random_, x.type), x.dims, {x});
    } else {
      x = Unary(x);
    }
  }
  return x;
}

Value Builder::Broadcast(const Value& x, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& kept) {
  return Op("broadcast", x.type, dims, {x}, "dimensions={" + Join(kept) + "}");
}

Value Builder::Slice(const Value& x, bool unit_stride) {
  std::vector<int64_t> dims;
  std::string attribute = "slice={";
  for (size_t d = 0; d < x.dims.size(); ++d) {
    int64_t size = x.dims[d];
    int64_t start = random_.Below(size / 4 + 1);
    int64_t limit = size - random_.Below(size / 4 + 1);
    if (limit <= start) limit = start + 1;
    int64_t stride = unit_stride ? 1 : random_.Between(1, 3);
    dims.push_back((limit - start + stride - 1) / stride);
    attribute += (d ? ", [" : "[") + std::to_string(start) + ":" + std::to_string(limit);
    if (stride != 1) attribute += ":" + std::to_string(stride);
    attribute += "]";
  }
  return Op("slice", x.type, dims, {x}, attribute + "}");
}

Value Builder::Concatenate(const std::vector<Value>& operands, int64_t axis) {
  std::vector<int64_t> dims = operands[0].dims;
  dims[axis] = 0;
  for (const Value& operand : operands) dims[axis] += operand.dims[axis];
  return Op("concatenate", operands[0].type, dims, operands,
            "dimensions={" + std::to_string(axis) + "}");
}

Value Builder::Transpose(const Value& x, const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  for (int64_t from : permutation) dims.push_back(x.dims[from]);
  return Op("transpose", x.type, dims, {x}, "dimensions={" + Join(permutation) + "}");
}

std::string Builder::Reducer(std::string_view opcode, PrimitiveType type) {
  std::string shape = ShapeText(type, {});
  std::string name = std::string(opcode) + "_" + std::string(PrimitiveTypeName(type));
  reducers_.emplace(name, name + " {\n  a = " + shape + " parameter(0)\n  b = " + shape +
                              " parameter(1)\n  ROOT r = " + shape + " " + std::string(opcode) +
                              "(a, b)\n}\n");
  return name;
}

std::pair<std::string, Value> Builder::DrawReducer(PrimitiveType type) {
  int64_t kind = random_.Below(3);
  bool floating = IsFloatingPoint(type);
  bool wide = type == PrimitiveType::kS32;
  if (kind == 0) return {Reducer("add", type), Constant(type, "0")};
  if (kind == 1) {
    return {Reducer("maximum", type), Constant(type, floating ? "-inf"
                                                     : wide   ? "-2147483648"
                                                              : "-128")};
  }
  return {Reducer("minimum", type), Constant(type, floating ? "inf" : wide ? "2147483647" : "127")};
}

Value Builder::Reduce(const Value& x, const std::vector<int64_t>& reduced) {
  auto [reducer, init] = DrawReducer(x.type);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(x.dims.size()); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) dims.push_back(x.dims[d]);
  }
  return Op("reduce", x.type, dims, {x, init},
            "dimensions={" + Join(reduced) + "}, to_apply=" + reducer);
}

Value Builder::ReduceWindow(const Value& x) {
  auto [reducer, init] = DrawReducer(x.type);
  size_t rank = x.dims.size();
  std::vector<int64_t> sizes(rank, 1), strides(rank, 1), dims = x.dims;
  // Windows over the minor dim, and sometimes the next one too (a 2-D pooling).
  size_t windowed = random_.OneIn(3) ? 2 : 1;
  for (size_t d = rank - windowed; d < rank; ++d) {
    static constexpr std::array<int64_t, 4> kSizes = {2, 3, 4, 8};
    sizes[d] = std::min(x.dims[d], Pick(random_, kSizes));
    strides[d] = random_.OneIn(2) ? 1 : sizes[d];
    dims[d] = (x.dims[d] - sizes[d]) / strides[d] + 1;
  }
  return Op("reduce-window", x.type, dims, {x, init},
            "window={size=" + Join(sizes, "x") + " stride=" + Join(strides, "x") +
                "}, to_apply=" + reducer);
}

Value Builder::DynamicUpdateSlice(const Value& operand, const Value& update) {
  std::vector<Value> operands = {operand, update};
  for (size_t d = 0; d < operand.dims.size(); ++d) {
    // A start index from a parameter (clamped into range at run time) or a constant.
    int64_t room = operand.dims[d] - update.dims[d];
    operands.push_back(
        random_.OneIn(2) ? Parameter(PrimitiveType::kS32, {})
                         : Constant(PrimitiveType::kS32, std::to_string(random_.Between(0, room))));
  }
  return Op("dynamic-update-slice", operand.type, operand.dims, operands);
}

Value Builder::Scatter(const Value& operand, const Value& updates) {
  Value indices = Parameter(PrimitiveType::kS32, {updates.dims[0], 1});
  std::string combiner = Reducer("add", operand.type);
  return Op("scatter", operand.type, operand.dims, {operand, indices, updates},
            "update_window_dims={1}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=false, "
            "to_apply=" +
                combiner);
}

std::string Builder::Module(const std::string& name, const std::string& comment,
                            const std::vector<Value>& roots, std::string_view kind) {
  std::string root_shape;
  if (roots.size() == 1) {
    root_shape = ShapeText(roots[0].type, roots[0].dims);
    for (std::string& line : lines_) {
      if (line.starts_with(roots[0].name + " = ")) line = "ROOT " + line;
    }
  } else {
    std::string names;
    for (size_t i = 0; i < roots.size(); ++i) {
      root_shape += (i ? ", " : "(") + ShapeText(roots[i].type, roots[i].dims);
      names += (i ? ", " : "") + roots[i].name;
    }
    root_shape += ")";
    lines_.push_back("ROOT tuple = " + root_shape + " tuple(" + names + ")");
  }
  bytes_ = 0;
  for (const Value& value : parameters_) bytes_ += ByteSize(value);
  for (const Value& value : roots) bytes_ += ByteSize(value);

  std::string text = comment + "\nHloModule " + name + "\n\n";
  for (const auto& [reducer_name, reducer] : reducers_) text += reducer + "\n";
  text += "fused_computation {\n";
  for (const std::string& line : lines_) text += "  " + line + "\n";
  text += "}\n\nENTRY main {\n";
  std::string arguments;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Value& parameter = parameters_[i];
    text += "  " + parameter.name + " = " + ShapeText(parameter.type, parameter.dims) +
            " parameter(" + std::to_string(i) + ")\n";
    arguments += (i ? ", " : "") + parameter.name;
  }
  text += "  ROOT fusion = " + root_shape + " fusion(" + arguments +
          "), kind=" + std::string(kind) + ", calls=fused_computation\n}\n";
  return text;
}

}  // namespace tilesmith::hlo::generator_internal
