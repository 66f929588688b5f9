#include "compiler/emitters/kernel_ir.h"

#include <algorithm>

#include "compiler/hlo/printer.h"

namespace tilesmith::emitters {
namespace {

const std::vector<std::string>& LaunchDimNames() {
  static const std::vector<std::string> names = {"th_x", "th_y", "th_z", "bl_x", "bl_y", "bl_z"};
  return names;
}

std::string Triple(const std::array<int64_t, 3>& values) {
  return "(" + std::to_string(values[0]) + ", " + std::to_string(values[1]) + ", " +
         std::to_string(values[2]) + ")";
}

std::string IndexList(std::span<const analysis::AffineExpr> indices,
                      const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i > 0) text += ", ";
    text += indices[i].ToString(names);
  }
  return text;
}

std::string Predicates(std::span<const Predicate> predicates,
                       const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < predicates.size(); ++i) {
    text += (i ? " && " : " if ") + predicates[i].expr.ToString(names) + " in " +
            predicates[i].range.ToString();
  }
  return text;
}

std::string_view AtomicOpName(AtomicOp op) {
  switch (op) {
    case AtomicOp::kAdd:
      return "add";
    case AtomicOp::kMax:
      return "max";
    case AtomicOp::kMin:
      return "min";
  }
  return "?";
}

// One body statement as text, indices named by the loop's results.
std::string StatementText(const KernelIR& kernel, const BodyStmt& stmt,
                          const std::vector<std::string>& names) {
  auto value = [](int64_t id) { return "%v" + std::to_string(id); };
  if (const auto* call = std::get_if<CallStmt>(&stmt)) {
    const KernelFunction& function = kernel.functions[call->function];
    std::string text;
    size_t leaves = function.Leaves().size();
    for (size_t r = 0; r < leaves; ++r) {
      text += (r ? ", " : "") + value(call->first_value + static_cast<int64_t>(r));
    }
    text += " = call @" + function.name + "(" + IndexList(call->indices, names) + ")";
    for (size_t b = 0; b < call->bindings.size(); ++b) {
      const ValueBinding& binding = call->bindings[b];
      text += (b ? ", " : " with ") + std::string("%") + binding.instruction->name() + "[" +
              IndexList(binding.indices, names) + "] = " + value(binding.value);
    }
    return text;
  }
  if (const auto* store = std::get_if<StoreStmt>(&stmt)) {
    return "store %" + kernel.buffers[store->buffer].name + "[" + IndexList(store->indices, names) +
           "] = " + value(store->value) + Predicates(store->predicates, names);
  }
  if (const auto* load = std::get_if<SharedLoadStmt>(&stmt)) {
    return value(load->value) + " = load_shared %" + kernel.shared[load->alloc].name + "[" +
           IndexList(load->indices, names) + "]";
  }
  if (const auto* store = std::get_if<SharedStoreStmt>(&stmt)) {
    return "store_shared %" + kernel.shared[store->alloc].name + "[" +
           IndexList(store->indices, names) + "] = " + value(store->value) +
           Predicates(store->predicates, names);
  }
  if (const auto* shuffle = std::get_if<ShuffleStmt>(&stmt)) {
    return value(shuffle->result) + " = shfl.bfly " + value(shuffle->value) + ", " +
           std::to_string(shuffle->offset);
  }
  auto values = [&](int64_t first, size_t count) {
    std::string text;
    for (size_t i = 0; i < count; ++i) {
      text += (i ? ", " : "") + value(first + static_cast<int64_t>(i));
    }
    return text;
  };
  if (const auto* reduce = std::get_if<ReduceStmt>(&stmt)) {
    size_t outputs = (static_cast<size_t>(reduce->hero->operand_count() / 2) + reduce->presence) *
                     static_cast<size_t>(reduce->lanes);
    std::string text = values(reduce->first_value, outputs) +
                       (reduce->presence ? " = reduce_present @" : " = reduce @") +
                       reduce->hero->name() + " over " + reduce->elements.ToString(names);
    if (!reduce->from_shared.empty()) {
      text += " from shared";
      for (int64_t alloc : reduce->from_shared) text += " %" + kernel.shared[alloc].name;
    }
    if (!reduce->from_buffers.empty()) {
      text += " from";
      for (int64_t buffer : reduce->from_buffers) text += " %" + kernel.buffers[buffer].name;
    }
    return text;
  }
  if (const auto* combine = std::get_if<CombineStmt>(&stmt)) {
    auto list = [&](const std::vector<int64_t>& ids) {
      std::string text;
      for (size_t i = 0; i < ids.size(); ++i) text += (i ? ", " : "") + value(ids[i]);
      return ids.empty() ? std::string("init") : text;
    };
    return values(combine->first_value, combine->rhs.size()) +
           (combine->presence ? " = combine_present @" : " = combine @") + combine->hero->name() +
           " (" + list(combine->lhs) + "), (" + list(combine->rhs) + ")";
  }
  if (const auto* scatter = std::get_if<ScatterStmt>(&stmt)) {
    return "scatter @" + scatter->hero->name() + " %" + kernel.buffers[scatter->buffer].name +
           " at update[" + IndexList(scatter->update_index, names) + "]" +
           (scatter->atomic ? " atomic_" + std::string(AtomicOpName(scatter->op)) : "");
  }
  const auto& atomic = std::get<AtomicStmt>(stmt);
  return "atomic_" + std::string(AtomicOpName(atomic.op)) + " %" +
         kernel.buffers[atomic.buffer].name + "[" + IndexList(atomic.indices, names) +
         "] = " + value(atomic.value) + Predicates(atomic.predicates, names);
}

}  // namespace

hlo::Shape SharedAlloc::shape() const { return hlo::Shape::Array(type, dims); }

int64_t SharedAlloc::bytes() const {
  int64_t elements = 1;
  for (int64_t dim : dims) elements *= dim;
  return elements * std::max(1, (hlo::BitWidth(type) + 7) / 8);
}

int64_t KernelIR::SharedBytes() const {
  int64_t bytes = 0;
  for (const SharedAlloc& alloc : shared) bytes += alloc.bytes();
  return bytes;
}

std::vector<const hlo::Shape*> ArrayLeaves(const hlo::Shape& shape) {
  if (!shape.IsTuple()) return {&shape};
  std::vector<const hlo::Shape*> leaves;
  for (const hlo::Shape& element : shape.tuple_elements()) {
    std::vector<const hlo::Shape*> inner = ArrayLeaves(element);
    leaves.insert(leaves.end(), inner.begin(), inner.end());
  }
  return leaves;
}

int64_t LeafOffset(const hlo::Shape& shape, int64_t element) {
  int64_t offset = 0;
  for (int64_t i = 0; i < element; ++i) {
    offset += static_cast<int64_t>(ArrayLeaves(shape.tuple_element(i)).size());
  }
  return offset;
}

std::vector<std::pair<const hlo::HloInstruction*, int64_t>> KernelFunction::Leaves() const {
  std::vector<std::pair<const hlo::HloInstruction*, int64_t>> leaves;
  for (const hlo::HloInstruction* root : roots) {
    if (!root->shape().IsTuple()) {
      leaves.emplace_back(root, -1);
      continue;
    }
    int64_t count = static_cast<int64_t>(ArrayLeaves(root->shape()).size());
    for (int64_t leaf = 0; leaf < count; ++leaf) leaves.emplace_back(root, leaf);
  }
  return leaves;
}

int64_t KernelIR::OutputBuffer(int64_t output) const {
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].is_output && buffers[i].index == output) return static_cast<int64_t>(i);
  }
  return -1;
}

std::string KernelIR::ToString() const {
  std::string out = "kernel @" + name + "(";
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (i > 0) out += ", ";
    out += "%" + buffers[i].name + ": " + hlo::ShapeToString(buffers[i].shape);
    if (buffers[i].is_output) out += " out";
    if (buffers[i].is_scratch) out += " scratch";
    if (buffers[i].aliases >= 0) out += " aliases %" + buffers[buffers[i].aliases].name;
    if (buffers[i].fill) out += " starts at " + std::to_string(*buffers[i].fill);
  }
  out += ")\n";
  out += "  emitter: " + emitter + " " + config_json + "\n";
  out += "  launch: blocks " + Triple(launch.blocks) + ", threads " + Triple(launch.threads) + "\n";
  for (const SharedAlloc& alloc : shared) {
    out += "  shared %" + alloc.name + ": " + hlo::ShapeToString(alloc.shape()) + " (" +
           std::to_string(alloc.bytes()) + " bytes)\n";
  }
  for (size_t p = 0; p < phases.size(); ++p) {
    if (p > 0) out += "  barrier\n";
    out += "  phase " + std::to_string(p) + ":\n";
    if (const std::optional<Arrival>& arrival = phases[p].arrival) {
      std::vector<std::string> none;
      out += "    arrive %" + buffers[arrival->counter].name + "[" +
             arrival->index.ToString(LaunchDimNames(), none) + "] of " +
             std::to_string(arrival->arrivals) + " (only the last block goes on)\n";
    }
    for (const LoopStmt& loop : phases[p].loops) {
      std::vector<std::string> index_names;
      for (int64_t i = 0; i < loop.map.result_count(); ++i) {
        index_names.push_back("%i" + std::to_string(i));
      }
      std::vector<std::string> symbol_names;
      for (int64_t s = 0; s < loop.map.symbol_count(); ++s) {
        symbol_names.push_back("s" + std::to_string(s));
      }
      out += "    loop (th, bl)[";
      for (size_t s = 0; s < symbol_names.size(); ++s) out += (s ? ", " : "") + symbol_names[s];
      out += "] -> (";
      for (size_t i = 0; i < index_names.size(); ++i) out += (i ? ", " : "") + index_names[i];
      out += ")\n      in " + loop.map.ToString(LaunchDimNames(), symbol_names);
      if (const auto& transpose = loop.register_transpose) {
        out += ", transposed in registers: " + symbol_names[transpose->along_load] + " x " +
               symbol_names[transpose->along_store];
      }
      out += " {\n";
      for (const BodyStmt& stmt : loop.body) {
        out += "      " + StatementText(*this, stmt, index_names) + "\n";
      }
      out += "    }\n";
    }
  }
  hlo::PrintOptions options;
  options.print_non_semantic_attributes = false;
  for (const KernelFunction& function : functions) {
    out += "function @" + function.name + " -> (";
    for (size_t r = 0; r < function.roots.size(); ++r) {
      out += (r ? ", " : "") + hlo::ShapeToString(function.roots[r]->shape());
    }
    out += ") {\n";
    for (const hlo::HloInstruction* instruction : function.instructions) {
      bool is_root = std::find(function.roots.begin(), function.roots.end(), instruction) !=
                     function.roots.end();
      out += is_root ? "  ROOT " : "  ";
      out += hlo::PrintInstruction(*instruction, options) + "\n";
    }
    out += "}\n";
  }
  return out;
}

}  // namespace tilesmith::emitters
