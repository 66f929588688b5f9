"""convert and bitcast-convert cases."""

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

from eval_elementwise.common import (
    FLOATS, INF, INTS, NAN, NARROW, array_text, case, exact_to_type, representable,
    scalar_text, wrap)


def float_to_int(x, type_name):
    bits, signed = INTS[type_name]
    if math.isnan(x):
        return 0
    lo = -(1 << (bits - 1)) if signed else 0
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    if math.isinf(x):
        return hi if x > 0 else lo
    return max(lo, min(hi, math.trunc(x)))


def add_convert_cases():
    # Floats to integers: truncate, saturate, NaN -> 0.
    for source in ["f32", "f64", "bf16", "f16", "f8e4m3fn"]:
        vals = [0.0, -0.0, 0.9, -0.9, 1.5, -1.5, 2.5, -7.99, 127.5, 128.0, -128.5, -129.0,
                255.9, 256.0, 1e10, -1e10, 3e19, -3e19, INF, -INF, NAN]
        if source == "f8e4m3fn":
            vals = [v for v in vals if math.isnan(v) or abs(v) <= 448]
        vals = list(dict.fromkeys(representable(vals, source)))
        n = len(vals)
        c = case(f"elementwise_convert_{source}_to_int",
                 f"{source} to integers: truncation toward zero, saturation at the type's "
                 "range, NaN -> 0.")
        x = c.param(source, vals)
        for target in ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "s4", "u4", "s1",
                       "u1"]:
            expected = [float_to_int(v, target) for v in vals]
            c.check(f"to_{target}", f"{target}[{n}]", f"convert({x})",
                    array_text(expected, target, [n]))
        c.check("to_pred", f"pred[{n}]", f"convert({x})",
                array_text([v != 0 for v in vals], "pred", [n]))  # NaN != 0

    # Integers to floats: one correct rounding, from the exact integer.
    big = [(1 << 60) + (1 << 52) + 1, (1 << 30) + (1 << 22) + 1, (1 << 24) + 1, (1 << 25) + 3,
           -((1 << 62) + (1 << 38) + 1), (1 << 53) + 1, -(1 << 63), (1 << 63) - 1, 0, -1, 7,
           -300, 1000, 65520, 65519, 480, 465, 464, 17]
    c = case("elementwise_convert_s64_to_float",
             "s64 to every float type with a single rounding from the exact integer (rounding\n"
             "through f64 or f32 first would turn the near-ties into ties and go to even).")
    n = len(big)
    x = c.param("s64", big)
    for target in FLOATS:
        if target == "f8e8m0fnu":
            continue  # negative and zero inputs have no value there; see the u32 case
        expected = [exact_to_type(v, target) for v in big]
        c.check(f"to_{target}", f"{target}[{n}]", f"convert({x})",
                array_text(expected, target, [n]))
    c.check("to_c64", f"c64[{n}]", f"convert({x})",
            array_text([complex(exact_to_type(v, "f32"), 0) for v in big], "c64", [n]))

    unsigned = [(1 << 64) - 1, (1 << 63) + (1 << 39) + 1, 1 << 40, 3, 0xFFFFFFFF, 1, 12,
                (1 << 24) + 1]
    c = case("elementwise_convert_u64_to_float",
             "u64 above 2^63 to f32, f64, bf16, f8e8m0fnu: rounding of the unsigned value.")
    n = len(unsigned)
    x = c.param("u64", unsigned)
    for target in ["f32", "f64", "bf16", "f16", "f8e8m0fnu"]:
        expected = [exact_to_type(v, target) if target != "f8e8m0fnu"
                    else float(np.array([float(v)], np.float64).astype(FLOATS[target])[0])
                    for v in unsigned]
        c.check(f"to_{target}", f"{target}[{n}]", f"convert({x})",
                array_text(expected, target, [n]))

    # Integers to integers: wrap; pred both ways.
    c = case("elementwise_convert_int_to_int",
             "Integer to integer converts wrap (two's complement) and sign- or zero-extend; "
             "to pred is x != 0.")
    vals = [-128, -1, 0, 1, 7, 8, 15, 16, 127, -9, -8]
    n = len(vals)
    x = c.param("s8", vals)
    for target in ["u8", "s4", "u4", "s2", "u1", "s1", "s16", "u16", "s32", "u32", "s64",
                   "u64"]:
        bits, signed = INTS[target]
        c.check(f"to_{target}", f"{target}[{n}]", f"convert({x})",
                array_text([wrap(v, bits, signed) for v in vals], target, [n]))
    c.check("to_pred", f"pred[{n}]", f"convert({x})",
            array_text([v != 0 for v in vals], "pred", [n]))
    wide = [(1 << 63) - 1, -(1 << 63), 0x123456789, -0x1234567890, 65535, 65536, -65537]
    m = len(wide)
    y = c.param("s64", wide)
    for target in ["s32", "u32", "s16", "u16", "s4", "u4", "u64"]:
        bits, signed = INTS[target]
        c.check(f"wide_to_{target}", f"{target}[{m}]", f"convert({y})",
                array_text([wrap(v, bits, signed) for v in wide], target, [m]))
    u4 = [0, 7, 8, 15]
    z = c.param("u4", u4)
    c.check("u4_to_s8", "s8[4]", f"convert({z})", array_text(u4, "s8", [4]))
    s4 = [-8, -1, 0, 7]
    w = c.param("s4", s4)
    c.check("s4_to_u32", "u32[4]", f"convert({w})",
            array_text([wrap(v, 32, False) for v in s4], "u32", [4]))
    c.check("s4_to_s64", "s64[4]", f"convert({w})", array_text(s4, "s64", [4]))

    c = case("elementwise_convert_pred",
             "pred converts to 0/1 of every type and to (1, 0) complex; floats to pred: NaN "
             "and -0.")
    x = c.param("pred", [False, True])
    for target in ["s8", "u64", "s4", "f32", "bf16", "f8e4m3fn", "f4e2m1fn", "f64"]:
        c.check(f"to_{target}", f"{target}[2]", f"convert({x})",
                array_text([0, 1], target, [2]))
    c.check("to_c128", "c128[2]", f"convert({x})",
            array_text([complex(0, 0), complex(1, 0)], "c128", [2]))
    f = c.param("f32", [-0.0, NAN, 1e-45, -INF])
    c.check("f32_to_pred", "pred[4]", f"convert({f})",
            array_text([False, True, True, True], "pred", [4]))

    # f32 to every narrow type: ties to even, overflow per type.
    for target in NARROW:
        finfo = ml_dtypes.finfo(FLOATS[target])
        maxv = float(finfo.max)
        eps = float(finfo.eps)
        tiny = float(finfo.smallest_subnormal)
        candidates = [1 + eps / 2, 1 + eps * 1.5, 1 + eps / 2 + eps / 8, 1 - eps / 4,
                      maxv, maxv * (1 + eps / 4), maxv * (1 + eps / 2), maxv * (1 + eps), 1e30,
                      -1e30, tiny / 2, tiny * 1.5, tiny * 0.75, -tiny / 2, tiny * 2.5, 0.3,
                      -0.0, INF, -INF, NAN, 3.0, 5.0, 6.5, 2.0 ** -128]
        vals = [float(np.float32(v)) for v in candidates]
        with np.errstate(all="ignore"):
            expected = [float(np.array([v], np.float32).astype(FLOATS[target])[0]) for v in vals]
        if target == "f4e2m1fn":  # NaN becomes a zero of unspecified sign there
            keep = [i for i, v in enumerate(vals) if not math.isnan(v)]
            vals = [vals[i] for i in keep]
            expected = [expected[i] for i in keep]
        n = len(vals)
        c = case(f"elementwise_convert_f32_to_{target}",
                 f"f32 to {target}: round to nearest even, subnormals, and what overflow, inf "
                 "and NaN become\n(inf, NaN or saturation by type), as ml_dtypes does.")
        x = c.param("f32", vals)
        c.check("narrow", f"{target}[{n}]", f"convert({x})", array_text(expected, target, [n]))
        back = [float(np.float32(v)) for v in expected]
        c.check("widen", f"f32[{n}]", "convert(narrow)", array_text(back, "f32", [n]))

    # f64 to narrow: one rounding from the f64 value.
    c = case("elementwise_convert_f64_to_narrow",
             "f64 to narrow types rounds once: 1 + 2^-8 + 2^-30 is above the bf16 tie, though "
             "in f32 it\nwould be exactly the tie; likewise for the other types.")
    f64_values = []
    for target in ["bf16", "f16", "f8e4m3fn", "f8e5m2", "f8e3m4", "f4e2m1fn", "f32"]:
        mant = 23 if target == "f32" else int(ml_dtypes.finfo(FLOATS[target]).nmant)
        f64_values += [1 + 2.0 ** -(mant + 1) + 2.0 ** -40, 1 + 2.0 ** -(mant + 1) - 2.0 ** -40,
                       -(1 + 2.0 ** -(mant + 1) + 2.0 ** -40)]
    f64_values += [1e300, -1e-300, NAN, 0.1, -2.5]
    n = len(f64_values)
    x = c.param("f64", f64_values)
    for target in ["bf16", "f16", "f8e4m3fn", "f8e5m2", "f8e3m4", "f32"]:
        expected = []
        for v in f64_values:
            if math.isnan(v):
                expected.append(NAN)
            elif target == "f32":
                expected.append(float(np.float32(v)))  # NumPy's f64 -> f32 rounds once
            else:
                expected.append(exact_to_type(Fraction(v), target))
        c.check(f"to_{target}", f"{target}[{n}]", f"convert({x})",
                array_text(expected, target, [n]))

    c = case("elementwise_convert_narrow_to_narrow",
             "Between narrow types: exact decode, one rounding; to complex (x, 0).")
    vals = representable([1.0, -0.3, 448.0, 57344.0, 1e-3, -0.0, INF, NAN, 0.09375, 240.0],
                         "bf16")
    n = len(vals)
    x = c.param("bf16", vals)
    for target in ["f8e4m3fn", "f8e5m2", "f16", "f8e4m3b11fnuz"]:
        with np.errstate(all="ignore"):
            expected = [float(np.array([v], np.float32).astype(FLOATS[target])[0]) for v in vals]
        c.check(f"to_{target}", f"{target}[{n}]", f"convert({x})",
                array_text(expected, target, [n]))
    c.check("to_c64", f"c64[{n}]", f"convert({x})",
            array_text([complex(v, 0) for v in vals], "c64", [n]))
    c.check("to_f64", f"f64[{n}]", f"convert({x})", array_text(vals, "f64", [n]))


def le_bytes(values, type_name):
    if type_name in ("c64", "c128"):
        dt = np.complex64 if type_name == "c64" else np.complex128
        return np.array(values, dt).tobytes()
    if type_name in FLOATS:
        return np.array(values, np.float64).astype(FLOATS[type_name]).tobytes()
    bits, _ = INTS[type_name]
    return b"".join(wrap(v, bits, False).to_bytes(bits // 8, "little") for v in values)


def from_le_bytes(data, type_name):
    if type_name in ("c64", "c128"):
        dt = np.complex64 if type_name == "c64" else np.complex128
        return list(np.frombuffer(data, dt))
    if type_name in FLOATS:
        return [float(v) for v in np.frombuffer(data, FLOATS[type_name])]
    bits, signed = INTS[type_name]
    size = bits // 8
    return [wrap(int.from_bytes(data[i:i + size], "little"), bits, signed)
            for i in range(0, len(data), size)]


def add_bitcast_convert_cases():
    c = case("elementwise_bitcast_convert_same_width",
             "bitcast-convert between types of one width keeps the bits: f32 <-> s32/u32, "
             "bf16 -> s16,\nf8 -> u8, f64 -> s64, c64 -> u64 (real part in the low half).")
    f32 = [1.0, -2.0, 0.0, -0.0, INF, 1e-45]
    x = c.param("f32", f32)
    c.check("f32_s32", "s32[6]", f"bitcast-convert({x})",
            array_text(from_le_bytes(le_bytes(f32, "f32"), "s32"), "s32", [6]))
    c.check("f32_u32", "u32[6]", f"bitcast-convert({x})",
            array_text(from_le_bytes(le_bytes(f32, "f32"), "u32"), "u32", [6]))
    ints = [0x3F800000, -0x40800000, 0x7F7FFFFF, 1]
    y = c.param("s32", ints)
    c.check("s32_f32", "f32[4]", f"bitcast-convert({y})",
            array_text(from_le_bytes(le_bytes(ints, "s32"), "f32"), "f32", [4]))
    b = representable([1.0, -1.5, 0.0078125, -INF], "bf16")
    z = c.param("bf16", b)
    c.check("bf16_s16", "s16[4]", f"bitcast-convert({z})",
            array_text(from_le_bytes(le_bytes(b, "bf16"), "s16"), "s16", [4]))
    e = representable([1.0, -448.0, 0.015625, NAN], "f8e4m3fn")
    w = c.param("f8e4m3fn", e)
    c.check("f8_u8", "u8[4]", f"bitcast-convert({w})",
            array_text(from_le_bytes(le_bytes(e, "f8e4m3fn"), "u8"), "u8", [4]))
    d = [1.0, -0.1]
    v = c.param("f64", d)
    c.check("f64_s64", "s64[2]", f"bitcast-convert({v})",
            array_text(from_le_bytes(le_bytes(d, "f64"), "s64"), "s64", [2]))
    cx = [complex(1.0, -2.0), complex(0.5, 3.0)]
    u = c.param("c64", cx)
    c.check("c64_u64", "u64[2]", f"bitcast-convert({u})",
            array_text(from_le_bytes(le_bytes(cx, "c64"), "u64"), "u64", [2]))

    c = case("elementwise_bitcast_convert_narrowing",
             "bitcast-convert to a narrower type adds a minor dimension holding the pieces, "
             "low-order first.")
    f32 = [1.0, -2.5, 3.0e-38]
    x = c.param("f32", f32, dims=[3])
    c.check("f32_u8", "u8[3,4]", f"bitcast-convert({x})",
            array_text(from_le_bytes(le_bytes(f32, "f32"), "u8"), "u8", [3, 4]))
    c.check("f32_bf16", "bf16[3,2]", f"bitcast-convert({x})",
            array_text(from_le_bytes(le_bytes(f32, "f32"), "bf16"), "bf16", [3, 2]))
    d = [1.0, -0.1]
    y = c.param("f64", d, dims=[2])
    c.check("f64_s32", "s32[2,2]", f"bitcast-convert({y})",
            array_text(from_le_bytes(le_bytes(d, "f64"), "s32"), "s32", [2, 2]))
    cx = [complex(1.0, -2.0)]
    z = c.param("c128", cx, dims=[1])
    c.check("c128_f64", "f64[1,2]", f"bitcast-convert({z})",
            array_text([1.0, -2.0], "f64", [1, 2]))
    c.check("c128_u32", "u32[1,4]", f"bitcast-convert({z})",
            array_text(from_le_bytes(le_bytes(cx, "c128"), "u32"), "u32", [1, 4]))

    c = case("elementwise_bitcast_convert_widening",
             "bitcast-convert to a wider type consumes the operand's minor dimension, its "
             "first element\nbeing the lowest-order piece.")
    raw = [0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0xC0, 0xFF]
    x = c.param("u8", raw, dims=[2, 4])
    c.check("u8_f32", "f32[2]", f"bitcast-convert({x})",
            array_text(from_le_bytes(bytes(raw), "f32"), "f32", [2]))
    c.check("u8_s32", "s32[2]", f"bitcast-convert({x})",
            array_text(from_le_bytes(bytes(raw), "s32"), "s32", [2]))
    halves = [0x1234, -0x8000, 0x7FFF, 0x0001]
    y = c.param("s16", halves, dims=[1, 4])
    c.check("s16_u64", "u64[1]", f"bitcast-convert({y})",
            array_text(from_le_bytes(le_bytes(halves, "s16"), "u64"), "u64", [1]))
    parts = [1.0, -2.0]
    z = c.param("f32", parts, dims=[2])
    c.check("f32_c64", "c64[]", f"bitcast-convert({z})", scalar_text(complex(1.0, -2.0), "c64"))

    # Sub-byte types: the value's own bits, packed low-order first.
    c = case("elementwise_bitcast_convert_sub_byte",
             "bitcast-convert of sub-byte types works on the values' bits: s4 <-> u4 and "
             "f4e2m1fn,\nu8 -> s4[2] (low nibble first), s4[2] -> s8, u8 -> u2[4], s2[4] -> u8.")
    s4 = [-8, -1, 0, 7, 5, -3]
    x = c.param("s4", s4)
    c.check("s4_u4", "u4[6]", f"bitcast-convert({x})",
            array_text([v & 0xF for v in s4], "u4", [6]))
    f4_of = {0: 0.0, 1: 0.5, 2: 1.0, 3: 1.5, 4: 2.0, 5: 3.0, 6: 4.0, 7: 6.0}

    def f4(bits):
        v = f4_of[bits & 7]
        return -v if bits & 8 else v

    c.check("s4_f4", "f4e2m1fn[6]", f"bitcast-convert({x})",
            array_text([f4(v & 0xF) for v in s4], "f4e2m1fn", [6]))
    u8 = [0x00, 0xFF, 0x8F, 0x7A, 0x18]
    y = c.param("u8", u8)
    c.check("u8_s4", "s4[5,2]", f"bitcast-convert({y})",
            array_text([wrap(v >> s, 4, True) for v in u8 for s in (0, 4)], "s4", [5, 2]))
    c.check("u8_u2", "u2[5,4]", f"bitcast-convert({y})",
            array_text([(v >> s) & 3 for v in u8 for s in (0, 2, 4, 6)], "u2", [5, 4]))
    pairs = [[1, -1], [-8, 7], [0, -2]]
    z = c.param("s4", [v for p in pairs for v in p], dims=[3, 2])
    c.check("s4_s8", "s8[3]", f"bitcast-convert({z})",
            array_text([wrap((lo & 0xF) | (hi & 0xF) << 4, 8, True) for lo, hi in pairs], "s8",
                       [3]))
    quads = [[1, -1, 0, -2], [-2, 1, 1, 0]]
    w = c.param("s2", [v for q in quads for v in q], dims=[2, 4])
    c.check("s2_u8", "u8[2]", f"bitcast-convert({w})",
            array_text([sum((v & 3) << (2 * i) for i, v in enumerate(q)) for q in quads], "u8",
                       [2]))
    bits = [1, 0, 0, 1]
    v = c.param("u1", bits, dims=[1, 4])
    c.check("u1_u4", "u4[1]", f"bitcast-convert({v})", array_text([9], "u4", [1]))
