#!/usr/bin/env python3
"""Writes tests/data/float_golden.txt: ml_dtypes' answers for the narrow float codecs.

ml_dtypes is what XLA uses for these types, so its bit patterns are the reference for
tests/hlo/float_types_test.cc. Run with a Python that has numpy and ml_dtypes:

    python tests/tools/gen_float_golden.py [output_path]

File format (text, '#' starts a comment line):
  decode <type> <count>      then <count> f32 bit patterns in hex, 8 per line: the value
                             of every bit pattern 0..count-1 of <type>.
  decode_sample <type> <n>   16-bit types: <n> lines "<bits> <f32 bits>" for a sample.
  decode_fnv <type> <hash>   16-bit types: FNV-1a 64 over the little-endian f32 bits of
                             the decoded value of every pattern, NaNs as 0x7fc00000.
  encode <n> <type>...       then <n> lines: an f32 input's bits, then its encoding in
                             each listed type, all in hex.
"""

import struct
import sys

import ml_dtypes
import numpy as np

# HLO name -> numpy dtype, in the column order of the encode table.
TYPES = [
    ("bf16", ml_dtypes.bfloat16),
    ("f16", np.float16),
    ("f8e5m2", ml_dtypes.float8_e5m2),
    ("f8e4m3", ml_dtypes.float8_e4m3),
    ("f8e4m3fn", ml_dtypes.float8_e4m3fn),
    ("f8e4m3b11fnuz", ml_dtypes.float8_e4m3b11fnuz),
    ("f8e3m4", ml_dtypes.float8_e3m4),
    ("f8e5m2fnuz", ml_dtypes.float8_e5m2fnuz),
    ("f8e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
    ("f4e2m1fn", ml_dtypes.float4_e2m1fn),
    ("f8e8m0fnu", ml_dtypes.float8_e8m0fnu),
]
BITS = {"bf16": 16, "f16": 16, "f4e2m1fn": 4}
CANONICAL_NAN = 0x7FC00000


def width(name):
    return BITS.get(name, 8)


def carrier(name):
    return np.uint16 if width(name) == 16 else np.uint8


def decode_all(name, dtype, count):
    """f32 bits of the value of each bit pattern 0..count-1."""
    patterns = np.arange(count, dtype=np.uint32).astype(carrier(name))
    with np.errstate(invalid="ignore"):
        return patterns.view(dtype).astype(np.float32).view(np.uint32)


def encode(dtype, name, f32_bits):
    values = np.asarray(f32_bits, dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        encoded = values.astype(dtype).view(carrier(name)).astype(np.uint32)
    # float4 values live in a byte; keep only the 4 meaningful bits.
    return encoded & ((1 << width(name)) - 1)


def f32(x):
    """Bits of x rounded to f32 (inf when out of range)."""
    with np.errstate(over="ignore"):
        return int(np.array([x], dtype=np.float64).astype(np.float32).view(np.uint32)[0])


def next_up(bits):
    v = np.array([bits], dtype=np.uint32).view(np.float32)
    return int(np.nextafter(v, np.float32(np.inf)).view(np.uint32)[0])


def next_down(bits):
    v = np.array([bits], dtype=np.uint32).view(np.float32)
    return int(np.nextafter(v, np.float32(-np.inf)).view(np.uint32)[0])


def finite_sorted_values(name, dtype):
    """Non-negative finite values of a type, ascending, as Python floats."""
    count = 1 << width(name)
    with np.errstate(invalid="ignore"):
        values = decode_all(name, dtype, count).view(np.float32).astype(np.float64)
    finite = sorted(set(float(v) for v in values[np.isfinite(values)] if v >= 0))
    return finite


def boundary_inputs(name, dtype, rng, dense):
    """Values of the type, ties between neighbours and the f32 values either side."""
    values = finite_sorted_values(name, dtype)
    if not dense:
        # 16-bit types: every value is too many; keep the ends and a random sample.
        keep = set(range(0, 16)) | set(range(len(values) - 16, len(values)))
        keep |= set(int(i) for i in rng.integers(0, len(values), 60))
        binade = 1 << (10 if name == "f16" else 7)
        for start in rng.choice(np.arange(binade, len(values), binade), 16, replace=False):
            keep |= {int(start) - 1, int(start)}
        values_kept = [values[i] for i in sorted(keep) if 0 <= i < len(values)]
    else:
        values_kept = values
    inputs = set()
    for v in values_kept:
        inputs.add(f32(v))
    pairs = list(zip(values, values[1:]))
    if not dense:
        pairs = [(a, b) for (a, b) in pairs if a in set(values_kept)]
    for a, b in pairs:
        tie = f32((a + b) / 2)
        inputs.add(tie)
        if dense is False or rng.random() < 0.2 or a == values[0] or b == values[-1]:
            inputs.add(next_up(tie))
            inputs.add(next_down(tie))
    # Beyond the largest value: its tie with the next (missing) value and neighbours.
    top, below = values[-1], values[-2]
    ulp = top - below
    for beyond in (top + ulp / 2, top + ulp, top * 2):
        b = f32(beyond)
        inputs |= {b, next_up(b), next_down(b)}
    # Half the smallest positive value: ties to zero (or to the smallest value).
    smallest = values[1] if values[0] == 0 else values[0]
    for below_smallest in (smallest / 2, smallest / 4, smallest * 0.75):
        b = f32(below_smallest)
        inputs |= {b, next_up(b), next_down(b)}
    return inputs


def encode_inputs():
    rng = np.random.default_rng(20240611)
    inputs = set()
    specials = [
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000,  # zeros, infinities
        0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,  # quiet / signalling NaNs
        0x7FFFFFFF, 0xFFFFFFFF, 0x7FA00000, 0x7FC00001, 0x7FE00000, 0xFF801000,
        0x7F802000, 0x7F801FFF, 0xFFBFFFFF, 0x7FD55555,  # NaN payloads
        0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
        0x3F800000, 0xBF800000, 0x3FC00000, 0x40400000, 0x40C00000, 0x3F000000,
    ]
    inputs.update(specials)
    for name, dtype in TYPES:
        inputs |= boundary_inputs(name, dtype, rng, dense=width(name) <= 8)
    # Mirror a random half of the non-negative inputs to negative.
    mirrored = {b ^ 0x80000000 for b in inputs if rng.random() < 0.3}
    inputs |= mirrored
    # Random bit patterns (all magnitudes) and log-uniform values near the narrow ranges.
    inputs |= set(int(b) for b in rng.integers(0, 1 << 32, 500, dtype=np.uint64))
    magnitudes = np.exp2(rng.uniform(-140, 20, 700)).astype(np.float32)
    signs = np.where(rng.random(700) < 0.5, -1, 1).astype(np.float32)
    inputs |= set(int(b) for b in (magnitudes * signs).view(np.uint32))
    return sorted(inputs)


def fnv1a64(words):
    h = 0xCBF29CE484222325
    for word in words:
        for byte in struct.pack("<I", int(word)):
            h ^= byte
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/float_golden.txt"
    lines = [
        "# Narrow float golden data from ml_dtypes " + ml_dtypes.__version__ +
        " / numpy " + np.__version__ + "; written by tests/tools/gen_float_golden.py.",
        "# Do not edit by hand; the generator documents the format.",
    ]
    for name, dtype in TYPES:
        count = 1 << width(name)
        decoded = decode_all(name, dtype, count)
        if count <= 256:
            lines.append(f"decode {name} {count}")
            for start in range(0, count, 8):
                lines.append(" ".join(f"{int(v):08x}" for v in decoded[start:start + 8]))
            continue
        is_nan = np.isnan(decoded.view(np.float32))
        canonical = np.where(is_nan, np.uint32(CANONICAL_NAN), decoded)
        lines.append(f"decode_fnv {name} {fnv1a64(canonical):016x}")
        sample = sorted(set(range(0, count, 127)) | set(range(0, 34)) |
                        {b ^ s for b in (0x3FF, 0x400, 0x401, 0x7BFF, 0x7C00, 0x7C01, 0x7E00,
                                         0x7F7F, 0x7F80, 0x7F81, 0x7FC0, 0x7FFF, 0x0080, 0x007F)
                         for s in (0, 0x8000)})
        lines.append(f"decode_sample {name} {len(sample)}")
        lines.extend(f"{b:04x} {int(decoded[b]):08x}" for b in sample)

    inputs = encode_inputs()
    columns = [encode(dtype, name, inputs) for name, dtype in TYPES]
    lines.append(f"encode {len(inputs)} " + " ".join(name for name, _ in TYPES))
    for row, bits in enumerate(inputs):
        fields = [f"{bits:08x}"]
        for (name, _), column in zip(TYPES, columns):
            fields.append(f"{int(column[row]):0{width(name) // 4}x}")
        lines.append(" ".join(fields))
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out_path}: {len(inputs)} encode inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
