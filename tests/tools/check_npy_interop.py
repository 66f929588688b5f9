#!/usr/bin/env python3
"""Checks tilesmith's .npy reader and writer against NumPy (manual; not part of ctest).

    python tests/tools/check_npy_interop.py path/to/hlo_test

Writes arrays with numpy.save (C and Fortran order, 0-d, zero-sized, every dtype the
mapping in compiler/hlo/npy.h names, ml_dtypes types as raw-bit carriers) and a manifest,
runs the NpyInteropTest in hlo_test to read each file with its expected HLO shape and write
it back, then checks every written file loads to the same values and is byte-identical to
numpy.save of the C-ordered array. Exits non-zero on any difference.
"""

import io
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np


def cases(rng):
    """(name, HLO type, array numpy writes, array tilesmith should write back) tuples."""
    out = []

    def add(name, hlo_type, array, written=None):
        # copy(order="C"), not ascontiguousarray, which turns 0-d arrays into 1-d ones.
        expected = array if written is None else written
        out.append((name, hlo_type, array, expected.copy(order="C")))

    for hlo_type, dtype in [("pred", np.bool_), ("s8", np.int8), ("s16", np.int16),
                            ("s32", np.int32), ("s64", np.int64), ("u8", np.uint8),
                            ("u16", np.uint16), ("u32", np.uint32), ("u64", np.uint64),
                            ("f16", np.float16), ("f32", np.float32), ("f64", np.float64),
                            ("c64", np.complex64), ("c128", np.complex128)]:
        raw = rng.integers(0, 256, size=2 * 3 * 4 * np.dtype(dtype).itemsize, dtype=np.uint8)
        array = raw.view(dtype).reshape(2, 3, 4) if dtype != np.bool_ else raw.reshape(
            2, 3, 4 * 1) % 2 == 1
        add(f"{hlo_type}_c", hlo_type, array)
        add(f"{hlo_type}_f", hlo_type, np.asfortranarray(array))
        add(f"{hlo_type}_0d", hlo_type, array.reshape(-1)[0].reshape(()))
        add(f"{hlo_type}_empty", hlo_type, array.reshape(-1)[:0].reshape(0, 3))
    # Types NumPy lacks travel as raw bits (or values, for the sub-byte integers).
    bf16 = rng.standard_normal((5, 7)).astype(ml_dtypes.bfloat16)
    add("bf16_bits", "bf16", bf16.view(np.uint16))
    add("bf16_bits_f", "bf16", np.asfortranarray(bf16.view(np.uint16)))
    # A type NumPy has, read from its raw-bits carrier, is written back as itself.
    f32 = rng.standard_normal((3, 3)).astype(np.float32)
    add("f32_bits", "f32", f32.view(np.uint32), f32)
    for hlo_type, dtype in [("f8e4m3fn", ml_dtypes.float8_e4m3fn),
                            ("f8e5m2", ml_dtypes.float8_e5m2),
                            ("f8e8m0fnu", ml_dtypes.float8_e8m0fnu)]:
        values = np.abs(rng.standard_normal((4, 6))).astype(dtype)
        add(f"{hlo_type}_bits", hlo_type, values.view(np.uint8))
    f4 = rng.standard_normal(9).astype(ml_dtypes.float4_e2m1fn)
    add("f4e2m1fn_bits", "f4e2m1fn", f4.view(np.uint8) & 0x0F)
    add("s4_values", "s4", rng.integers(-8, 8, (3, 5)).astype(np.int8))
    add("s2_values", "s2", rng.integers(-2, 2, (7,)).astype(np.int8))
    add("u4_values", "u4", rng.integers(0, 16, (2, 2, 2)).astype(np.uint8))
    add("u1_values", "u1", rng.integers(0, 2, (6,)).astype(np.uint8))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    rng = np.random.default_rng(4)
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        all_cases = cases(rng)
        with open(os.path.join(work, "manifest.txt"), "w") as manifest:
            for name, hlo_type, array, _ in all_cases:
                np.save(os.path.join(work, f"np_{name}.npy"), array)
                dims = ",".join(str(d) for d in array.shape) or "-"
                manifest.write(f"{name} {hlo_type} {dims}\n")
        env = dict(os.environ, TILESMITH_NPY_INTEROP_DIR=work)
        result = subprocess.run([binary, "--gtest_filter=NpyInteropTest.*"], env=env,
                                capture_output=True, text=True)
        if result.returncode != 0 or "[  PASSED  ] 1 test" not in result.stdout:
            print(result.stdout[-3000:], result.stderr[-3000:])
            sys.exit("hlo_test NpyInteropTest failed")
        for name, _, _, expected in all_cases:
            path = os.path.join(work, f"ts_{name}.npy")
            loaded = np.load(path)
            with open(path, "rb") as f:
                ours = f.read()
            reference = io.BytesIO()
            np.save(reference, expected)
            same_values = (loaded.dtype == expected.dtype and loaded.shape == expected.shape and
                           loaded.tobytes() == expected.tobytes())
            if not same_values or ours != reference.getvalue():
                failures += 1
                print(f"MISMATCH {name}: values {'ok' if same_values else 'differ'}, "
                      f"bytes {'ok' if ours == reference.getvalue() else 'differ'}")
        print(f"{len(all_cases)} cases, {failures} mismatches")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
