#!/usr/bin/env python3
"""Writes the elementwise evaluator's data cases into tests/data/eval/ (elementwise_*.hlo).

The expected values come from an implementation independent of the C++ evaluator: the
HLO integer rules written out on Python integers, NumPy in the computing type (f32 for
the narrow types, f64 for f64), ml_dtypes for rounding to the narrow types, and exact
rational arithmetic where a single rounding from a wide value matters. Run with a Python
that has numpy and ml_dtypes, then review the diff:

    python tests/tools/gen_eval_elementwise.py [output_dir]

Each case is a module whose parameters come from `// ARG` lines and whose root (a tuple
when several ops are checked together) is compared with `// EXPECT`. Transcendental ops
are checked with a relative `// TOLERANCE`, since the C library and NumPy may differ in
the last bit; everything else is bit-exact. The families live in eval_elementwise/.
"""

import os
import sys

from eval_elementwise import convert_cases, float_cases, int_cases, other_cases
from eval_elementwise.common import CASES

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "eval")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else OUT_DIR
    int_cases.add_integer_cases()
    int_cases.add_pred_cases()
    float_cases.add_float_cases()
    float_cases.add_transcendental_cases()
    float_cases.add_compare_cases()
    convert_cases.add_convert_cases()
    convert_cases.add_bitcast_convert_cases()
    other_cases.add_reduce_precision_cases()
    other_cases.add_complex_cases()
    other_cases.add_misc_cases()
    for case in CASES:
        with open(os.path.join(out_dir, case.name + ".hlo"), "w") as f:
            f.write(case.render())
    print(f"wrote {len(CASES)} cases to {os.path.normpath(out_dir)}")


if __name__ == "__main__":
    main()
