"""One small graph per op and per memory/structure feature, with NumPy expectations.

Graphs have literal sizes (z0 = 3, z1 = 4 unless a case needs others) and are written to
tests/data/ascgraph/ops/<name>.ascgraph.txt.
"""

import math
import os

import numpy as np

from .common import NP_TYPES, Case, random_array
from .graph_text import Graph, Tensor

OPS_DIR = os.path.join("tests", "data", "ascgraph", "ops")
SHAPE = (3, 4)
CASES = []  # (Graph, inputs, outputs, extra cases.json fields)


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def _graph(name, dims=SHAPE):
    return Graph(name, [(f"z{i}", str(d)) for i, d in enumerate(dims)])


def _tensor(dtype, dims=SHAPE, strides=None):
    return Tensor(dtype, list(range(len(dims))), [str(d) for d in dims], strides)


def _load(g, index, tensor, load_tensor=None):
    g.add("Data", f"Data_{index}", out=tensor, attrs={"index": index})
    return g.add("Load", f"Load_{index}", [f"Data_{index}"], out=load_tensor or tensor)


def _store(g, source, tensor, index=0):
    g.add("Store", f"Store_{index}", [source], out=tensor)
    g.add("Output", f"Output_{index}", [f"Store_{index}"], attrs={"index": index})


def elementwise(name, op, in_types, out_type, expect, attrs=None, inputs=None):
    g = _graph(name)
    loads = [_load(g, i, _tensor(t)) for i, t in enumerate(in_types)]
    node = g.add(op, f"{op}_0", loads, out=_tensor(out_type), attrs=attrs)
    _store(g, node, _tensor(out_type))
    if inputs is None:
        inputs = [random_array(t, SHAPE) for t in in_types]
    with np.errstate(all="ignore"):
        output = np.asarray(expect(*inputs)).astype(NP_TYPES[out_type])
    CASES.append((g, inputs, [output], {}))


def _positive(dtype="f32"):
    return random_array(dtype, SHAPE, 0.25, 3.0)


def _specials():
    return _f32([[np.nan, np.inf, -np.inf, 1.5], [0.0, -0.0, 2.0, np.nan], [-3.0, 7.0, np.inf, 0.5]])


def _small_ints_as_floats():
    return random_array("s32", SHAPE, -2, 2).astype(np.float32)


def _gelu(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def add_elementwise_cases():
    unary = [
        ("abs", "Abs", np.abs, None), ("exp", "Exp", np.exp, None),
        ("ln", "Ln", np.log, _positive), ("log", "Log", np.log, _positive),
        ("sqrt", "Sqrt", np.sqrt, _positive), ("rsqrt", "Rsqrt", lambda x: 1 / np.sqrt(x), _positive),
        ("neg", "Neg", np.negative, None), ("tanh", "Tanh", np.tanh, None),
        ("erf", "Erf", np.vectorize(math.erf), None), ("sign", "Sign", np.sign, None),
        ("sigmoid", "Sigmoid", lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), None),
        ("reciprocal", "Reciprocal", lambda x: 1 / x, _positive),
        ("relu", "Relu", lambda x: np.maximum(x, 0), None), ("gelu", "Gelu", _gelu, None),
    ]
    for name, op, fn, make in unary:
        elementwise(name, op, ["f32"], "f32", fn, inputs=[make()] if make else None)
    elementwise("leaky_relu", "LeakyRelu", ["f32"], "f32",
                lambda x: np.where(x > 0, x, x * np.float32(0.2)), {"negative_slope": 0.2})
    for name, op, fn in [("isnan", "Isnan", np.isnan), ("is_inf", "IsInf", np.isinf),
                         ("is_finite", "IsFinite", np.isfinite)]:
        elementwise(name, op, ["f32"], "u8", fn, inputs=[_specials()])
    elementwise("logical_not", "LogicalNot", ["f32"], "f32", lambda x: x == 0,
                inputs=[_small_ints_as_floats()])

    binary = [("add", "Add", np.add), ("sub", "Sub", np.subtract), ("mul", "Mul", np.multiply),
              ("maximum", "Maximum", np.maximum), ("minimum", "Minimum", np.minimum),
              ("max_elementwise", "Max", np.maximum), ("min_elementwise", "Min", np.minimum)]
    for name, op, fn in binary:
        elementwise(name, op, ["f32", "f32"], "f32", fn)
    def nonzero():
        return random_array("f32", SHAPE, 0.5, 2.0) * np.where(_signs(), 1, -1).astype(np.float32)
    elementwise("div", "Div", ["f32", "f32"], "f32", np.divide,
                inputs=[random_array("f32", SHAPE), nonzero()])
    elementwise("pow", "Pow", ["f32", "f32"], "f32", np.power,
                inputs=[_positive(), random_array("f32", SHAPE)])
    elementwise("floor_div", "FloorDiv", ["f32", "f32"], "f32", lambda a, b: np.floor(a / b),
                inputs=[random_array("f32", SHAPE, -6, 6), nonzero()])
    elementwise("remainder_f32", "Remainder", ["f32", "f32"], "f32", np.mod,
                inputs=[random_array("f32", SHAPE, -6, 6), nonzero()])
    int_divisor = random_array("s32", SHAPE, 1, 4) * np.where(_signs(), 1, -1).astype(np.int32)
    elementwise("remainder_s32", "Remainder", ["s32", "s32"], "s32", np.mod,
                inputs=[random_array("s32", SHAPE, -9, 9), int_divisor])
    elementwise("axpy", "Axpy", ["f32", "f32"], "f32", lambda a, b: a + np.float32(1.5) * b,
                {"alpha": 1.5})
    elementwise("bitwise_and", "BitwiseAnd", ["s32", "s32"], "s32", np.bitwise_and,
                inputs=[random_array("s32", SHAPE, 0, 15), random_array("s32", SHAPE, 0, 15)])
    elementwise("true_div", "TrueDiv", ["s32", "s32"], "f32",
                lambda a, b: a.astype(np.float32) / b.astype(np.float32),
                inputs=[random_array("s32", SHAPE, -9, 9), int_divisor])
    for name, op, fn in [("logical_and", "LogicalAnd", np.logical_and),
                         ("logical_or", "LogicalOr", np.logical_or)]:
        elementwise(name, op, ["f32", "f32"], "u8", lambda a, b, fn=fn: fn(a != 0, b != 0),
                    inputs=[_small_ints_as_floats(), _small_ints_as_floats()])
    for name, fn in [("Eq", np.equal), ("Ne", np.not_equal), ("Gt", np.greater),
                     ("Ge", np.greater_equal), ("Lt", np.less), ("Le", np.less_equal)]:
        elementwise(name.lower(), name, ["f32", "f32"], "u8", fn,
                    inputs=[_small_ints_as_floats(), _small_ints_as_floats()])

    elementwise("clip_by_value", "ClipByValue", ["f32", "f32", "f32"], "f32",
                lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
                inputs=[random_array("f32", SHAPE), random_array("f32", SHAPE, -1, 0),
                        random_array("f32", SHAPE, 0, 1)])
    for name, op, cond_type in [("select", "Select", "u8"), ("where", "Where", "pred")]:
        elementwise(name, op, [cond_type, "f32", "f32"], "f32", lambda c, a, b: np.where(c != 0, a, b),
                    inputs=[random_array(cond_type, SHAPE, 0, 1), random_array("f32", SHAPE),
                            random_array("f32", SHAPE)])
    elementwise("masked_fill", "MaskedFill", ["f32", "u8", "f32"], "f32",
                lambda x, m, v: np.where(m != 0, v, x),
                inputs=[random_array("f32", SHAPE), random_array("u8", SHAPE, 0, 1),
                        random_array("f32", SHAPE)])

    casts = [("f32", "s32", random_array("f32", SHAPE, -9, 9)), ("f32", "f16", None),
             ("f32", "bf16", None), ("s32", "f32", None), ("u8", "f32", None),
             ("pred", "f32", None), ("f16", "f32", None)]
    for src, dst, inputs in casts:
        elementwise(f"cast_{src}_to_{dst}", "Cast", [src], dst, lambda x: x,
                    inputs=[inputs] if inputs is not None else [random_array(src, SHAPE, 0, 9)])
    elementwise("add_f16", "Add", ["f16", "f16"], "f16", np.add)
    elementwise("add_bf16", "Add", ["bf16", "bf16"], "bf16",
                lambda a, b: (a.astype(np.float32) + b.astype(np.float32)))
    elementwise("mul_s32", "Mul", ["s32", "s32"], "s32", np.multiply)


def _signs():
    return random_array("pred", SHAPE)


def add_reduce_cases():
    x = random_array("f32", SHAPE)
    reductions = [("sum", "Sum", np.sum), ("max", "Max", np.max), ("min", "Min", np.min),
                  ("mean", "Mean", np.mean), ("prod", "Prod", np.prod),
                  ("any", "Any", lambda a, axis, keepdims: np.any(a != 0, axis=axis, keepdims=keepdims)),
                  ("all", "All", lambda a, axis, keepdims: np.all(a != 0, axis=axis, keepdims=keepdims))]
    for name, op, fn in reductions:
        inputs = [_small_ints_as_floats()] if name in ("any", "all") else [x]
        reduce_case(f"reduce_{name}_inner", op, (1,), fn, inputs)
    reduce_case("reduce_sum_outer", "Sum", (0,), np.sum, [x])
    reduce_case("reduce_sum_all", "Sum", (0, 1), np.sum, [x])


def reduce_case(name, op, axes, fn, inputs):
    g = _graph(name)
    kept_dims = tuple(1 if i in axes else d for i, d in enumerate(SHAPE))
    strides = ["0" if d == 1 else str(int(np.prod([k for k in kept_dims[i + 1:]]))) for i, d in
               enumerate(kept_dims)]
    out = _tensor("f32", kept_dims, strides)
    node = g.add(op, f"{op}_0", [_load(g, 0, _tensor("f32"))], out=out)
    _store(g, node, out)
    expected = np.asarray(fn(inputs[0], axis=axes, keepdims=True)).astype(np.float32)
    CASES.append((g, inputs, [expected], {}))


def add_structure_cases():
    # Broadcast of a column, Transpose, Scalar.
    g = _graph("broadcast_column")
    column = _tensor("f32", (3, 1), ["1", "0"])
    node = g.add("Broadcast", "Broadcast_0", [_load(g, 0, column)], out=_tensor("f32"))
    _store(g, node, _tensor("f32"))
    x = random_array("f32", (3, 1))
    CASES.append((g, [x], [np.broadcast_to(x, SHAPE)], {}))

    g = _graph("transpose_2d")
    out = Tensor("f32", [1, 0], ["4", "3"])
    node = g.add("Transpose", "Transpose_0", [_load(g, 0, _tensor("f32"))], out=out)
    _store(g, node, out)
    x = random_array("f32", SHAPE)
    CASES.append((g, [x], [x.T], {}))

    g = _graph("scalar_add")
    g.add("Scalar", "Scalar_0", out=_tensor("f32", (1, 1), ["0", "0"]), attrs={"value": "2.5"})
    node = g.add("Add", "Add_0", [_load(g, 0, _tensor("f32")), "Scalar_0"], out=_tensor("f32"))
    _store(g, node, _tensor("f32"))
    x = random_array("f32", SHAPE)
    CASES.append((g, [x], [x + np.float32(2.5)], {}))

    # Concat along one axis shared by inputs and output, and along split axes.
    g = Graph("concat_same_axis", [("z0", "3"), ("z1", "5")])
    a = _load(g, 0, _tensor("f32", (3, 2)))
    b = _load(g, 1, _tensor("f32", (3, 3)))
    node = g.add("Concat", "Concat_0", [a, b], out=_tensor("f32", (3, 5)))
    _store(g, node, _tensor("f32", (3, 5)))
    xa, xb = random_array("f32", (3, 2)), random_array("f32", (3, 3))
    CASES.append((g, [xa, xb], [np.concatenate([xa, xb], axis=1)], {}))

    g = Graph("concat_split_axes", [("z0", "3"), ("zo", "5"), ("zo_s_0", "2"), ("zo_s_1", "3")])
    a = _load(g, 0, Tensor("f32", [0, 2], ["3", "2"]))
    b = _load(g, 1, Tensor("f32", [0, 3], ["3", "3"]))
    node = g.add("Concat", "Concat_0", [a, b], out=Tensor("f32", [0, 1], ["3", "5"]))
    _store(g, node, Tensor("f32", [0, 1], ["3", "5"]))
    CASES.append((g, [xa, xb], [np.concatenate([xa, xb], axis=1)], {}))

    # Two outputs, the Output with index 1 written first: results come in index order.
    g = _graph("two_outputs")
    x_load = _load(g, 0, _tensor("f32"))
    abs_node = g.add("Abs", "Abs_0", [x_load], out=_tensor("f32"))
    _store(g, abs_node, _tensor("f32"), index=1)
    neg_node = g.add("Neg", "Neg_0", [x_load], out=_tensor("f32"))
    _store(g, neg_node, _tensor("f32"), index=0)
    x = random_array("f32", SHAPE)
    CASES.append((g, [x], [-x, np.abs(x)], {}))


def add_memory_cases():
    """Graph inputs and outputs whose strides are not plain row-major."""
    def strided_input(name, strides, buffer, view, root_shape=None):
        g = _graph(name)
        node = g.add("Neg", "Neg_0", [_load(g, 0, _tensor("f32", strides=strides), _tensor("f32"))],
                     out=_tensor("f32"))
        _store(g, node, _tensor("f32"))
        extra = {"parameter_shape": root_shape} if root_shape else {}
        CASES.append((g, [buffer], [-view(buffer)], extra))

    buf = random_array("f32", (3, 6))
    strided_input("data_padded_rows", ["6", "1"], buf, lambda b: b[:, :4], "f32[3,6]{1,0}")
    buf = random_array("f32", SHAPE)
    strided_input("data_column_major", ["1", "3"], buf, lambda b: b, "f32[3,4]{0,1}")
    buf = random_array("f32", (4,))
    strided_input("data_broadcast_view", ["0", "1"], buf, lambda b: np.broadcast_to(b, SHAPE),
                  "f32[4]{0}")
    buf = random_array("f32", (3, 4, 2))
    strided_input("data_strided_inner", ["8", "2"], buf, lambda b: b[:, :, 0], "f32[3,4,2]{2,1,0}")
    buf = random_array("f32", (5, 4))
    strided_input("data_column_major_padded", ["1", "5"], buf, lambda b: b[:3, :], "f32[5,4]{0,1}")

    g = _graph("output_column_major")
    out = _tensor("f32", strides=["1", "3"])
    node = g.add("Neg", "Neg_0", [_load(g, 0, _tensor("f32"))], out=_tensor("f32"))
    _store(g, node, out)
    x = random_array("f32", SHAPE)
    CASES.append((g, [x], [-x], {"root_shape": "f32[3,4]{0,1}"}))


def build_op_cases(repo):
    add_elementwise_cases()
    add_reduce_cases()
    add_structure_cases()
    add_memory_cases()
    cases = []
    for graph, inputs, outputs, extra in CASES:
        path = os.path.join(OPS_DIR, graph.name + ".ascgraph.txt")
        with open(os.path.join(repo, path), "w") as f:
            f.write(graph.text(compact=True))
        case = Case(graph.name, path, {}, inputs, outputs, "ops")
        case.extra = extra
        cases.append(case)
    return cases
