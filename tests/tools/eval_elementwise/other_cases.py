"""reduce-precision, complex, select, clamp, copy, layouts and constants."""

import math

import ml_dtypes
import numpy as np

from eval_elementwise.common import (
    FLOATS, INF, NAN, array_text, case, f_max, f_min, representable)


def add_reduce_precision_cases():
    c = case("elementwise_reduce_precision_f32",
             "reduce-precision as XLA: mantissa rounded to nearest even, exponents out of "
             "range to ±inf\nor ±0 (denormals of the reduced format flush), NaN stays NaN, or "
             "becomes +inf with no\nmantissa bits. (8, 7) and (5, 10) match bf16 and f16 in "
             "their normal range.")
    normal = [1.0, 1.00390625, 1.005859375, 1.0029296875, -3.14159, 65504.0, 65519.0, 65520.0,
              1e5, -1e5, 6.1035156e-05, 3.0e-5, -3.0e-5, 6.1e-05, INF, -INF, NAN, 0.0, -0.0,
              3.4e38, 1.1754944e-38, 1e-39]
    vals = [float(np.float32(v)) for v in normal]
    n = len(vals)
    x = c.param("f32", vals)

    def ieee_like(v, target):
        """IEEE-style rounding; with fewer exponent bits than f32, XLA flushes the reduced
        format's denormals to zero."""
        if math.isnan(v):
            return v
        with np.errstate(all="ignore"):
            r = float(np.array([v], np.float32).astype(FLOATS[target])[0])
        finfo = ml_dtypes.finfo(FLOATS[target])
        if finfo.nexp < 8 and abs(r) < float(finfo.smallest_normal):
            return math.copysign(0.0, v)
        return r

    c.check("bf16_like", f"f32[{n}]", f"reduce-precision({x}), exponent_bits=8, mantissa_bits=7",
            array_text([ieee_like(v, "bf16") for v in vals], "f32", [n]))
    c.check("f16_like", f"f32[{n}]",
            f"reduce-precision({x}), exponent_bits=5, mantissa_bits=10",
            array_text([ieee_like(v, "f16") for v in vals], "f32", [n]))
    c.check("e5m2_like", f"f32[{n}]",
            f"reduce-precision({x}), exponent_bits=5, mantissa_bits=2",
            array_text([ieee_like(v, "f8e5m2") for v in vals], "f32", [n]))
    c.check("identity", f"f32[{n}]",
            f"reduce-precision({x}), exponent_bits=8, mantissa_bits=23",
            array_text(vals, "f32", [n]))
    # No mantissa bits: powers of two, ties going to the even exponent field (1.5 has
    # field 127, so up to 2; 3 has field 128, so down to 2; -0.75 has 126: -0.5); NaN
    # becomes +inf.
    pow2_in = [1.5, 1.25, 3.0, -0.75, NAN, 1e38]
    y = c.param("f32", pow2_in)
    c.check("no_mantissa", "f32[6]", f"reduce-precision({y}), exponent_bits=8, mantissa_bits=0",
            array_text([2.0, 1.0, 2.0, -0.5, INF, float(np.float32(2.0 ** 126))], "f32", [6]))

    c = case("elementwise_reduce_precision_f64_bf16",
             "reduce-precision on f64 works on the f64 bits; on bf16 it works in f32 and "
             "rounds back.")
    d = [1.0 + 2.0 ** -30, 1.0 + 2.0 ** -24 + 2.0 ** -40, 1e300, -1e-300, NAN]
    x = c.param("f64", d)
    expected = [ieee_like_f64(v) for v in d]
    c.check("f64_to_f32_like", "f64[5]",
            f"reduce-precision({x}), exponent_bits=8, mantissa_bits=23",
            array_text(expected, "f64", [5]))
    b = representable([1.0078125, 1.0234375, -3.0, 1e30, 1e-30], "bf16")
    y = c.param("bf16", b)
    # (5, 2): 1.0078125 -> 1, 1.0234375 -> 1, -3 -> -3, 1e30 -> inf, 1e-30 -> 0
    c.check("bf16_e5m2", "bf16[5]", f"reduce-precision({y}), exponent_bits=5, mantissa_bits=2",
            array_text([1.0, 1.0, -3.0, INF, 0.0], "bf16", [5]))


def ieee_like_f64(v):
    """f64 reduced to (8, 23): f32 rounding, with f32 denormals flushed to signed zero."""
    if math.isnan(v):
        return v
    with np.errstate(all="ignore"):
        r = float(np.float32(v))
    if r != 0 and abs(r) < 2.0 ** -126:
        return math.copysign(0.0, v)
    if r == 0:
        return math.copysign(0.0, v)
    return r


def add_complex_cases():
    for type_name, part, dt, tolerance in [("c64", "f32", np.complex64, 1e-5),
                                           ("c128", "f64", np.complex128, 1e-14)]:
        a = [complex(1.5, -2.0), complex(0.0, 1.0), complex(-3.0, 0.5), complex(2.0, 0.0),
             complex(-0.0, -0.0), complex(0.25, 4.0)]
        b = [complex(0.5, 0.5), complex(1.5, 0.5), complex(-1.0, -2.0), complex(0.0, 3.0),
             complex(1.0, 1.0), complex(-2.0, 0.125)]
        n = len(a)
        s = f"{type_name}[{n}]"
        c = case(f"elementwise_complex_exact_{type_name}",
                 f"{type_name}: exact ops: add, subtract, negate, real, imag, complex(re, im), "
                 "compare EQ/NE\n(FLOAT and TOTALORDER), convert between c64 and c128, "
                 "abs of (3, -4), select.")
        x = c.param(type_name, a)
        y = c.param(type_name, b)
        for op, fn in [("add", lambda p, q: p + q), ("subtract", lambda p, q: p - q)]:
            c.check(op, s, f"{op}({x}, {y})",
                    array_text([complex(dt(fn(p, q))) for p, q in zip(a, b)], type_name, [n]))
        c.check("negate", s, f"negate({x})",
                array_text([complex(-p.real, -p.imag) for p in a], type_name, [n]))
        c.check("re", f"{part}[{n}]", f"real({x})", array_text([p.real for p in a], part, [n]))
        c.check("im", f"{part}[{n}]", f"imag({x})", array_text([p.imag for p in a], part, [n]))
        c.check("made", s, "complex(re, im)", array_text(a, type_name, [n]))
        eq_b = [a[0], b[1], a[2], b[3], complex(0.0, 0.0), b[5]]
        z = c.param(type_name, eq_b)
        c.check("eq", f"pred[{n}]", f"compare({x}, {z}), direction=EQ",
                array_text([p == q for p, q in zip(a, eq_b)], "pred", [n]))
        c.check("ne", f"pred[{n}]", f"compare({x}, {z}), direction=NE",
                array_text([p != q for p, q in zip(a, eq_b)], "pred", [n]))
        nan_a = c.param(type_name, [complex(NAN, 0), complex(-0.0, 1)])
        nan_b = c.param(type_name, [complex(NAN, 0), complex(0.0, 1)])
        c.check("eq_nan_zero", "pred[2]", f"compare({nan_a}, {nan_b}), direction=EQ",
                array_text([False, True], "pred", [2]))
        c.check("total_eq_nan_zero", "pred[2]",
                f"compare({nan_a}, {nan_b}), direction=EQ, type=TOTALORDER",
                array_text([True, False], "pred", [2]))
        other = "c128" if type_name == "c64" else "c64"
        c.check("other", f"{other}[{n}]", f"convert({x})", array_text(a, other, [n]))
        c.check("abs_exact", f"{part}[1]", "abs(three_four)",
                array_text([5.0], part, [1]))
        c.instructions.insert(0, f"  three_four = {type_name}[1] constant({{(3, -4)}})")
        sel = c.param("pred", [True, False, True, False, False, True])
        c.check("sel", s, f"select({sel}, {x}, {y})",
                array_text([p if t else q for t, p, q in
                            zip([True, False, True, False, False, True], a, b)], type_name,
                           [n]))

        cpp_part = "double" if part == "f64" else "float"
        c = case(f"elementwise_complex_math_{type_name}",
                 f"{type_name}: multiply, divide, abs, sign, exp, log, sqrt, rsqrt, tanh, sin, "
                 f"cos, power,\natan2, logistic, computed in std::complex<{cpp_part}>.")
        c.tolerance = tolerance
        x = c.param(type_name, a[:4] + a[5:])
        y = c.param(type_name, b[:4] + b[5:])
        aa = a[:4] + a[5:]
        bb = b[:4] + b[5:]
        m = len(aa)
        s = f"{type_name}[{m}]"

        def ref(fn):
            with np.errstate(all="ignore"):
                return [complex(fn(np.complex128(p), np.complex128(q))) for p, q in zip(aa, bb)]

        def atan2(yv, xv):
            i = 1j
            return -i * np.log((xv + i * yv) / np.sqrt(xv * xv + yv * yv))

        for op, fn in [("multiply", lambda p, q: p * q), ("divide", lambda p, q: p / q),
                       ("power", lambda p, q: p ** q), ("atan2", atan2)]:
            c.check(op, s, f"{op}({x}, {y})", array_text(ref(fn), type_name, [m]))
        for op, fn in [("exponential", np.exp), ("log", np.log), ("sqrt", np.sqrt),
                       ("rsqrt", lambda p: 1 / np.sqrt(p)), ("tanh", np.tanh), ("sin", np.sin),
                       ("cos", np.cos), ("sign", lambda p: p / abs(p)),
                       ("logistic", lambda p: 1 / (1 + np.exp(-p))),
                       ("exponential-minus-one", lambda p: np.expm1(p.real) * np.cos(p.imag)
                        - 2 * np.sin(p.imag / 2) ** 2 + 1j * np.exp(p.real) * np.sin(p.imag))]:
            c.check(op.replace("-", "_"), s, f"{op}({x})",
                    array_text(ref(lambda p, q, f=fn: f(p)), type_name, [m]))
        c.check("abs_", f"{part}[{m}]", f"abs({x})",
                array_text([abs(p) for p in aa], part, [m]))


def add_misc_cases():
    c = case("elementwise_select",
             "select with an array predicate and with a scalar one, on s4, bf16, c128 and u64.")
    pred = [True, False, False, True]
    p = c.param("pred", pred)
    scalar = c.raw_param("pred[]", "false")
    for type_name, on_true, on_false in [
            ("s4", [-8, 7, -1, 0], [1, 2, 3, 4]),
            ("bf16", [1.5, -0.0, INF, NAN], [2.0, 3.0, -4.0, 0.5]),
            ("c128", [complex(1, 2), complex(3, 4), complex(5, 6), complex(7, 8)],
             [complex(-1, 0), complex(0, -1), complex(9, 9), complex(0, 0)]),
            ("u64", [(1 << 64) - 1, 0, 5, 6], [1, 2, 3, 1 << 63])]:
        t = c.param(type_name, on_true)
        f = c.param(type_name, on_false)
        s = f"{type_name}[4]"
        c.check(f"sel_{type_name}", s, f"select({p}, {t}, {f})",
                array_text([x if k else y for k, x, y in zip(pred, on_true, on_false)],
                           type_name, [4]))
        c.check(f"scalar_{type_name}", s, f"select({scalar}, {t}, {f})",
                array_text(on_false, type_name, [4]))

    c = case("elementwise_clamp",
             "clamp(lo, x, hi) = minimum(maximum(x, lo), hi): scalar or array bounds, NaN "
             "from any operand,\nsigned zeros, unsigned and sub-byte integers.")
    xs = [-5.0, 0.5, 7.0, NAN, -0.0, 0.0, 2.0]
    x = c.param("f32", xs)
    lo = c.raw_param("f32[]", "0")
    hi = c.raw_param("f32[]", "2")
    c.check("scalar_bounds", "f32[7]", f"clamp({lo}, {x}, {hi})",
            array_text([f_min(f_max(v, 0.0), 2.0) for v in xs], "f32", [7]))
    los = [-1.0, NAN, 0.0, 0.0, 0.0, -0.0, 3.0]
    his = [1.0, 1.0, NAN, 1.0, 1.0, 1.0, 4.0]
    pl = c.param("f32", los)
    ph = c.param("f32", his)
    c.check("array_bounds", "f32[7]", f"clamp({pl}, {x}, {ph})",
            array_text([f_min(f_max(v, l), h) for v, l, h in zip(xs, los, his)], "f32", [7]))
    us = [0, 3, 200, 255]
    u = c.param("u8", us)
    ul = c.raw_param("u8[]", "10")
    uh = c.raw_param("u8[]", "250")
    c.check("u8", "u8[4]", f"clamp({ul}, {u}, {uh})",
            array_text([min(max(v, 10), 250) for v in us], "u8", [4]))
    ss = [-8, -3, 0, 7]
    s4 = c.param("s4", ss)
    sl = c.raw_param("s4[]", "-2")
    sh = c.raw_param("s4[]", "5")
    c.check("s4", "s4[4]", f"clamp({sl}, {s4}, {sh})",
            array_text([min(max(v, -2), 5) for v in ss], "s4", [4]))
    bs = representable([-3.0, 0.3, 9.0, NAN], "bf16")
    b = c.param("bf16", bs)
    c.check("bf16", "bf16[4]", f"clamp(blo, {b}, bhi)",
            array_text([f_min(f_max(v, -1.0), 1.0) for v in bs], "bf16", [4]))
    c.instructions.insert(0, "  bhi = bf16[] constant(1)")
    c.instructions.insert(0, "  blo = bf16[] constant(-1)")

    c = case("elementwise_copy_tuple_and_layouts",
             "copy of arrays and tuples; operands in other layouts than the result; real "
             "and imag of real\nvalues (x and 0).")
    t = c.raw_param("(f32[2], (s8[], pred[2]))", "({1.5, -0}, (-7, {true, false}))")
    c.check("tuple_copy", "(f32[2], (s8[], pred[2]))", f"copy({t})",
            "({1.5, -0}, (-7, {true, false}))")
    m = c.param("s32", [1, 2, 3, 4, 5, 6], dims=[2, 3], layout="{0,1}")
    n = c.param("s32", [10, 20, 30, 40, 50, 60], dims=[2, 3], layout="{1,0}")
    c.check("mixed_layouts", "s32[2,3]{0,1}", f"add({m}, {n})",
            "{{11, 22, 33}, {44, 55, 66}}")
    c.check("copy_relayout", "s32[2,3]{1,0}", f"copy({m})", "{{1, 2, 3}, {4, 5, 6}}")
    r = c.param("bf16", [1.5, -2.0])
    c.check("real_of_real", "bf16[2]", f"real({r})", "{1.5, -2}")
    c.check("imag_of_real", "bf16[2]", f"imag({r})", "{0, 0}")
    i = c.param("s16", [3, -4])
    c.check("imag_of_int", "s16[2]", f"imag({i})", "{0, 0}")

    c = case("elementwise_constant_operands",
             "Elementwise ops on constants (evaluated by the structural half) and "
             "parameters together.")
    c.instructions.append("  k = f32[3] constant({0.5, -1, 2})")
    c.instructions.append("  ki = s32[3] constant({2147483647, -2147483648, 7})")
    x = c.param("f32", [1.0, 2.0, 3.0])
    y = c.param("s32", [1, -1, 0])
    c.check("f", "f32[3]", f"multiply(k, {x})", "{0.5, -2, 6}")
    c.check("i", "s32[3]", f"add(ki, {y})", "{-2147483648, 2147483647, 7}")
    c.check("cmp", "pred[3]", f"compare(k, {x}), direction=LT", "{true, true, true}")
