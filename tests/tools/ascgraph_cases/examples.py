"""The example graphs of configs/examples/ascgraph/ and their NumPy expectations.

Each example is written with symbolic sizes (s0, s1, …) the way the graph engine emits
HintGraphs; the test cases bind small sizes so the .npy files stay small.
"""

import json
import os

import numpy as np

from .common import Case, random_array
from .graph_text import Graph, Tensor, graph_json

EXAMPLES_DIR = os.path.join("configs", "examples", "ascgraph")


def _axes(names_and_sizes):
    return [(f"z{i}", size) for i, size in enumerate(names_and_sizes)]


def _load_input(g, index, tensor):
    g.add("Data", f"Data_{index}", out=tensor, attrs={"index": index})
    return g.add("Load", f"Load_{index}", [f"Data_{index}"], out=tensor)


def _store_output(g, source, tensor, index=0):
    g.add("Store", f"Store_{index}", [source], out=tensor)
    g.add("Output", f"Output_{index}", [f"Store_{index}"], attrs={"index": index})


def abs_chain_3d():
    g = Graph("abs_chain_3d", _axes(["s0", "s1", "s2"]), ["s0", "s1", "s2"])
    t = Tensor("f16", [0, 1, 2], ["s0", "s1", "s2"])
    node = _load_input(g, 0, t)
    for i in range(3):
        node = g.add("Abs", f"Abs_{i}", [node], out=t)
    _store_output(g, node, t)
    header = "Abs applied three times to f16[s0,s1,s2]: Data -> Load -> Abs x3 -> Store -> Output."
    return g, header, lambda x: [np.abs(x)], [("f16", 3)]


def broadcast_add_row():
    g = Graph("broadcast_add_row", _axes(["s0", "s1"]), ["s0", "s1"])
    full = Tensor("f32", [0, 1], ["s0", "s1"])
    row = Tensor("f32", [0, 1], ["1", "s1"])  # repeats 1 / stride 0 on z0
    x = _load_input(g, 0, full)
    r = _load_input(g, 1, row)
    b = g.add("Broadcast", "Broadcast_0", [r], out=full)
    s = g.add("Add", "Add_0", [x, b], out=full)
    _store_output(g, s, full)
    header = ("x[s0,s1] + row[1,s1]: the row (repeats 1, stride 0 on z0) is broadcast along z0\n"
              "before the Add.")
    return g, header, lambda x, r: [x + r], [("f32", 2), ("f32", 2, "row")]


def reduce_sum_arar():
    g = Graph("reduce_sum_arar", _axes(["s0", "s1", "s2", "s3"]), ["s0", "s1", "s2", "s3"])
    full = Tensor("f32", [0, 1, 2, 3], ["s0", "s1", "s2", "s3"])
    kept = Tensor("f32", [0, 1, 2, 3], ["s0", "1", "s2", "1"], ["s2", "0", "1", "0"])
    x = _load_input(g, 0, full)
    s = g.add("Sum", "Sum_0", [x], out=kept)
    _store_output(g, s, kept)
    header = ("Sum of f32[s0,s1,s2,s3] over z1 and z3 (the ARAR pattern), dims kept: the output\n"
              "has repeats [s0,1,s2,1] and strides [s2,0,1,0].")
    return g, header, lambda x: [x.sum(axis=(1, 3), keepdims=True, dtype=np.float32)], [("f32", 4)]


def cast_f16_exp():
    g = Graph("cast_f16_exp", _axes(["s0", "s1"]), ["s0", "s1"])
    half = Tensor("f16", [0, 1], ["s0", "s1"])
    single = Tensor("f32", [0, 1], ["s0", "s1"])
    x = _load_input(g, 0, half)
    c = g.add("Cast", "Cast_0", [x], out=single)
    e = g.add("Exp", "Exp_0", [c], out=single)
    _store_output(g, e, single)
    header = "exp(float(x)) for f16 x: Cast's target type is its output dtype (f32)."
    return g, header, lambda x: [np.exp(x.astype(np.float32))], [("f16", 2)]


def transpose_3d():
    g = Graph("transpose_3d", _axes(["s0", "s1", "s2"]), ["s0", "s1", "s2"])
    t_in = Tensor("f32", [0, 1, 2], ["s0", "s1", "s2"])
    t_out = Tensor("f32", [0, 2, 1], ["s0", "s2", "s1"])
    x = _load_input(g, 0, t_in)
    t = g.add("Transpose", "Transpose_0", [x], out=t_out)
    _store_output(g, t, t_out)
    header = ("The last two axes swapped: the Transpose's output lists the axes as [z0, z2, z1]\n"
              "with row-major strides over that order.")
    return g, header, lambda x: [np.ascontiguousarray(x.transpose(0, 2, 1))], [("f32", 3)]


def softmax_last_axis():
    g = Graph("softmax_last_axis", _axes(["s0", "s1"]), ["s0", "s1"])
    full = Tensor("f32", [0, 1], ["s0", "s1"])
    kept = Tensor("f32", [0, 1], ["s0", "1"], ["1", "0"])
    x = _load_input(g, 0, full)
    m = g.add("Max", "Max_0", [x], out=kept)
    mb = g.add("Broadcast", "Broadcast_0", [m], out=full)
    d = g.add("Sub", "Sub_0", [x, mb], out=full)
    e = g.add("Exp", "Exp_0", [d], out=full)
    s = g.add("Sum", "Sum_0", [e], out=kept)
    sb = g.add("Broadcast", "Broadcast_1", [s], out=full)
    q = g.add("Div", "Div_0", [e, sb], out=full)
    _store_output(g, q, full)
    header = ("Softmax over the last axis: max, subtract, exp, sum, divide; the reductions keep\n"
              "z1 with repeats 1 and are broadcast back.")

    def expect(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return [e / e.sum(axis=1, keepdims=True, dtype=np.float32)]
    return g, header, expect, [("f32", 2)]


def leaky_relu_axpy():
    g = Graph("leaky_relu_axpy", _axes(["s0", "s1"]), ["s0", "s1"])
    t = Tensor("f32", [0, 1], ["s0", "s1"])
    x = _load_input(g, 0, t)
    y = _load_input(g, 1, t)
    r = g.add("LeakyRelu", "LeakyRelu_0", [x], out=t, attrs={"negative_slope": 0.1})
    a = g.add("Axpy", "Axpy_0", [r, y], out=t, attrs={"alpha": 0.5})
    _store_output(g, a, t)

    def expect(x, y):
        slope, alpha = np.float32(0.1), np.float32(0.5)
        return [np.where(x > 0, x, x * slope) + alpha * y]
    return g, None, expect, [("f32", 2), ("f32", 2)]


# (builder, test sizes, file suffix)
EXAMPLES = [
    (abs_chain_3d, {"s0": 3, "s1": 4, "s2": 5}, ".ascgraph.txt"),
    (broadcast_add_row, {"s0": 4, "s1": 6}, ".ascgraph.txt"),
    (reduce_sum_arar, {"s0": 2, "s1": 3, "s2": 4, "s3": 5}, ".ascgraph.txt"),
    (cast_f16_exp, {"s0": 4, "s1": 8}, ".ascgraph.txt"),
    (transpose_3d, {"s0": 2, "s1": 3, "s2": 4}, ".ascgraph.txt"),
    (softmax_last_axis, {"s0": 4, "s1": 16}, ".ascgraph.txt"),
    (leaky_relu_axpy, {"s0": 3, "s1": 8}, ".ascgraph.json"),
]


def _input_shape(spec, sizes, rank_names):
    dtype, rank = spec[0], spec[1]
    shape = [sizes[n] for n in rank_names[:rank]]
    if len(spec) > 2 and spec[2] == "row":
        shape[0] = 1
    return dtype, tuple(shape)


def build_examples(repo):
    """Writes the example files; returns their test cases."""
    cases = []
    for builder, sizes, suffix in EXAMPLES:
        graph, header, expect, input_specs = builder()
        path = os.path.join(EXAMPLES_DIR, graph.name + suffix)
        with open(os.path.join(repo, path), "w") as f:
            if suffix == ".ascgraph.json":
                request = {"graph": graph_json(graph), "sizes": {"s0": 96, "s1": 512},
                           "platform": {"name": "910b1", "vector_cores": 48, "ub_bytes": 196352}}
                f.write(json.dumps(request, indent=1) + "\n")
            else:
                f.write(graph.text(header + "\nWritten by tests/tools/gen_ascgraph_cases.py."))
        names = sorted(sizes)
        inputs = [random_array(*_input_shape(spec, sizes, names)) for spec in input_specs]
        outputs = expect(*inputs)
        cases.append(Case(graph.name, path, sizes, inputs, outputs, "examples"))
    return cases
