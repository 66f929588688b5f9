"""Evaluator data cases: broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
dynamic-update-slice, pad, concatenate, reverse.

Run by __main__.py; each case is written by a `write` call."""
import numpy as np
import ml_dtypes
from hlolit import write

rng = np.random.default_rng(1)
f32 = np.float32

# broadcast into non-trivial dims
x = np.arange(6, dtype=np.int8).reshape(2, 3) - 2
out = np.broadcast_to(x[:, None, :], (2, 4, 3))
write("broadcast_middle_dim", "broadcast s8[2,3] into dims {0,2} of s8[2,4,3]: repeated along dim 1.", """
ENTRY e {
  p = s8[2,3] parameter(0)
  ROOT b = s8[2,4,3] broadcast(p), dimensions={0,2}
}""", [x], out)

x = np.array([1.5, -2, 3], dtype=f32)
out = np.broadcast_to(x[None, :, None], (2, 3, 2))
write("broadcast_outer_and_inner", "broadcast f32[3] to dim 1 of f32[2,3,2]: repeated along the major and the minor dim.", """
ENTRY e {
  p = f32[3] parameter(0)
  ROOT b = f32[2,3,2]{0,1,2} broadcast(p), dimensions={1}
}""", [x], out)

write("broadcast_scalar", "broadcast of a scalar to a rank-2 bf16 array.", """
ENTRY e {
  p = bf16[] parameter(0)
  ROOT b = bf16[2,3] broadcast(p), dimensions={}
}""", [np.array(0.5, dtype=ml_dtypes.bfloat16)], np.full((2, 3), 0.5, dtype=ml_dtypes.bfloat16))

# transpose 3-D
x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
out = np.transpose(x, (2, 0, 1))
write("transpose_3d", "transpose s32[2,3,4] with dimensions={2,0,1}: output dim i is operand dim dimensions[i].", """
ENTRY e {
  p = s32[2,3,4] parameter(0)
  ROOT t = s32[4,2,3] transpose(p), dimensions={2,0,1}
}""", [x], out)

x = (np.arange(24, dtype=np.float64) * 0.25).reshape(2, 3, 4)
write("transpose_3d_f64_120", "transpose f64[2,3,4] with dimensions={1,2,0}, result in a non-default layout.", """
ENTRY e {
  p = f64[2,3,4] parameter(0)
  ROOT t = f64[3,4,2]{0,2,1} transpose(p), dimensions={1,2,0}
}""", [x], np.transpose(x, (1, 2, 0)))

# reshape
x = np.arange(12, dtype=np.uint16).reshape(3, 4)
write("reshape_3x4_to_2x2x3", "reshape keeps the logical row-major order, whatever the layouts.", """
ENTRY e {
  p = u16[3,4]{0,1} parameter(0)
  ROOT r = u16[2,2,3]{1,2,0} reshape(p)
}""", [x], x.reshape(2, 2, 3))

# slice with strides
x = np.arange(30, dtype=f32).reshape(5, 6)
write("slice_strided", "slice with strides: rows 1,3 and columns 0,3 of f32[5,6].", """
ENTRY e {
  p = f32[5,6] parameter(0)
  ROOT s = f32[2,2] slice(p), slice={[1:5:2], [0:6:3]}
}""", [x], x[1:5:2, 0:6:3])

x = np.arange(2 * 7 * 3, dtype=np.int64).reshape(2, 7, 3)
write("slice_3d", "slice of s64[2,7,3] keeping one row, a strided middle and a contiguous minor range.", """
ENTRY e {
  p = s64[2,7,3] parameter(0)
  ROOT s = s64[1,3,2] slice(p), slice={[1:2], [1:7:2], [1:3]}
}""", [x], x[1:2, 1:7:2, 1:3])

# dynamic-slice clamped
x = np.arange(20, dtype=np.int32).reshape(4, 5)
write("dynamic_slice_clamped", """dynamic-slice with out-of-range starts: (3, -2) is clamped to (2, 0) so the 2x3 slice fits.
Start indices of different integer types.""", """
ENTRY e {
  p = s32[4,5] parameter(0)
  i = s64[] parameter(1)
  j = s8[] parameter(2)
  ROOT d = s32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}
}""", [x, np.array(3, np.int64), np.array(-2, np.int8)], x[2:4, 0:3])

x = np.arange(6, dtype=f32) + 0.5
write("dynamic_slice_unsigned_start", "dynamic-slice with a u32 start of 4000000000: it clamps to dim - size = 3.", """
ENTRY e {
  p = f32[6] parameter(0)
  i = u32[] parameter(1)
  ROOT d = f32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}
}""", [x, np.array(4000000000, np.uint32)], x[3:6])

x = np.arange(6, dtype=f32) + 0.5
write("dynamic_slice_u64_start", "dynamic-slice with a u64 start above INT64_MAX: it clamps to the top.", """
ENTRY e {
  p = f32[6] parameter(0)
  i = u64[] parameter(1)
  ROOT d = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}
}""", [x, np.array(18446744073709551615, np.uint64)], x[4:6])

# dynamic-update-slice clamped
x = np.zeros((4, 4), dtype=f32)
u = np.array([[1, 2], [3, 4]], dtype=f32)
out = x.copy()
out[2:4, 0:2] = u
write("dynamic_update_slice_clamped", "dynamic-update-slice at (3, -1): the starts clamp to (2, 0) so the 2x2 update fits.", """
ENTRY e {
  p = f32[4,4] parameter(0)
  u = f32[2,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = f32[4,4] dynamic-update-slice(p, u, i, j)
}""", [x, u, np.array(3, np.int32), np.array(-1, np.int32)], out)

x = np.arange(12, dtype=np.int16).reshape(3, 4)
u = np.array([[-1, -2, -3]], dtype=np.int16)
out = x.copy()
out[1:2, 1:4] = u
write("dynamic_update_slice_inside", "dynamic-update-slice of an in-bounds 1x3 update into s16[3,4] at (1, 1).", """
ENTRY e {
  p = s16[3,4] parameter(0)
  u = s16[1,3] parameter(1)
  i = u8[] parameter(2)
  j = s64[] parameter(3)
  ROOT d = s16[3,4] dynamic-update-slice(p, u, i, j)
}""", [x, u, np.array(1, np.uint8), np.array(1, np.int64)], out)


def pad_ref(x, value, cfg):
    # interior first, then edges; negative edges crop
    out = x
    for d, (lo, hi, it) in enumerate(cfg):
        n = out.shape[d]
        size = n + max(n - 1, 0) * it
        shape = list(out.shape)
        shape[d] = size
        tmp = np.full(shape, value, dtype=x.dtype)
        idx = [slice(None)] * out.ndim
        idx[d] = slice(0, size, it + 1)
        tmp[tuple(idx)] = out
        # edges
        if lo >= 0:
            padshape = list(tmp.shape); padshape[d] = lo
            tmp = np.concatenate([np.full(padshape, value, dtype=x.dtype), tmp], axis=d)
        else:
            idx = [slice(None)] * out.ndim; idx[d] = slice(-lo, None)
            tmp = tmp[tuple(idx)]
        if hi >= 0:
            padshape = list(tmp.shape); padshape[d] = hi
            tmp = np.concatenate([tmp, np.full(padshape, value, dtype=x.dtype)], axis=d)
        else:
            idx = [slice(None)] * out.ndim; idx[d] = slice(0, tmp.shape[d] + hi)
            tmp = tmp[tuple(idx)]
        out = tmp
    return out


x = np.arange(1, 10, dtype=f32).reshape(3, 3)
cfg = [(1, -1, 1), (-1, 2, 0)]
out = pad_ref(x, f32(-7), cfg)
write("pad_negative_interior", """pad with interior padding and negative edges: dim 0 low 1, high -1 (crops the last row),
interior 1; dim 1 low -1 (crops the first column), high 2.""", """
ENTRY e {
  p = f32[3,3] parameter(0)
  v = f32[] constant(-7)
  ROOT q = f32[%d,%d] pad(p, v), padding=1_-1_1x-1_2
}""" % out.shape, [x], out)

x = np.arange(1, 5, dtype=np.int32)
cfg = [(-3, -2, 2)]
out = pad_ref(x, np.int32(0), cfg)
write("pad_crop_into_interior", "pad that crops through interior padding on both sides: s32[4] 2 interior, low -3, high -2.", """
ENTRY e {
  p = s32[4] parameter(0)
  v = s32[] parameter(1)
  ROOT q = s32[%d] pad(p, v), padding=-3_-2_2
}""" % out.shape, [x, np.array(0, np.int32)], out)

x = np.array([[True, False], [False, True]])
cfg = [(0, 1, 0), (2, 0, 1)]
out = pad_ref(x, True, cfg)
write("pad_pred", "pad of a pred array with true.", """
ENTRY e {
  p = pred[2,2] parameter(0)
  v = pred[] constant(true)
  ROOT q = pred[%d,%d] pad(p, v), padding=0_1x2_0_1
}""" % out.shape, [x], out)

# concatenate of 3
a = np.arange(4, dtype=f32).reshape(2, 2)
b = np.arange(6, dtype=f32).reshape(2, 3) + 10
c = np.arange(2, dtype=f32).reshape(2, 1) + 100
write("concatenate_three", "concatenate three operands along dim 1.", """
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,3] parameter(1)
  c = f32[2,1] parameter(2)
  ROOT r = f32[2,6] concatenate(a, b, c), dimensions={1}
}""", [a, b, c], np.concatenate([a, b, c], axis=1))

a = np.array([1, 2], dtype=np.uint8)
write("concatenate_major_with_empty", "concatenate along dim 0 with an empty operand in the middle.", """
ENTRY e {
  a = u8[2] parameter(0)
  b = u8[0] constant({})
  c = u8[3] constant({7, 8, 9})
  ROOT r = u8[5] concatenate(a, b, c), dimensions={0}
}""", [a], np.array([1, 2, 7, 8, 9], dtype=np.uint8))

# reverse
x = np.arange(12, dtype=np.int32).reshape(2, 2, 3)
write("reverse_dims_0_2", "reverse of s32[2,2,3] along dims 0 and 2.", """
ENTRY e {
  p = s32[2,2,3] parameter(0)
  ROOT r = s32[2,2,3] reverse(p), dimensions={0,2}
}""", [x], x[::-1, :, ::-1])

# bitcast across layouts
x = np.arange(6, dtype=f32).reshape(2, 3)
write("bitcast_layout_transpose", """bitcast f32[2,3]{0,1} to f32[3,2]{1,0}: the same memory read in another dimension order,
which is a transpose of the logical values.""", """
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT b = f32[3,2]{1,0} bitcast(p)
}""", [x], x.T)

x = np.array([1.0, -2.0, 0.5, 65504], dtype=np.float16)
write("bitcast_f16_to_s16", "bitcast f16 -> s16 reinterprets the bits.", """
ENTRY e {
  p = f16[4] parameter(0)
  ROOT b = s16[4] bitcast(p)
}""", [x], x.view(np.int16))

x = np.arange(12, dtype=f32).reshape(3, 4)
# result: f32[4,3]{0,1}: memory of operand (row major 3x4) read as column-major 4x3: same as reshape then...
mem = x.reshape(-1)
out = mem.reshape(3, 4).T  # column-major [4,3]: element (i,j) at slot j*4+i
write("bitcast_reshape_layout", """bitcast f32[3,4]{1,0} to f32[4,3]{0,1}: element (i, j) of the result sits at memory slot
j * 4 + i.""", """
ENTRY e {
  p = f32[3,4]{1,0} parameter(0)
  ROOT b = f32[4,3]{0,1} bitcast(p)
}""", [x], out)

# tiled: f32[4,4]{1,0:T(2,2)}: memory = tiles in row-major order, each tile row-major.
x = np.arange(16, dtype=f32).reshape(4, 4)
mem = x.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1)
write("bitcast_tiled_to_linear", """bitcast from a 2x2-tiled f32[4,4] to f32[16]: the result lists memory order, tile by
tile.""", """
ENTRY e {
  p = f32[4,4]{1,0:T(2,2)} parameter(0)
  ROOT b = f32[16]{0} bitcast(p)
}""", [x], mem)

x = np.array([1, -2, 3, -4, 5, -6, 7, -8], dtype=np.int8)
# s4[8]{0:E(4)} packed: two per byte, first in low bits -> u8[4]
b = [((int(x[2 * i]) & 15) | ((int(x[2 * i + 1]) & 15) << 4)) for i in range(4)]
write("bitcast_packed_s4_to_u8", "bitcast of packed s4[8] (E(4)) to u8[4]: pairs of nibbles, first element in the low bits.", """
ENTRY e {
  p = s4[8]{0:E(4)} parameter(0)
  ROOT b = u8[4]{0} bitcast(p)
}""", [x], np.array(b, dtype=np.uint8))


x = np.array([1.0, -2.5], dtype=f32)
write("bitcast_f32_to_u16_halves", "bitcast f32[2] -> u16[4]: each f32 splits into its low then high 16 bits (little-endian).", """
ENTRY e {
  p = f32[2] parameter(0)
  ROOT b = u16[4] bitcast(p)
}""", [x], x.view(np.uint16))
