// One HLO instruction: opcode, result shape, operands, called computations and the
// attributes of XLA's text grammar.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compiler/hlo/hlo_opcode.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "support/boxed.h"

namespace tilesmith::hlo {

class HloComputation;

/// `slice={[start:limit:stride], …}`, one per dimension.
struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  friend bool operator==(const SliceDim&, const SliceDim&) = default;
};

/// `padding=lo_hi_interior x …`, one per dimension; lo and hi may be negative.
struct PadDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  friend bool operator==(const PadDim&, const PadDim&) = default;
};

/// One dimension of `window={size=… stride=… pad=… lhs_dilate=… rhs_dilate=…}`.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;        // rhs_reversal
  friend bool operator==(const WindowDim&, const WindowDim&) = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
/// `type=` of compare; kDefault means "not written" (float ops compare as kFloat, integers
/// by their signedness).
enum class ComparisonType : uint8_t { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };

std::string_view ComparisonDirectionName(ComparisonDirection direction);
std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view name);
std::string_view ComparisonTypeName(ComparisonType type);
std::optional<ComparisonType> ParseComparisonType(std::string_view name);

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
std::string_view FusionKindName(FusionKind kind);
std::optional<FusionKind> ParseFusionKind(std::string_view name);

/// Dimension numbers of `dot`.
struct DotDimensions {
  std::vector<int64_t> lhs_batch;
  std::vector<int64_t> lhs_contracting;
  std::vector<int64_t> rhs_batch;
  std::vector<int64_t> rhs_contracting;
  friend bool operator==(const DotDimensions&, const DotDimensions&) = default;
};

/// Dimension numbers of `gather`.
struct GatherDimensions {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;
  friend bool operator==(const GatherDimensions&, const GatherDimensions&) = default;
};

/// Dimension numbers of `scatter`.
struct ScatterDimensions {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  friend bool operator==(const ScatterDimensions&, const ScatterDimensions&) = default;
};

/// An attribute we keep but do not interpret, printed back as written (`name=text`).
struct OpaqueAttribute {
  std::string name;
  std::string value;
  friend bool operator==(const OpaqueAttribute&, const OpaqueAttribute&) = default;
};

/// Typed attributes. Only the fields meaningful for the opcode are set; the parser fills
/// them from text and the printer writes back exactly those. Large, rarely used fields are
/// `Boxed` (optional on the heap) to keep instructions small.
struct HloAttributes {
  std::vector<int64_t> dimensions;               // broadcast, transpose, reduce, reverse, …
  Boxed<std::vector<SliceDim>> slice;            // slice
  Boxed<std::vector<PadDim>> padding;            // pad
  Boxed<std::vector<WindowDim>> window;          // reduce-window
  std::vector<int64_t> dynamic_slice_sizes;      // dynamic-slice
  std::optional<ComparisonDirection> direction;  // compare
  ComparisonType comparison_type = ComparisonType::kDefault;
  std::optional<FusionKind> fusion_kind;  // fusion
  int64_t parameter_number = -1;          // parameter
  int64_t tuple_index = -1;               // get-tuple-element
  int64_t iota_dimension = -1;            // iota
  int64_t exponent_bits = -1;             // reduce-precision
  int64_t mantissa_bits = -1;             // reduce-precision
  Boxed<DotDimensions> dot;               // dot
  Boxed<GatherDimensions> gather;         // gather
  Boxed<ScatterDimensions> scatter;       // scatter
  bool is_stable = false;                 // sort
  std::string custom_call_target;         // custom-call
  /// The attribute naming each called computation ("to_apply", "calls", …), parallel to
  /// `HloInstruction::called_computations()`.
  std::vector<std::string> call_attribute_names;
  // Kept as text: they never change what a kernel computes.
  std::string metadata;                 // `metadata={…}` contents, with braces
  std::string backend_config;           // `backend_config=…` as written (string or JSON)
  std::string frontend_attributes;      // `frontend_attributes={…}`
  std::string sharding;                 // `sharding={…}`
  std::vector<OpaqueAttribute> opaque;  // everything else, in the order written
};

/// A node of an HLO computation. Owned by its `HloComputation`; operands and users are
/// borrowed pointers into the same computation.
class HloInstruction {
 public:
  HloInstruction(HloOpcode opcode, std::string name, Shape shape)
      : opcode_(opcode), name_(std::move(name)), shape_(std::move(shape)) {}
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  /// Position in the owning computation's instruction list (dense: use it to index
  /// per-instruction side tables instead of hashing pointers). -1 until added.
  int64_t id() const { return id_; }
  void set_id(int64_t id) { id_ = id; }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  void set_name(std::string name) { name_ = std::move(name); }

  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  const HloInstruction* operand(int64_t i) const { return operands_[i]; }
  HloInstruction* mutable_operand(int64_t i) { return operands_[i]; }
  std::span<HloInstruction* const> operands() const { return operands_; }
  /// Appends an operand and records this instruction as its user. All operands of an
  /// instruction are added one after another.
  void AddOperand(HloInstruction* operand);

  /// Distinct users, in the order they were added.
  std::span<HloInstruction* const> users() const { return users_; }

  /// Computations this instruction applies (`to_apply`, `calls`, …), in attribute order.
  std::span<HloComputation* const> called_computations() const { return called_; }
  HloComputation* called_computation(int64_t i = 0) const { return called_[i]; }
  void AddCalledComputation(HloComputation* computation) { called_.push_back(computation); }

  const HloAttributes& attributes() const { return attributes_ ? *attributes_ : NoAttributes(); }
  HloAttributes& mutable_attributes() {
    if (!attributes_) attributes_.emplace();
    return *attributes_;
  }
  // Shorthands for the most used attributes.
  std::span<const int64_t> dimensions() const { return attributes().dimensions; }
  int64_t parameter_number() const { return attributes().parameter_number; }
  int64_t tuple_index() const { return attributes().tuple_index; }

  /// The value of a `constant`; null otherwise.
  const Literal* literal() const { return literal_.get(); }
  void set_literal(std::unique_ptr<Literal> literal) { literal_ = std::move(literal); }

 private:
  HloOpcode opcode_;
  int64_t id_ = -1;
  std::string name_;
  Shape shape_;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloComputation*> called_;
  // Most instructions (elementwise ops) have no attributes: they share one empty set
  // instead of carrying it, which keeps an instruction small.
  static const HloAttributes& NoAttributes();
  Boxed<HloAttributes> attributes_;
  std::unique_ptr<Literal> literal_;
};

}  // namespace tilesmith::hlo
