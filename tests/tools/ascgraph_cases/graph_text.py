"""Writes AscGraphDef protobuf text in the style the graph engine dumps it.

The layout follows the real graph in ../shared/corpus/ascgraph/ (a HintGraph): every node
carries its output tensor attributes with mem/que/buf/opt placeholders, sched axes, the api
group the engine fills in for HintGraphs, its IR attributes and its ir_def.
"""

# GE data type numbers (proto3 omits 0 = FLOAT).
GE_TYPES = {"f32": 0, "f16": 1, "s8": 2, "s32": 3, "u8": 4, "s16": 6, "u16": 7, "u32": 8,
            "s64": 9, "u64": 10, "f64": 11, "pred": 12, "bf16": 27}

# Input and output names of AscIR ops in ir_def (x for unary, x1..xn otherwise).
_SINGLE_INPUT = {"Data": [], "Scalar": [], "Output": ["x"]}


def row_major(repeats):
    """Strides of a contiguous tensor with these repeats; size-1 dims get "0"."""
    strides = []
    inner = []
    for repeat in reversed(repeats):
        if repeat == "1":
            strides.append("0")
            continue
        strides.append(" * ".join(reversed(inner)) if inner else "1")
        inner.append(repeat)
    return list(reversed(strides))


class Tensor:
    def __init__(self, dtype, axes, repeats, strides=None):
        self.dtype = dtype
        self.axes = list(axes)
        self.repeats = [str(r) for r in repeats]
        self.strides = [str(s) for s in strides] if strides is not None else row_major(self.repeats)


class Graph:
    def __init__(self, name, axes, size_vars=()):
        """axes: list of (name, size expression); ids are their positions."""
        self.name = name
        self.axes = list(axes)
        self.size_vars = list(size_vars)
        self.nodes = []

    def axis(self, name):
        return [n for n, _ in self.axes].index(name)

    def add(self, op, name, inputs=(), out=None, sched=None, attrs=None):
        """Adds a node; inputs are node names (output 0) or (name, index) pairs."""
        full_name = f"{self.name}/{name}"
        sources = [(f"{self.name}/{i}", 0) if isinstance(i, str) else (f"{self.name}/{i[0]}", i[1])
                   for i in inputs]
        if sched is None:
            sched = out.axes if out is not None and out.axes else list(range(len(self.axes)))
        self.nodes.append((op, full_name, sources, out, sched, attrs or {}))
        return name

    def text(self, header="", compact=False):
        """Full text as the engine dumps it, or (compact) only the fields tilesmith reads."""
        lines = [f"# {line}".rstrip() for line in header.strip().splitlines()] if header else []
        lines += ["asc_graph_attr {", "  tiling_key: -1"]
        for axis_id, (name, size) in enumerate(self.axes):
            lines += ["  axis {"]
            if axis_id:
                lines += [f"    id: {axis_id}"]
            lines += [f'    name: "{name}"', f'    size: "{size}"', "    align: 1",
                      "    allow_unaligned_tail: true", "  }"]
        lines += [f'  size_var: "{v}"' for v in self.size_vars]
        lines += ["}"]
        for order, node in enumerate(self.nodes):
            lines += _compact_node_lines(*node) if compact else _node_lines(order, *node)
        lines += [f'graph_name: "{self.name}"']
        return "\n".join(lines) + "\n"


def _tensor_lines(tensor):
    lines = ["  outputs {", "    attr {"]
    if tensor is not None:
        if GE_TYPES[tensor.dtype]:
            lines += [f"      dtype: {GE_TYPES[tensor.dtype]}"]
        lines += [f"      axis_ids: {a}" for a in tensor.axes]
        lines += [f'      repeats: "{r}"' for r in tensor.repeats]
        lines += [f'      strides: "{s}"' for s in tensor.strides]
    lines += ["      mem {", "        tensor_id: -1", "      }",
              "      que {", "        id: -1", "        depth: -1", "        buf_num: -1", "      }",
              "      buf {", "        id: -1", "      }",
              "      opt {", "        reuse_id: -1", "        ref_tensor: -1",
              "        merge_scope: -1", "      }", "    }", "  }"]
    return lines


def _attr_lines(attrs):
    lines = []
    for key, value in attrs.items():
        if isinstance(value, bool):
            field = f"b: {str(value).lower()}"
        elif isinstance(value, int):
            field = f"i: {value}"
        elif isinstance(value, float):
            field = f"f: {value!r}"
        else:
            field = f's: "{value}"'
        lines += ["      attr {", f'        key: "{key}"', "        value {",
                  f"          {field}", "        }", "      }"]
    return lines


def _node_lines(order, op, name, sources, out, sched, attrs):
    lines = ["asc_node {"]
    for source, index in sources:
        lines += ["  input_src {", f'    src_node_name: "{source}"']
        if index:
            lines += [f"    src_out_index: {index}"]
        lines += ["  }"]
    lines += _tensor_lines(out)
    lines += ["  attr {", f'    name: "{name}"', f'    type: "{op}"', "    sched {"]
    if order:
        lines += [f"      exec_order: {order}"]
    lines += [f"      axis: {a}" for a in sched]
    lines += ["      loop_axis: -1", "    }", "    api {", "      type: 2", "      compute_type: 8",
              "      unit: 7", "    }", "    ir_attr_def {"]
    lines += _attr_lines(attrs)
    lines += ["    }", "  }", "  ir_def {"]
    inputs = _SINGLE_INPUT.get(op)
    if inputs is None:
        inputs = ["x"] if len(sources) == 1 else [f"x{i + 1}" for i in range(len(sources))]
    lines += [f'    input_names: "{n}"' for n in inputs]
    lines += ['    output_names: "y"']
    lines += ["    input_ir_type: 0" for _ in inputs]
    lines += ["    output_ir_type: 0", f'    type: "{op}"']
    if inputs:
        lines += [f"    input_nums: {len(inputs)}"]
    lines += ["  }", "}"]
    return lines


GE_TYPE_NAMES = {0: "FLOAT", 1: "FLOAT16", 2: "INT8", 3: "INT32", 4: "UINT8", 6: "INT16",
                 7: "UINT16", 8: "UINT32", 9: "INT64", 10: "UINT64", 11: "DOUBLE", 12: "BOOL",
                 27: "BF16"}


def graph_json(graph):
    """The graph as proto3 JSON (field names as in the .proto, dtypes by name)."""
    axes = []
    for axis_id, (name, size) in enumerate(graph.axes):
        axes.append({"id": axis_id, "name": name, "size": size, "align": 1,
                     "allow_unaligned_tail": True})
    nodes = []
    for order, (op, name, sources, out, sched, attrs) in enumerate(graph.nodes):
        tensor = {}
        if out is not None:
            tensor = {"dtype": GE_TYPE_NAMES[GE_TYPES[out.dtype]], "axis_ids": out.axes,
                      "repeats": out.repeats, "strides": out.strides}
        ir_attrs = {}
        for key, value in attrs.items():
            kind = "f" if isinstance(value, float) else "i" if isinstance(value, int) else "s"
            ir_attrs[key] = {kind: value}
        nodes.append({
            "input_src": [{"src_node_name": s, "src_out_index": i} for s, i in sources],
            "outputs": [{"attr": tensor}],
            "attr": {"name": name, "type": op,
                     "sched": {"exec_order": order, "axis": sched, "loop_axis": -1},
                     "ir_attr_def": {"attr": ir_attrs}},
            "ir_def": {"type": op},
        })
    return {"asc_graph_attr": {"tiling_key": -1, "axis": axes, "size_var": graph.size_vars},
            "asc_node": nodes, "graph_name": graph.name}


def _compact_node_lines(op, name, sources, out, sched, attrs):
    lines = ["asc_node {"]
    for source, index in sources:
        lines += [f'  input_src {{ src_node_name: "{source}"' +
                  (f" src_out_index: {index}" if index else "") + " }"]
    if out is not None:
        fields = ([f"dtype: {GE_TYPES[out.dtype]}"] if GE_TYPES[out.dtype] else [])
        fields += [f"axis_ids: {a}" for a in out.axes]
        fields += [f'repeats: "{r}"' for r in out.repeats]
        fields += [f'strides: "{s}"' for s in out.strides]
        lines += ["  outputs { attr { " + " ".join(fields) + " } }"]
    attr_text = " ".join(line.strip() for line in _attr_lines(attrs))
    lines += [f'  attr {{ name: "{name}" type: "{op}" sched {{ ' +
              " ".join(f"axis: {a}" for a in sched) + " }" +
              (f" ir_attr_def {{ {attr_text} }}" if attrs else "") + " }"]
    lines += ["}"]
    return lines
