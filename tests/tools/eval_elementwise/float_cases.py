"""Real floating-point cases: exact ops, transcendentals and compare, with NumPy
computing in f32 (f64 for f64) and ml_dtypes rounding to the narrow types."""

import math

import ml_dtypes
import numpy as np

from eval_elementwise.common import (
    FLOATS, INF, INTS, NAN, array_text, case, compute_dtype, f_max, f_min, int_edges,
    representable, shape_text, to_type, wrap)


def round_afz(x):
    if math.isnan(x) or math.isinf(x):
        return x
    ax = abs(x)
    f = math.floor(ax)
    r = f + 1 if ax - f >= 0.5 else f
    return math.copysign(float(r), x)


def f_sign(x):
    if math.isnan(x) or x == 0:
        return x
    return math.copysign(1.0, x)


def float_op(op, dtype, *xs):
    """One op in the computing dtype, as NumPy computes it."""
    v = [dtype(x) for x in xs]
    with np.errstate(all="ignore"):
        table = {
            "add": lambda: v[0] + v[1],
            "subtract": lambda: v[0] - v[1],
            "multiply": lambda: v[0] * v[1],
            "divide": lambda: v[0] / v[1],
            "remainder": lambda: np.fmod(v[0], v[1]),
            "maximum": lambda: dtype(f_max(float(v[0]), float(v[1]))),
            "minimum": lambda: dtype(f_min(float(v[0]), float(v[1]))),
            "power": lambda: np.power(v[0], v[1]),
            "atan2": lambda: np.arctan2(v[0], v[1]),
            "abs": lambda: np.abs(v[0]),
            "negate": lambda: -v[0],
            "sign": lambda: dtype(f_sign(float(v[0]))),
            "floor": lambda: np.floor(v[0]),
            "ceil": lambda: np.ceil(v[0]),
            "round-nearest-afz": lambda: dtype(round_afz(float(v[0]))),
            "round-nearest-even": lambda: np.rint(v[0]),
            "sqrt": lambda: np.sqrt(v[0]),
            "rsqrt": lambda: dtype(1) / np.sqrt(v[0]),
            "cbrt": lambda: np.cbrt(v[0]),
            "exponential": lambda: np.exp(v[0]),
            "exponential-minus-one": lambda: np.expm1(v[0]),
            "log": lambda: np.log(v[0]),
            "log-plus-one": lambda: np.log1p(v[0]),
            "tanh": lambda: np.tanh(v[0]),
            "logistic": lambda: dtype(1) / (dtype(1) + np.exp(-v[0])),
            "erf": lambda: dtype(math.erf(float(v[0]))),
            "sin": lambda: np.sin(v[0]),
            "cos": lambda: np.cos(v[0]),
            "tan": lambda: np.tan(v[0]),
            "acos": lambda: np.arccos(v[0]),
            "acosh": lambda: np.arccosh(v[0]),
            "asin": lambda: np.arcsin(v[0]),
            "asinh": lambda: np.arcsinh(v[0]),
            "atanh": lambda: np.arctanh(v[0]),
            "cosh": lambda: np.cosh(v[0]),
            "sinh": lambda: np.sinh(v[0]),
        }
        return table[op]()


def float_values(type_name):
    """Operand values for exact-op tests of a float type, specials included."""
    if type_name == "f8e8m0fnu":  # positive powers of two and NaN only
        return [1.0, 2.0, 0.5, 4.0, 2.0 ** -127, 2.0 ** 127, 0.25, NAN]
    if type_name == "f4e2m1fn":  # no inf, no NaN
        return [0.0, -0.0, 0.5, -0.5, 1.0, 1.5, -1.5, 2.0, 3.0, -3.0, 4.0, 6.0, -6.0]
    info_max = float(ml_dtypes.finfo(FLOATS[type_name]).max)
    tiny = float(ml_dtypes.finfo(FLOATS[type_name]).smallest_subnormal)
    values = [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 0.1, 3.0, 7.0, -0.3, 2.5, 0.5, info_max,
              -info_max, tiny, NAN]
    if type_name not in ("f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz"):
        values += [INF, -INF]
    return representable(values, type_name)


def add_float_cases():
    exact_binary = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum"]
    exact_unary = ["abs", "negate", "sign", "floor", "ceil", "round-nearest-afz",
                   "round-nearest-even", "sqrt", "rsqrt"]
    for type_name in FLOATS:
        values = float_values(type_name)
        pairs = [(a, b) for a in values for b in values]
        if type_name == "f4e2m1fn":
            # f4 has no NaN: 0 / 0 and fmod(x, 0) become a zero of unspecified sign.
            pairs = [(a, b) for a, b in pairs if b != 0]
        n = len(pairs)
        dtype = compute_dtype(type_name)
        comment = (f"{type_name} arithmetic, exact: each op in "
                   f"{'f64' if type_name == 'f64' else 'f32'} rounded once to {type_name};\n"
                   "maximum/minimum propagate NaN and put +0 above -0; remainder is fmod.")
        c = case(f"elementwise_float_binary_{type_name}", comment)
        a = c.param(type_name, [p[0] for p in pairs])
        b = c.param(type_name, [p[1] for p in pairs])
        shape = shape_text(type_name, [n])
        for op in exact_binary:
            expected = [to_type(float_op(op, dtype, x, y), type_name) for x, y in pairs]
            c.check(op.replace("-", "_"), shape, f"{op}({a}, {b})",
                    array_text(expected, type_name, [n]))

        unary_values = values + representable([0.49999997, -0.5, 1.5, 2.5, -2.5, 3.5, 0.7,
                                               -1.7, 1e9, 2.0 ** 23 + 1], type_name)
        if type_name in ("f4e2m1fn", "f8e8m0fnu"):
            unary_values = values
        k = len(unary_values)
        c = case(f"elementwise_float_unary_{type_name}",
                 f"{type_name} exact unary ops: sign keeps ±0 and NaN;\nround-nearest-afz "
                 "rounds ties away from zero, round-nearest-even to even; is-finite.")
        x = c.param(type_name, unary_values)
        shape = shape_text(type_name, [k])
        for op in exact_unary:
            results = [float_op(op, dtype, v) for v in unary_values]
            if type_name == "f4e2m1fn" and any(math.isnan(float(r)) for r in results):
                continue  # sqrt of negatives: no NaN to compare with
            expected = [to_type(r, type_name) for r in results]
            c.check(op.replace("-", "_"), shape, f"{op}({x})",
                    array_text(expected, type_name, [k]))
        finite = [not (math.isnan(v) or math.isinf(v)) for v in unary_values]
        c.check("finite", f"pred[{k}]", f"is-finite({x})", array_text(finite, "pred", [k]))


def add_transcendental_cases():
    ops = ["exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic",
           "erf", "sin", "cos", "tan", "cbrt", "sinh", "cosh", "asinh", "power", "atan2"]
    for type_name, tolerance in [("f32", 2e-6), ("f64", 1e-14), ("bf16", 1e-2), ("f16", 2e-3),
                                 ("f8e4m3fn", 0.13)]:
        values = representable([0.5, -0.75, 1.25, 2.0, -3.0, 0.125, 0.0, -0.0], type_name)
        second = representable([2.0, 0.5, -1.5, 3.0, 2.0, -0.25, 1.0, 1.0], type_name)
        n = len(values)
        dtype = compute_dtype(type_name)
        c = case(f"elementwise_transcendental_{type_name}",
                 f"{type_name} transcendentals through the C library in "
                 f"{'f64' if type_name == 'f64' else 'f32'}, rounded to {type_name}.")
        c.tolerance = tolerance
        x = c.param(type_name, values)
        y = c.param(type_name, second)
        shape = shape_text(type_name, [n])
        for op in ops:
            if op in ("power", "atan2"):
                args = list(zip(values, second))
                text = f"{op}({x}, {y})"
            else:
                args = [(v,) for v in values]
                text = f"{op}({x})"
            expected = [to_type(float_op(op, dtype, *a), type_name) for a in args]
            c.check(op.replace("-", "_"), shape, text, array_text(expected, type_name, [n]))
        # Domains of the inverse functions.
        inner = representable([0.5, -0.25, 0.0, 0.75], type_name)
        outer = representable([1.0, 1.5, 2.0, 4.0], type_name)
        xi = c.param(type_name, inner)
        xo = c.param(type_name, outer)
        s4 = shape_text(type_name, [4])
        for op, vals, p in [("acos", inner, xi), ("asin", inner, xi), ("atanh", inner, xi),
                            ("acosh", outer, xo), ("log", outer, xo), ("sqrt", outer, xo)]:
            expected = [to_type(float_op(op, dtype, v), type_name) for v in vals]
            c.check(op + "_domain", s4, f"{op}({p})", array_text(expected, type_name, [4]))

    c = case("elementwise_float_specials_f32",
             "f32 specials: exp(-inf) = 0, log(0) = -inf, log(-1) = NaN, sqrt(-0) = -0,\n"
             "rsqrt(0) = inf, logistic saturates, tanh(±inf) = ±1, pow(x, 0) = 1, "
             "pow(1, NaN) = 1.")
    # Only inputs whose results are exact, so the comparison is bit-exact.
    specials = [-INF, INF, 0.0, -0.0, NAN]
    x = c.param("f32", specials)
    for op in ["exponential", "logistic", "tanh", "exponential-minus-one", "sin", "atanh"]:
        expected = [to_type(float_op(op, np.float32, v), "f32") for v in specials]
        c.check(op.replace("-", "_"), "f32[5]", f"{op}({x})", array_text(expected, "f32", [5]))
    with_negative = specials + [-1.0, 1.0]
    y = c.param("f32", with_negative)
    for op in ["log", "sqrt", "rsqrt", "log-plus-one", "cbrt", "acosh"]:
        expected = [to_type(float_op(op, np.float32, v), "f32") for v in with_negative]
        c.check(op.replace("-", "_") + "_", "f32[7]", f"{op}({y})",
                array_text(expected, "f32", [7]))
    base = [1.0, NAN, 0.0, -2.0, INF, -1.0, 4.0, 0.0]
    expo = [NAN, 0.0, -1.0, 3.0, -2.0, INF, 0.5, 0.0]
    s = "f32[8]"
    pb = c.param("f32", base)
    pe = c.param("f32", expo)
    expected = [to_type(float_op("power", np.float32, a, e), "f32") for a, e in zip(base, expo)]
    c.check("power", s, f"power({pb}, {pe})", array_text(expected, "f32", [8]))


def total_order_key(x, type_name):
    """XLA's total order on the type's own bits (fnuz types close the -0 gap)."""
    if type_name == "f32":
        bits, width = int(np.array([x], np.float32).view(np.uint32)[0]), 32
    elif type_name == "f64":
        bits, width = int(np.array([x], np.float64).view(np.uint64)[0]), 64
    else:
        raw = np.array([x], np.float32).astype(FLOATS[type_name])
        width = {"bf16": 16, "f16": 16, "f4e2m1fn": 4}.get(type_name, 8)
        bits = int(raw.view(np.uint16 if width == 16 else np.uint8)[0])
    if type_name == "f8e8m0fnu":
        return bits
    sign = bits >> (width - 1)
    magnitude = bits & ((1 << (width - 1)) - 1)
    if "fnuz" in type_name and sign:
        if magnitude == 0:
            return 1 << (width - 1)  # the NaN: above everything
        magnitude -= 1
    return ~magnitude if sign else magnitude


DIRECTIONS = {"EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "LT": lambda a, b: a < b,
              "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b}


def add_compare_cases():
    for type_name in ["f32", "f64", "bf16", "f16", "f8e5m2", "f8e4m3fn", "f8e4m3fnuz",
                      "f8e5m2fnuz", "f4e2m1fn", "f8e8m0fnu"]:
        values = float_values(type_name)
        if type_name in ("f32", "f64", "bf16", "f16", "f8e5m2"):
            values += [-NAN]
        pairs = [(a, b) for a in values for b in values]
        n = len(pairs)
        c = case(f"elementwise_compare_{type_name}",
                 f"{type_name} compare: FLOAT is IEEE (NaN unordered, only NE holds); "
                 "TOTALORDER orders\n-NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.")
        a = c.param(type_name, [p[0] for p in pairs])
        b = c.param(type_name, [p[1] for p in pairs])
        s = f"pred[{n}]"
        for direction, fn in DIRECTIONS.items():
            expected = [fn(x, y) for x, y in pairs]
            c.check(direction.lower(), s, f"compare({a}, {b}), direction={direction}",
                    array_text(expected, "pred", [n]))
        for direction, fn in DIRECTIONS.items():
            expected = [fn(total_order_key(x, type_name), total_order_key(y, type_name))
                        for x, y in pairs]
            c.check(f"total_{direction.lower()}", s,
                    f"compare({a}, {b}), direction={direction}, type=TOTALORDER",
                    array_text(expected, "pred", [n]))

    for type_name in ["s8", "u8", "s4", "u4", "s32", "u32", "s64", "u64", "s1", "u1"]:
        bits, signed = INTS[type_name]
        edges, lo, hi = int_edges(type_name)
        pairs = [(a, b) for a in edges for b in edges]
        n = len(pairs)
        c = case(f"elementwise_compare_{type_name}",
                 f"{type_name} compare in every direction, by the type's signedness, and with "
                 "type=SIGNED/UNSIGNED\nreading the same bits the other way.")
        a = c.param(type_name, [p[0] for p in pairs])
        b = c.param(type_name, [p[1] for p in pairs])
        s = f"pred[{n}]"
        for direction, fn in DIRECTIONS.items():
            expected = [fn(x, y) for x, y in pairs]
            c.check(direction.lower(), s, f"compare({a}, {b}), direction={direction}",
                    array_text(expected, "pred", [n]))
        other = "UNSIGNED" if signed else "SIGNED"
        for direction in ["LT", "GE"]:
            fn = DIRECTIONS[direction]
            expected = [fn(wrap(x, bits, not signed), wrap(y, bits, not signed))
                        for x, y in pairs]
            c.check(f"{other.lower()}_{direction.lower()}", s,
                    f"compare({a}, {b}), direction={direction}, type={other}",
                    array_text(expected, "pred", [n]))
