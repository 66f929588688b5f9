"""Evaluator data cases: reduce and reduce-window. reduce-window follows XLA: padding and
base-dilation holes are skipped, not filled with the init value.

Run by __main__.py; each case is written by a `write` call."""
import itertools
import numpy as np
import ml_dtypes
from hlolit import write

f32 = np.float32
bf16 = ml_dtypes.bfloat16

ADD_F32 = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

x = np.arange(24, dtype=f32).reshape(2, 3, 4) - 5
write("reduce_add_dims_0_2", "reduce f32[2,3,4] over dimensions {0,2} with add.", ADD_F32 + """
ENTRY e {
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0.5)
  ROOT r = f32[3] reduce(p, z), dimensions={0,2}, to_apply=add
}""", [x], x.sum(axis=(0, 2)) + f32(0.5))

x = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * 3 - 20
write("reduce_max_s32_dim_1_layout", "reduce s32[2,3,4] with a column-major layout over dimension 1 with maximum (operands swapped).", """
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(b, a)
}

ENTRY e {
  p = s32[2,3,4]{0,1,2} parameter(0)
  lo = s32[] constant(-2147483648)
  ROOT r = s32[2,4]{0,1} reduce(p, lo), dimensions={1}, to_apply=max
}""", [x], x.max(axis=1))

v = np.array([[3, 7, 7, 1], [-1, -5, 2, 2]], dtype=f32)
idx = np.broadcast_to(np.arange(4, dtype=np.int32), (2, 4))
write("reduce_argmax_variadic", """variadic reduce computing (max value, first index of it) per row: the reducer takes
(acc value, acc index, value, index) and returns a tuple; ties keep the smaller index.""", """
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}

ENTRY e {
  p = f32[2,4] parameter(0)
  i = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  z = s32[] constant(-1)
  ROOT r = (f32[2], s32[2]) reduce(p, i, ninf, z), dimensions={1}, to_apply=argmax
}""", [v], (np.array([7, 2], f32), np.array([1, 2], np.int32)))

x = np.array([[256, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 256]], dtype=bf16)
write("reduce_bf16_rounds_every_step", """bf16 add reduction rounds after every step: 256 + 1 rounds back to 256 (ties to even), so
the first row stays 256 while the second reaches 5 + 256 = 261 -> 260. Exact sums would give 260 for both.""", """
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}

ENTRY e {
  p = bf16[2,6] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[2] reduce(p, z), dimensions={1}, to_apply=add
}""", [x], np.array([256, 260], dtype=bf16))

write("reduce_s32_wraps", "s32 add reduction wraps around: 2147483647 + 1 + 5 = -2147483643; u8 product wraps mod 256.", """
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

mul {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT s = u8[] multiply(a, b)
}

ENTRY e {
  p = s32[3] parameter(0)
  q = u8[3] parameter(1)
  z = s32[] constant(0)
  one = u8[] constant(1)
  r0 = s32[] reduce(p, z), dimensions={0}, to_apply=add
  r1 = u8[] reduce(q, one), dimensions={0}, to_apply=mul
  ROOT t = (s32[], u8[]) tuple(r0, r1)
}""", [np.array([2147483647, 1, 5], np.int32), np.array([16, 17, 3], np.uint8)],
      (np.array(-2147483643, np.int32), np.array((16 * 17 * 3) % 256, np.uint8)))

x = np.array([[False, False, True], [False, False, False]])
write("reduce_pred_or_and", "pred reductions: or over dimension 1, and over dimension 0.", """
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] or(a, b)
}

and {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] and(a, b)
}

ENTRY e {
  p = pred[2,3] parameter(0)
  f = pred[] constant(false)
  t = pred[] constant(true)
  r0 = pred[2] reduce(p, f), dimensions={1}, to_apply=or
  q = pred[2,3] constant({{true, false, true}, {true, true, true}})
  r1 = pred[3] reduce(q, t), dimensions={0}, to_apply=and
  ROOT r = (pred[2], pred[3]) tuple(r0, r1)
}""", [x], (np.array([True, False]), np.array([True, False, True])))

x = np.array([[1, np.nan, 3], [-0.0, 0.0, -1], [0.0, -0.0, -1]], dtype=f32)
write("reduce_max_min_nan_signed_zero", """maximum propagates NaN, and +0 is above -0 whatever the order; minimum picks -0.""", """
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b)
}

ENTRY e {
  p = f32[3,3] parameter(0)
  lo = f32[] constant(-inf)
  hi = f32[] constant(inf)
  r0 = f32[3] reduce(p, lo), dimensions={1}, to_apply=max
  q = f32[3,2] slice(p), slice={[0:3], [0:2]}
  r1 = f32[3] reduce(q, hi), dimensions={1}, to_apply=min
  ROOT r = (f32[3], f32[3]) tuple(r0, r1)
}""", [x], (np.array([np.nan, 0.0, 0.0], f32), np.array([np.nan, -0.0, -0.0], f32)))

write("reduce_non_commutative_order", """a reducer that is not commutative shows the order: acc = acc - x from 100 over {1, 2, 3}
gives 94; acc = x - acc from 0 gives 1, 1, 2.""", """
sub_acc_x {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] subtract(a, b)
}

sub_x_acc {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] subtract(b, a)
}

ENTRY e {
  p = s32[3] parameter(0)
  h = s32[] constant(100)
  z = s32[] constant(0)
  r0 = s32[] reduce(p, h), dimensions={0}, to_apply=sub_acc_x
  r1 = s32[] reduce(p, z), dimensions={0}, to_apply=sub_x_acc
  ROOT r = (s32[], s32[]) tuple(r0, r1)
}""", [np.array([1, 2, 3], np.int32)], (np.array(94, np.int32), np.array(2, np.int32)))

x = (np.arange(2 * 3 * 2, dtype=np.complex64) + 1j * np.arange(12)[::-1]).reshape(2, 3, 2).astype(np.complex64)
write("reduce_c64_multiply_all", "reduce of c64 with multiply to a scalar.", """
mul {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT m = c64[] multiply(a, b)
}

ENTRY e {
  p = c64[2,3] parameter(0)
  one = c64[] constant((1, 0))
  ROOT r = c64[] reduce(p, one), dimensions={0,1}, to_apply=mul
}""", [np.array([[1 + 1j, 2, 1j], [0.5, -1, 1 - 1j]], np.complex64)],
      np.array(np.prod(np.array([1 + 1j, 2, 1j, 0.5, -1, 1 - 1j], np.complex128)), np.complex64))

x = np.arange(2 * 3 * 4, dtype=np.float16).reshape(2, 3, 4)
write("reduce_f16_keep_outer_inner", "reduce f16[2,3,4] over the middle dimension: output keeps dims 0 and 2.", """
add {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}

ENTRY e {
  p = f16[2,3,4] parameter(0)
  z = f16[] constant(0)
  ROOT r = f16[2,4] reduce(p, z), dimensions={1}, to_apply=add
}""", [x], x.astype(np.float32).sum(axis=1).astype(np.float16))

# f8 sums with per-step rounding: compute reference step by step.
vals = np.array([1.0, 0.0625, 0.0625, 0.0625, 0.0625], dtype=np.float32)
acc = np.float32(0)
for v in vals:
    acc = np.float32(np.float32(acc + v).astype(ml_dtypes.float8_e4m3fn))
write("reduce_f8e4m3fn_rounds_every_step", """f8e4m3fn add reduction: 1 + 0.0625 rounds back to 1 (3 mantissa bits, tie to even) at every
step, so the result is 1 although the exact sum is 1.25.""", """
add {
  a = f8e4m3fn[] parameter(0)
  b = f8e4m3fn[] parameter(1)
  ROOT s = f8e4m3fn[] add(a, b)
}

ENTRY e {
  p = f8e4m3fn[5] parameter(0)
  z = f8e4m3fn[] constant(0)
  ROOT r = f8e4m3fn[] reduce(p, z), dimensions={0}, to_apply=add
}""", [vals.astype(ml_dtypes.float8_e4m3fn)], np.array(acc, dtype=ml_dtypes.float8_e4m3fn))
assert float(acc) == 1.0

x = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
write("reduce_s4_wraps", "s4 add reduction wraps to [-8, 7]: 1 + 2 + 3 + 4 + 5 + 6 = 21 -> 5.", """
add {
  a = s4[] parameter(0)
  b = s4[] parameter(1)
  ROOT s = s4[] add(a, b)
}

ENTRY e {
  p = s4[2,3] parameter(0)
  z = s4[] constant(0)
  ROOT r = s4[] reduce(p, z), dimensions={0,1}, to_apply=add
}""", [x], np.array(5, np.int8))


# ---- reduce-window (XLA semantics: padding and dilation holes are skipped)
def reduce_window_ref(x, init, op, size, stride, pad, lhs, rhs):
    nd = x.ndim
    out_shape = []
    for d in range(nd):
        dil = (x.shape[d] - 1) * lhs[d] + 1 if x.shape[d] else 0
        padded = dil + pad[d][0] + pad[d][1]
        win = (size[d] - 1) * rhs[d] + 1
        out_shape.append(0 if padded < win else (padded - win) // stride[d] + 1)
    out = np.empty(out_shape, dtype=x.dtype)
    for o in itertools.product(*[range(n) for n in out_shape]):
        acc = init
        for w in itertools.product(*[range(s) for s in size]):
            idx = []
            ok = True
            for d in range(nd):
                p = o[d] * stride[d] + w[d] * rhs[d] - pad[d][0]
                if p < 0 or p % lhs[d] or p // lhs[d] >= x.shape[d]:
                    ok = False
                    break
                idx.append(p // lhs[d])
            if ok:
                acc = op(acc, x[tuple(idx)])
        out[o] = acc
    return out


x = np.arange(1, 8, dtype=f32)
out = reduce_window_ref(x, f32(0), lambda a, b: a + b, [3], [2], [(2, 1)], [1], [2])
write("reduce_window_pad_stride_dilation", "reduce-window add over f32[7]: size 3, stride 2, padding 2_1, window dilation 2.", ADD_F32 + """
ENTRY e {
  p = f32[7] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[%d] reduce-window(p, z), window={size=3 stride=2 pad=2_1 rhs_dilate=2}, to_apply=add
}""" % out.shape, [x], out)

x = np.arange(1, 10, dtype=np.int32).reshape(3, 3)
out = reduce_window_ref(x, np.int32(-100), max, [2, 3], [1, 2], [(1, 1), (0, 2)], [2, 1], [1, 1])
write("reduce_window_2d_base_dilation", """reduce-window maximum over s32[3,3] with base dilation 2 in dim 0 (holes between rows),
padding 1_1x0_2, window 2x3, stride 1x2.""", """
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}

ENTRY e {
  p = s32[3,3] parameter(0)
  lo = s32[] constant(-100)
  ROOT r = s32[%d,%d] reduce-window(p, lo), window={size=2x3 stride=1x2 pad=1_1x0_2 lhs_dilate=2x1}, to_apply=max
}""" % out.shape, [x], out)

x = np.array([1, 2, 3, 4], dtype=f32)
out = reduce_window_ref(x, f32(10), lambda a, b: a + b, [3], [1], [(1, 1)], [1], [1])
write("reduce_window_init_not_repeated_for_padding", """reduce-window add with init 10 and padding 1_1: each window starts at 10 and adds only
the elements it covers; padding positions are skipped, not filled with 10 (XLA semantics).""", """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4] parameter(0)
  init = f32[] constant(10)
  ROOT r = f32[4] reduce-window(p, init), window={size=3 pad=1_1}, to_apply=add
}""", [x], out)
assert list(out) == [13, 16, 19, 17]

a = np.arange(1, 7, dtype=f32).reshape(2, 3)
b = np.arange(6, dtype=np.int32).reshape(2, 3) * 10
ra = reduce_window_ref(a, f32(0), lambda p, q: p + q, [2, 2], [1, 1], [(0, 0), (0, 0)], [1, 1], [1, 1])
rb = reduce_window_ref(b, np.int32(0), max, [2, 2], [1, 1], [(0, 0), (0, 0)], [1, 1], [1, 1])
write("reduce_window_variadic", "variadic reduce-window: a sum of f32 values and a maximum of s32 values in one 2x2 window.", """
sum_max {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s = f32[] add(a0, b0)
  m = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s, m)
}

ENTRY e {
  p = f32[2,3] parameter(0)
  q = s32[2,3] parameter(1)
  z = f32[] constant(0)
  lo = s32[] constant(0)
  ROOT r = (f32[1,2], s32[1,2]) reduce-window(p, q, z, lo), window={size=2x2}, to_apply=sum_max
}""", [a, b], (ra, rb))

x = np.array([1, 2, 3, 4, 5, 6], dtype=bf16)
acc = []
for o in range(2):
    s = np.float32(0)
    for v in x[o * 3:o * 3 + 3].astype(np.float32):
        s = np.float32(np.float32(s + v).astype(bf16))
    acc.append(s)
write("reduce_window_bf16_stride_equals_size", "bf16 reduce-window add with non-overlapping windows (size 3, stride 3).", """
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}

ENTRY e {
  p = bf16[6] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[2] reduce-window(p, z), window={size=3 stride=3}, to_apply=add
}""", [x], np.array(acc, dtype=bf16))


write("reduce_empty_dimension", "reducing a dimension of size 0 gives the init value everywhere.", """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[0,3] parameter(0)
  i = f32[] constant(2.5)
  ROOT r = f32[3] reduce(p, i), dimensions={0}, to_apply=add
}""", [np.zeros((0, 3), f32)], np.full(3, 2.5, f32))

x = np.arange(6, dtype=np.int32).reshape(2, 3)
