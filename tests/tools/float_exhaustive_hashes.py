#!/usr/bin/env python3
"""Hashes ml_dtypes' encoding of every f32 bit pattern in chosen 2^26-pattern chunks
(manual check, minutes per chunk; not part of ctest).

    python tests/tools/float_exhaustive_hashes.py hashes.txt [chunk ...]
    TILESMITH_FLOAT_HASHES=hashes.txt hlo_test --gtest_filter=FloatExhaustiveTest.*

Chunk c holds the bit patterns [c * 2^26, (c + 1) * 2^26): eight f32 exponents of one
sign. The default chunks cover f32 subnormals, the exponents of the f8 types, inf/NaN,
for both signs. Each line is "c h_bf16 h_f16 ..." in the column order of TYPES, where
h = sum over the chunk of (encoded + 1) * (pattern * 0x9E3779B97F4A7C15 | 1) mod 2^64.
"""

import sys

import ml_dtypes
import numpy as np

TYPES = [
    ("bf16", ml_dtypes.bfloat16, np.uint16), ("f16", np.float16, np.uint16),
    ("f8e5m2", ml_dtypes.float8_e5m2, np.uint8), ("f8e4m3", ml_dtypes.float8_e4m3, np.uint8),
    ("f8e4m3fn", ml_dtypes.float8_e4m3fn, np.uint8),
    ("f8e4m3b11fnuz", ml_dtypes.float8_e4m3b11fnuz, np.uint8),
    ("f8e3m4", ml_dtypes.float8_e3m4, np.uint8),
    ("f8e5m2fnuz", ml_dtypes.float8_e5m2fnuz, np.uint8),
    ("f8e4m3fnuz", ml_dtypes.float8_e4m3fnuz, np.uint8),
    ("f4e2m1fn", ml_dtypes.float4_e2m1fn, np.uint8),
    ("f8e8m0fnu", ml_dtypes.float8_e8m0fnu, np.uint8),
]
CHUNK = 1 << 26
DEFAULT_CHUNKS = [0, 1, 12, 13, 14, 15, 16, 17, 31, 32, 33, 44, 45, 46, 47, 48, 49, 63]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    chunks = [int(c) for c in sys.argv[2:]] or DEFAULT_CHUNKS
    np.seterr(all="ignore")
    with open(sys.argv[1], "w") as out:
        out.write("# " + " ".join(name for name, _, _ in TYPES) + "\n")
        for c in chunks:
            patterns = np.arange(c * CHUNK, (c + 1) * CHUNK, dtype=np.uint64)
            weights = (patterns * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
            values = patterns.astype(np.uint32).view(np.float32)
            hashes = []
            for name, dtype, carrier in TYPES:
                encoded = values.astype(dtype).view(carrier).astype(np.uint64)
                if name == "f4e2m1fn":
                    encoded &= np.uint64(0xF)
                hashes.append(int(np.sum((encoded + np.uint64(1)) * weights, dtype=np.uint64)))
            out.write(f"{c} " + " ".join(f"{h:016x}" for h in hashes) + "\n")
            out.flush()
            print(f"chunk {c} done", file=sys.stderr)


if __name__ == "__main__":
    main()
