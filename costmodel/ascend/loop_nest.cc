#include "costmodel/ascend/loop_nest.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>

namespace tilesmith::costmodel::ascend {
namespace {

using ascgraph::ConcreteTensor;

constexpr int64_t kSaturated = int64_t{1} << 62;
// The unified buffer keeps every row 32 bytes aligned (spec: "the innermost axis 32-byte
// aligned"; "largest tensor rounded up to 32 bytes").
constexpr int64_t kUbAlignBytes = 32;

int64_t RepeatOn(const ConcreteTensor& tensor, int64_t axis_id) {
  for (size_t i = 0; i < tensor.axis_ids.size(); ++i) {
    if (tensor.axis_ids[i] == axis_id && i < tensor.repeats.size()) return tensor.repeats[i];
  }
  return 1;
}

int64_t StrideOn(const ConcreteTensor& tensor, int64_t axis_id) {
  for (size_t i = 0; i < tensor.axis_ids.size(); ++i) {
    if (tensor.axis_ids[i] == axis_id && i < tensor.strides.size()) return tensor.strides[i];
  }
  return 0;
}

// The axes a tensor really spans, outermost in memory first (by stride, stable).
std::vector<int64_t> PhysicalOrder(const ConcreteTensor& tensor) {
  std::vector<int64_t> ids;
  for (size_t i = 0; i < tensor.axis_ids.size(); ++i) {
    if (i < tensor.repeats.size() && tensor.repeats[i] > 1) ids.push_back(tensor.axis_ids[i]);
  }
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int64_t a, int64_t b) { return StrideOn(tensor, a) > StrideOn(tensor, b); });
  return ids;
}

int ElementBytes(hlo::PrimitiveType type) { return std::max(1, hlo::UnpackedByteWidth(type)); }

std::string TensorName(const std::string& node, int output) {
  return output == 0 ? node : node + ":" + std::to_string(output);
}

// Builds a LoopNest in the order the steps depend on each other.
class Builder {
 public:
  explicit Builder(const ascgraph::BoundGraph& bound) : bound_(bound), graph_(*bound.graph) {}

  Expected<LoopNest> Build() {
    if (graph_.type == 1) {
      return InvalidArgument("graph '" + graph_.name +
                             "' is an ImplGraph (already scheduled); schedule takes HintGraphs");
    }
    nest_.graph_name = graph_.name;
    ChooseLoopOrder();
    TS_RETURN_IF_ERROR(ClassifyNodes());
    ClassifyAxes();
    MergeAxes();
    ConvertTensors();
    MarkReduceLoops();
    PlanBuffers();
    return std::move(nest_);
  }

 private:
  struct TensorRef {
    std::string node;
    int output;
    auto operator<=>(const TensorRef&) const = default;
  };

  // The loop nest is the longest `sched.axis` (validation checked that every node's loops
  // cover what it touches); without sched info, the declared axes.
  void ChooseLoopOrder() {
    for (const ascgraph::Node* node : bound_.order) {
      if (node->sched_axis.size() > loop_ids_.size()) loop_ids_ = node->sched_axis;
    }
    if (loop_ids_.empty()) {
      for (const ascgraph::Axis& axis : graph_.axes) loop_ids_.push_back(axis.id);
    }
  }

  ascgraph::OpKind Kind(const ascgraph::Node& node) const { return bound_.ops.at(node.name)->kind; }

  Status ClassifyNodes() {
    using ascgraph::OpKind;
    for (const ascgraph::Node* node : bound_.order) {
      OpKind kind = Kind(*node);
      if (kind == OpKind::kData || kind == OpKind::kOutput) continue;
      std::vector<TensorRef> inputs;
      for (const ascgraph::InputSource& source : node->inputs) {
        inputs.push_back({source.node, source.output_index});
      }
      if (node->type == "Nop") {  // a view: its output is its input, wherever that lives
        if (ub_index_.contains(inputs[0])) ub_index_[{node->name, 0}] = ub_index_.at(inputs[0]);
      } else if (node->type == "Load" || node->type == "Store") {
        TS_RETURN_IF_ERROR(AddMove(*node, inputs));
      } else {
        TS_RETURN_IF_ERROR(AddVector(*node, inputs));
      }
    }
    return OkStatus();
  }

  // A Load (global memory -> buffer, MTE2) or Store (buffer -> global memory, MTE3).
  Status AddMove(const ascgraph::Node& node, const std::vector<TensorRef>& inputs) {
    bool load = node.type == "Load";
    if (!load && !ub_index_.contains(inputs[0])) {
      return InvalidArgument("node '" + node.name + "' stores '" + inputs[0].node +
                             "', which is not in the unified buffer (no Load before it)");
    }
    int tensor = load ? AddUbTensor({node.name, 0}) : ub_index_.at(inputs[0]);
    if (!load) stored_.insert(tensor);
    nest_.nodes.push_back(
        {node.name, node.type, load ? NodeRole::kLoad : NodeRole::kStore, {tensor}, false, {}});
    return OkStatus();
  }

  // A vector op: it reads buffer tensors and writes new ones.
  Status AddVector(const ascgraph::Node& node, const std::vector<TensorRef>& inputs) {
    ScheduledNode scheduled{node.name, node.type, NodeRole::kVector, {}, false, {}};
    const std::vector<ConcreteTensor>& outputs = bound_.outputs.at(node.name);
    // The op computes in its widest type (a compare reads f32 and writes bool).
    hlo::PrimitiveType widest = !outputs.empty() ? outputs[0].dtype : Tensor(inputs.at(0)).dtype;
    auto widen = [&](const ConcreteTensor& tensor) {
      if (ElementBytes(tensor.dtype) > ElementBytes(widest)) widest = tensor.dtype;
    };
    for (const TensorRef& ref : inputs) {
      if (!ub_index_.contains(ref)) {
        return InvalidArgument("node '" + node.name + "' (" + node.type + ") reads graph input '" +
                               ref.node +
                               "' directly; a Load must bring it into the unified buffer");
      }
      scheduled.tensors.push_back(ub_index_.at(ref));
      widen(Tensor(ref));
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      scheduled.tensors.push_back(AddUbTensor({node.name, static_cast<int>(o)}));
      widen(outputs[o]);
    }
    auto op = VectorOp(node.type, widest);
    if (!op) return std::unexpected(op.error().WithContext("node '" + node.name + "'"));
    scheduled.cost = op->cost;
    if (op->needs_tmp_buffer || Kind(node) == ascgraph::OpKind::kReduce) {
      tmp_nodes_.push_back(nest_.nodes.size());
    }
    if (op->cost.assumed) {
      std::string line =
          node.type + " (" + std::string(hlo::PrimitiveTypeName(widest)) + "): " + op->cost.basis;
      if (std::ranges::find(nest_.assumptions, line) == nest_.assumptions.end()) {
        nest_.assumptions.push_back(line);
      }
    }
    vector_inputs_[nest_.nodes.size()] = inputs;
    vector_graph_node_[nest_.nodes.size()] = &node;
    nest_.nodes.push_back(std::move(scheduled));
    return OkStatus();
  }

  const ConcreteTensor& Tensor(const TensorRef& ref) const {
    return bound_.outputs.at(ref.node)[ref.output];
  }

  int AddUbTensor(TensorRef ref) {
    auto [it, inserted] = ub_index_.emplace(ref, static_cast<int>(ub_refs_.size()));
    if (inserted) ub_refs_.push_back(ref);
    return it->second;
  }

  // Axes a reduction removes: spanned by its input (repeat > 1) but 1 in its output.
  std::vector<int64_t> ReducedAxes(const ascgraph::Node& node,
                                   const std::vector<TensorRef>& inputs) const {
    std::vector<int64_t> reduced;
    if (Kind(node) != ascgraph::OpKind::kReduce) return reduced;
    const ConcreteTensor& out = bound_.Output(node);
    for (int64_t id : loop_ids_) {
      if (RepeatOn(Tensor(inputs[0]), id) > 1 && RepeatOn(out, id) == 1) reduced.push_back(id);
    }
    return reduced;
  }

  int LoopPosition(int64_t id) const {
    return static_cast<int>(std::find(loop_ids_.begin(), loop_ids_.end(), id) - loop_ids_.begin());
  }

  // r: reduced somewhere. x: outside-or-at the outer of a transpose's two innermost axes
  // (so that both the input's and the output's contiguous axes can be tiled). y: the rest.
  void ClassifyAxes() {
    using ascgraph::OpKind;
    int x_boundary = -1;
    for (const auto& [index, inputs] : vector_inputs_) {
      const ascgraph::Node& node = *vector_graph_node_.at(index);
      for (int64_t id : ReducedAxes(node, inputs)) group_[id] = GroupKind::kR;
      if (Kind(node) == OpKind::kTranspose) {
        std::vector<int64_t> in = PhysicalOrder(Tensor(inputs[0]));
        std::vector<int64_t> out = PhysicalOrder(bound_.Output(node));
        if (!in.empty() && !out.empty() && in.back() != out.back()) {
          int outer = std::min(LoopPosition(in.back()), LoopPosition(out.back()));
          x_boundary = std::max(x_boundary, outer);
        }
      }
      if (Kind(node) == OpKind::kConcat) {  // the joined axis cannot be cut across inputs
        for (int64_t id : loop_ids_) {
          for (const TensorRef& ref : inputs) {
            if (RepeatOn(Tensor(ref), id) != RepeatOn(bound_.Output(node), id)) {
              unsplittable_.insert(id);
            }
          }
        }
      }
    }
    for (size_t pos = 0; pos < loop_ids_.size(); ++pos) {
      int64_t id = loop_ids_[pos];
      if (!group_.contains(id)) {
        group_[id] = static_cast<int>(pos) <= x_boundary ? GroupKind::kX : GroupKind::kY;
      }
      for (const auto& [name, outputs] : bound_.outputs) {
        for (const ConcreteTensor& tensor : outputs) {
          int64_t repeat = RepeatOn(tensor, id);
          if (repeat > 1 && repeat < AxisSize(id)) unsplittable_.insert(id);
        }
      }
    }
  }

  int64_t AxisSize(int64_t id) const { return bound_.axis_sizes.at(id); }
  const ascgraph::Axis& GraphAxis(int64_t id) const { return *graph_.FindAxis(id); }

  // Two adjacent loop axes become one when every tensor of the graph (global memory views
  // included) either spans both fully and contiguously or neither.
  bool Mergeable(int64_t a, int64_t b) const {
    if (group_.at(a) != group_.at(b) || unsplittable_.contains(a) != unsplittable_.contains(b) ||
        GraphAxis(a).align > 1 || GraphAxis(b).align > 1) {
      return false;
    }
    int64_t size_a = AxisSize(a), size_b = AxisSize(b);
    if (size_a == 1 || size_b == 1) return true;
    for (const auto& [name, outputs] : bound_.outputs) {
      for (const ConcreteTensor& tensor : outputs) {
        int64_t ra = RepeatOn(tensor, a), rb = RepeatOn(tensor, b);
        if (ra == 1 && rb == 1) continue;
        if (ra == size_a && rb == size_b && StrideOn(tensor, a) == StrideOn(tensor, b) * rb) {
          continue;
        }
        return false;
      }
    }
    return true;
  }

  void MergeAxes() {
    int64_t anchor = -1;  // the merged axis' innermost member of size > 1 (else its last)
    for (int64_t id : loop_ids_) {
      if (anchor < 0 || !Mergeable(anchor, id)) {
        const ascgraph::Axis& axis = GraphAxis(id);
        nest_.axes.push_back(LoopAxis{"",
                                      1,
                                      group_.at(id),
                                      {},
                                      std::max<int64_t>(1, axis.align),
                                      !unsplittable_.contains(id)});
        members_.emplace_back();
      }
      LoopAxis& loop = nest_.axes.back();
      loop.name += GraphAxis(id).name;
      loop.size = SaturatingMul(loop.size, AxisSize(id));
      loop.from.push_back(GraphAxis(id).name);
      members_.back().push_back(id);
      if (members_.back().size() == 1 || AxisSize(id) > 1) anchor = id;
    }
  }

  void ConvertTensors() {
    for (TensorRef ref : ub_refs_) {
      const ConcreteTensor& tensor = Tensor(ref);
      UbTensor ub{TensorName(ref.node, ref.output), ElementBytes(tensor.dtype), {}, -1, 1};
      int64_t innermost_stride = 0;
      for (size_t l = 0; l < members_.size(); ++l) {
        int64_t repeat = 1, stride = 0;
        for (int64_t id : members_[l]) {
          int64_t component = RepeatOn(tensor, id);
          repeat = SaturatingMul(repeat, component);
          if (component > 1) stride = StrideOn(tensor, id);
        }
        ub.repeats.push_back(repeat);
        if (repeat > 1 && (ub.innermost < 0 || stride <= innermost_stride)) {
          ub.innermost = static_cast<int>(l);
          innermost_stride = stride;
        }
      }
      for (size_t i = 0; i < tensor.axis_ids.size() && i < tensor.repeats.size(); ++i) {
        if (LoopPosition(tensor.axis_ids[i]) == static_cast<int>(loop_ids_.size())) {
          ub.fixed_elements = SaturatingMul(ub.fixed_elements, tensor.repeats[i]);
        }
      }
      // Tiles of the innermost axis are whole 32-byte blocks (spec: "the innermost axis
      // 32-byte aligned") where it matters: for tensors the MTEs move (the published store
      // cost is for aligned stores) and for tensors with more than one row in the buffer
      // (each row must start aligned). A one-row buffer tensor is only rounded up.
      bool moved = stored_.contains(static_cast<int>(nest_.tensors.size())) ||
                   graph_.FindNode(ref.node)->type == "Load";
      int64_t rows = std::count_if(ub.repeats.begin(), ub.repeats.end(),
                                   [](int64_t repeat) { return repeat > 1; });
      if (ub.innermost >= 0 && (moved || rows > 1)) {
        LoopAxis& axis = nest_.axes[ub.innermost];
        axis.align = std::lcm(axis.align, std::max<int64_t>(1, kUbAlignBytes / ub.elem_bytes));
      }
      nest_.tensors.push_back(std::move(ub));
    }
  }

  void MarkReduceLoops() {
    std::set<int> downstream;  // tensors computed from a reduction's result
    for (size_t index = 0; index < nest_.nodes.size(); ++index) {
      ScheduledNode& node = nest_.nodes[index];
      for (int t : node.tensors) {
        for (size_t l = 0; l < nest_.axes.size(); ++l) {
          if (nest_.axes[l].group == GroupKind::kR && nest_.tensors[t].repeats[l] > 1) {
            node.in_reduce_loop = true;
          }
        }
      }
      if (node.role != NodeRole::kVector) continue;
      auto inputs = vector_inputs_.find(index);
      bool after_reduce = false;
      for (const TensorRef& ref : inputs->second) {
        after_reduce = after_reduce || downstream.contains(ub_index_.at(ref));
      }
      bool reduces = !ReducedAxes(*vector_graph_node_.at(index), inputs->second).empty();
      if (after_reduce && node.in_reduce_loop) nest_.reduce_splittable = false;
      if (after_reduce || reduces) {
        for (size_t t = inputs->second.size(); t < node.tensors.size(); ++t) {
          downstream.insert(node.tensors[t]);
        }
      }
    }
  }

  // Loads get an input queue and stored results an output queue, both double-buffered;
  // other results share calc buffers by lifetime (a buffer is reused once its tensor's last
  // reader ran; a node never writes over its own inputs). Scratch space is one buffer sized
  // for the hungriest node.
  void PlanBuffers() {
    std::vector<int> last_use(nest_.tensors.size(), -1);
    for (size_t index = 0; index < nest_.nodes.size(); ++index) {
      for (int t : nest_.nodes[index].tensors) last_use[t] = static_cast<int>(index);
    }
    int queues = 0;
    std::vector<int> calc_holder;  // per calc buffer: the tensor it holds now, or -1
    std::vector<size_t> calc_buffer;
    for (size_t index = 0; index < nest_.nodes.size(); ++index) {
      const ScheduledNode& node = nest_.nodes[index];
      std::vector<int> produced;
      if (node.role == NodeRole::kLoad) produced = node.tensors;
      if (node.role == NodeRole::kVector) {
        produced.assign(node.tensors.begin() + InputCount(index), node.tensors.end());
      }
      for (int t : produced) {
        if (node.role == NodeRole::kLoad || stored_.contains(t)) {
          BufferKind kind =
              node.role == NodeRole::kLoad ? BufferKind::kInQueue : BufferKind::kOutQueue;
          nest_.buffers.push_back({"q" + std::to_string(queues++), kind, 2, {t}});
          continue;
        }
        auto free = std::find(calc_holder.begin(), calc_holder.end(), -1);
        if (free == calc_holder.end()) {
          calc_buffer.push_back(nest_.buffers.size());
          nest_.buffers.push_back(
              {"b" + std::to_string(calc_holder.size()), BufferKind::kCalc, 1, {}});
          calc_holder.push_back(-1);
          free = calc_holder.end() - 1;
        }
        *free = t;
        nest_.buffers[calc_buffer[free - calc_holder.begin()]].tensors.push_back(t);
      }
      for (int& holder : calc_holder) {
        if (holder >= 0 && last_use[holder] <= static_cast<int>(index)) holder = -1;
      }
    }
    if (!tmp_nodes_.empty()) {
      Buffer tmp{"tmp", BufferKind::kTmp, 1, {}};
      for (size_t index : tmp_nodes_) {
        for (int t : nest_.nodes[index].tensors) tmp.tensors.push_back(t);
      }
      nest_.buffers.push_back(std::move(tmp));
    }
  }

  size_t InputCount(size_t index) const {
    auto it = vector_inputs_.find(index);
    return it == vector_inputs_.end() ? 0 : it->second.size();
  }

  const ascgraph::BoundGraph& bound_;
  const ascgraph::Graph& graph_;
  LoopNest nest_;
  std::vector<int64_t> loop_ids_;
  std::map<int64_t, GroupKind> group_;
  std::set<int64_t> unsplittable_;
  std::vector<std::vector<int64_t>> members_;  // per loop axis, its graph axis ids
  std::map<TensorRef, int> ub_index_;
  std::vector<TensorRef> ub_refs_;
  std::set<int> stored_;
  std::vector<size_t> tmp_nodes_;
  std::map<size_t, std::vector<TensorRef>> vector_inputs_;  // by scheduled node index
  std::map<size_t, const ascgraph::Node*> vector_graph_node_;
};

}  // namespace

std::string_view GroupName(GroupKind kind) {
  switch (kind) {
    case GroupKind::kX:
      return "x";
    case GroupKind::kY:
      return "y";
    case GroupKind::kR:
      return "r";
  }
  return "?";
}

std::string_view BufferKindName(BufferKind kind) {
  switch (kind) {
    case BufferKind::kInQueue:
      return "VECIN";
    case BufferKind::kOutQueue:
      return "VECOUT";
    case BufferKind::kCalc:
      return "CALC";
    case BufferKind::kTmp:
      return "TMP";
  }
  return "?";
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kSaturated / b) return kSaturated;
  return std::min(a * b, kSaturated);
}

int64_t SaturatingAdd(int64_t a, int64_t b) { return std::min(a + b, kSaturated); }

Expected<LoopNest> BuildLoopNest(const ascgraph::BoundGraph& bound) {
  return Builder(bound).Build();
}

}  // namespace tilesmith::costmodel::ascend
