"""Formats numpy arrays as HLO literal text and writes evaluator data cases."""
import os
import numpy as np
import ml_dtypes

# The repository's tests/data/eval, unless __main__.py was given another folder.
OUT = os.environ.get(
    "TILESMITH_EVAL_OUT",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "eval"))


def scalar_text(x, dtype):
    if dtype == np.bool_:
        return "true" if x else "false"
    if np.issubdtype(dtype, np.complexfloating):
        return "(%s, %s)" % (scalar_text(x.real, np.float64), scalar_text(x.imag, np.float64))
    if np.issubdtype(dtype, np.integer):
        return str(int(x))
    v = float(x)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    if dtype == np.float32:
        t = np.format_float_positional(np.float32(x), unique=True, trim="-")
    else:
        t = repr(v)
    if v == 0 and np.signbit(v):
        return "-0"
    if t.endswith(".0"):
        t = t[:-2]
    return t


def lit(a):
    if isinstance(a, tuple):
        return "(" + ", ".join(lit(x) for x in a) + ")"
    a = np.asarray(a)
    if a.ndim == 0:
        return scalar_text(a[()], a.dtype)

    def rec(x):
        if x.ndim == 1:
            return "{" + ", ".join(scalar_text(v, a.dtype) for v in x) + "}"
        return "{" + ", ".join(rec(s) for s in x) + "}"

    return rec(a)


def write(name, comment, hlo, args, expect, tolerance=None):
    lines = ["// " + c for c in comment.strip().split("\n")]
    text = "\n".join(lines) + "\n" + hlo.strip() + "\n"
    for i, a in enumerate(args):
        text += "// ARG %d: %s\n" % (i, lit(a))
    text += "// EXPECT: %s\n" % lit(expect)
    if tolerance is not None:
        text += "// TOLERANCE: %g\n" % tolerance
    with open(os.path.join(OUT, name + ".hlo"), "w") as f:
        f.write(text)
