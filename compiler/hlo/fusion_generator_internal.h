// The fusion generator's parts (fusion_generator.h is the front door): its random stream
// and the builder that writes a fused computation's text while tracking shapes and size.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/primitive_type.h"

namespace tilesmith::hlo::generator_internal {

/// splitmix64: the same numbers on every machine and standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// In [0, n); n > 0. The modulo's bias is far below anything a fusion's shape can show.
  int64_t Below(uint64_t n) { return static_cast<int64_t>(Next() % n); }
  /// In [low, high].
  int64_t Between(int64_t low, int64_t high) {
    return low + Below(static_cast<uint64_t>(high - low) + 1);
  }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

 private:
  uint64_t state_;
};

/// One stream per (seed, index): neighbouring seeds and indices give unrelated streams.
inline uint64_t Mix(uint64_t seed, uint64_t index) {
  Random random(seed ^ (index * 0xd1342543de82ef95ULL));
  random.Next();
  return random.Next() ^ index;
}

/// floor(log2(value)), value > 0.
inline int64_t Log2(int64_t value) {
  int64_t bits = 0;
  while (value > 1) value >>= 1, ++bits;
  return bits;
}

/// An array value of the fused computation.
struct Value {
  std::string name;
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> dims;
};

/// `f32[2,3]`.
std::string ShapeText(PrimitiveType type, const std::vector<int64_t>& dims);

/// Writes a fused computation: every op is one line, counted against the op budget except
/// parameters, constants and the output tuple.
class Builder {
 public:
  explicit Builder(Random& random) : random_(random) {}

  Value Parameter(PrimitiveType type, std::vector<int64_t> dims);
  /// Applies exactly `ops` elementwise ops to `x` (unary, binary with a parameter, an
  /// earlier value or a broadcast, compare-and-select, and with `convert` a change of type).
  Value Elementwise(Value x, int ops, bool convert);
  /// Applies exactly `ops` unary ops (and with `convert` changes of type) to `x`: what the
  /// analysis walks through from a reduction's root to its hero.
  Value UnaryChain(Value x, int ops, bool convert);
  /// Earlier values of `x`'s type and shape, besides `x` and parameters.
  std::vector<Value> ValuesLike(const Value& x) const;
  /// Keeps later ops from reusing values made so far: an epilogue that read a prologue value
  /// of the transposed shape would read it at the transposed index, not as written.
  void ForgetValues() { values_.clear(); }

  Value Broadcast(const Value& x, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& kept);
  Value Slice(const Value& x, bool unit_stride);
  Value Concatenate(const std::vector<Value>& operands, int64_t axis);
  Value Transpose(const Value& x, const std::vector<int64_t>& permutation);
  Value Reduce(const Value& x, const std::vector<int64_t>& reduced);
  Value ReduceWindow(const Value& x);
  Value DynamicUpdateSlice(const Value& operand, const Value& update);
  Value Scatter(const Value& operand, const Value& updates);

  /// The module: reducers, the fused computation with `roots` (a tuple when several) and an
  /// ENTRY passing its parameters to a `fusion` of `kind`.
  std::string Module(const std::string& name, const std::string& comment,
                     const std::vector<Value>& roots, std::string_view kind);
  int64_t bytes() const { return bytes_; }  ///< Valid after Module().
  int ops() const { return ops_; }

 private:
  Value Op(std::string_view opcode, PrimitiveType type, std::vector<int64_t> dims,
           const std::vector<Value>& operands, const std::string& attributes = "");
  Value Constant(PrimitiveType type, const std::string& literal);
  Value Unary(const Value& x);
  Value Binary(const Value& x, int& budget);
  /// A second operand like `x`: an earlier value, a new parameter, or a broadcast of a
  /// smaller parameter or a constant (which costs one op of `budget`).
  Value OtherOperand(const Value& x, int& budget);
  /// The reducer computation's name; an `opcode` of add, maximum or minimum.
  std::string Reducer(std::string_view opcode, PrimitiveType type);
  /// A reducer and its identity as the init value.
  std::pair<std::string, Value> DrawReducer(PrimitiveType type);

  Random& random_;
  std::vector<std::string> lines_;
  std::vector<Value> parameters_;
  std::vector<Value> values_;
  std::map<std::string, std::string> reducers_;
  int ops_ = 0;
  int next_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace tilesmith::hlo::generator_internal
