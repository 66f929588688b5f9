"""Integer and pred cases: the HLO integer rules on Python integers."""

import random

from eval_elementwise.common import (
    INTS, array_text, case, in_range, int_edges, shape_text, wrap)


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def int_binary(op, a, b, bits, signed):
    amount = b & ((1 << bits) - 1)  # shift amounts read as unsigned
    if op == "add":
        r = a + b
    elif op == "subtract":
        r = a - b
    elif op == "multiply":
        r = a * b
    elif op == "divide":
        r = -1 if b == 0 else trunc_div(a, b)
    elif op == "remainder":
        r = a if b == 0 else a - b * trunc_div(a, b)
    elif op == "maximum":
        r = max(a, b)
    elif op == "minimum":
        r = min(a, b)
    elif op == "and":
        r = a & b
    elif op == "or":
        r = a | b
    elif op == "xor":
        r = a ^ b
    elif op == "shift-left":
        r = 0 if amount >= bits else a << amount
    elif op == "shift-right-logical":
        r = 0 if amount >= bits else (a & ((1 << bits) - 1)) >> amount
    elif op == "shift-right-arithmetic":
        r = wrap(a, bits, True) >> min(amount, bits - 1)
    elif op == "power":
        if b < 0:
            r = 1 if a == 1 else 0  # XLA: base -1 gives 0 as well
        else:
            r = pow(a, b, 1 << bits)
    else:
        raise ValueError(op)
    return wrap(r, bits, signed)


def int_unary(op, a, bits, signed):
    mask = (1 << bits) - 1
    r = {
        "negate": lambda: -a,
        "abs": lambda: abs(a),
        "sign": lambda: (a > 0) - (a < 0),
        "not": lambda: ~a,
        "popcnt": lambda: bin(a & mask).count("1"),
        "clz": lambda: bits - (a & mask).bit_length(),
    }[op]()
    return wrap(r, bits, signed)


def int_operand_pairs(type_name):
    """Pairs (a, b) covering the edges: min, max, 0, ±1, small values, min / -1."""
    bits, signed = INTS[type_name]
    edges, lo, hi = int_edges(type_name)
    rng = random.Random(bits * 2 + signed)
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(rng.randint(lo, hi), rng.randint(lo, hi)) for _ in range(12)]
    small = [v for v in (-3, -2, 2, 3, 5, 7) if lo <= v <= hi]
    pairs += [(a, b) for a in small for b in small]
    return pairs


def add_integer_cases():
    binary_arith = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                    "power"]
    for type_name, (bits, signed) in INTS.items():
        pairs = int_operand_pairs(type_name)
        n = len(pairs)
        rules = ("x / 0 = -1, x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0;\nnegative powers "
                 "give 1 for base 1, else 0 (XLA)." if signed else "x / 0 = all ones, x % 0 = x.")
        c = case(f"elementwise_int_arith_{type_name}",
                 f"{type_name} arithmetic wraps at {bits} bits; {rules}")
        a = c.param(type_name, [p[0] for p in pairs])
        b = c.param(type_name, [p[1] for p in pairs])
        shape = shape_text(type_name, [n])
        for op in binary_arith:
            expected = [int_binary(op, x, y, bits, signed) for x, y in pairs]
            c.check(op.replace("-", "_"), shape, f"{op}({a}, {b})",
                    array_text(expected, type_name, [n]))

        # Shifts: every amount from -1 (huge unsigned) to past the width.
        edges, lo, hi = int_edges(type_name)
        amounts = sorted({a for a in (0, 1, bits - 1, bits, bits + 1, 2 * bits - 1, -1,
                                      lo, hi) if lo <= a <= hi})
        values = sorted(set(edges) | in_range({-5, 5, 3}, lo, hi))
        shift_pairs = [(v, s) for v in values for s in amounts]
        m = len(shift_pairs)
        c = case(f"elementwise_int_shift_{type_name}",
                 f"{type_name} shifts: amounts read as unsigned; >= {bits} gives 0 (left, "
                 "logical)\nor the sign fill (arithmetic).")
        a = c.param(type_name, [p[0] for p in shift_pairs])
        b = c.param(type_name, [p[1] for p in shift_pairs])
        shape = shape_text(type_name, [m])
        for op in ["shift-left", "shift-right-logical", "shift-right-arithmetic"]:
            expected = [int_binary(op, x, y, bits, signed) for x, y in shift_pairs]
            c.check(op.replace("-", "_"), shape, f"{op}({a}, {b})",
                    array_text(expected, type_name, [m]))

        c = case(f"elementwise_int_bitwise_{type_name}",
                 f"{type_name} unary and bitwise ops: abs(MIN) = MIN, popcnt and clz over "
                 f"{bits} bits,\nnot is bitwise.")
        values = sorted(set(edges) | in_range({-6, 6, 3, 9, 100}, lo, hi))
        k = len(values)
        x = c.param(type_name, values)
        y = c.param(type_name, list(reversed(values)))
        shape = shape_text(type_name, [k])
        for op in ["negate", "abs", "sign", "not", "popcnt", "clz"]:
            expected = [int_unary(op, v, bits, signed) for v in values]
            c.check(op, shape, f"{op}({x})", array_text(expected, type_name, [k]))
        for op in ["and", "or", "xor"]:
            expected = [int_binary(op, v, w, bits, signed)
                        for v, w in zip(values, reversed(values))]
            c.check(op + "_", shape, f"{op}({x}, {y})", array_text(expected, type_name, [k]))


def add_pred_cases():
    a = [False, False, True, True]
    b = [False, True, False, True]
    c = case("elementwise_pred_logic", "pred: and, or, xor, not are logical; compare orders "
             "false < true; select and clamp.")
    pa = c.param("pred", a)
    pb = c.param("pred", b)
    s = "pred[4]"
    c.check("and_", s, f"and({pa}, {pb})", array_text([x and y for x, y in zip(a, b)], "pred", [4]))
    c.check("or_", s, f"or({pa}, {pb})", array_text([x or y for x, y in zip(a, b)], "pred", [4]))
    c.check("xor_", s, f"xor({pa}, {pb})", array_text([x != y for x, y in zip(a, b)], "pred", [4]))
    c.check("not_", s, f"not({pa})", array_text([not x for x in a], "pred", [4]))
    c.check("lt", s, f"compare({pa}, {pb}), direction=LT",
            array_text([x < y for x, y in zip(a, b)], "pred", [4]))
    c.check("ge", s, f"compare({pa}, {pb}), direction=GE",
            array_text([x >= y for x, y in zip(a, b)], "pred", [4]))
    c.check("sel", s, f"select({pa}, {pb}, {pa})",
            array_text([y if x else x for x, y in zip(a, b)], "pred", [4]))
