"""Evaluator data cases: iota, constant, tuple, get-tuple-element, fusion, call, map.

Run by __main__.py; each case is written by a `write` call."""
import numpy as np
import ml_dtypes
from hlolit import write

f32 = np.float32
bf16 = ml_dtypes.bfloat16

# iota of several types
write("iota_s32_dim1", "iota along dimension 1 of s32[2,3].", """
ENTRY e {
  ROOT i = s32[2,3] iota(), iota_dimension=1
}""", [], np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)))

write("iota_f32_dim0_layout", "iota along dimension 0 of f32[3,2] with a column-major layout.", """
ENTRY e {
  ROOT i = f32[3,2]{0,1} iota(), iota_dimension=0
}""", [], np.broadcast_to(np.arange(3, dtype=f32)[:, None], (3, 2)))

v = np.arange(20, dtype=np.float32).astype(ml_dtypes.float8_e4m3fn)
write("iota_f8e4m3fn_rounds", "iota of f8e4m3fn: values above 16 round to the type (17 -> 16, 19 -> 20, ties to even).", """
ENTRY e {
  ROOT i = f8e4m3fn[20] iota(), iota_dimension=0
}""", [], v)

v = np.arange(260, dtype=np.float32).astype(bf16)
write("iota_bf16_rounds", "iota of bf16[2,260] along dim 1: above 256 the values round to even (257 -> 256, 259 -> 260).", """
ENTRY e {
  ROOT i = bf16[2,260] iota(), iota_dimension=1
}""", [], np.broadcast_to(v, (2, 260)))

write("iota_c64", "iota of c64: the index is the real part.", """
ENTRY e {
  ROOT i = c64[3] iota(), iota_dimension=0
}""", [], np.arange(3, dtype=np.complex64))

write("iota_u8_wraps", "iota of u8[300] wraps modulo 256; a slice shows the wrap.", """
ENTRY e {
  i = u8[300] iota(), iota_dimension=0
  ROOT s = u8[6] slice(i), slice={[252:258]}
}""", [], np.array([252, 253, 254, 255, 0, 1], dtype=np.uint8))

# constant, tuple, gte
write("tuple_get_tuple_element", "tuple and get-tuple-element, including a nested tuple and a constant.", """
ENTRY e {
  a = f32[2] parameter(0)
  b = s32[] constant(7)
  c = pred[3] constant({true, false, true})
  bc = (s32[], pred[3]) tuple(b, c)
  t = (f32[2], (s32[], pred[3])) tuple(a, bc)
  inner = (s32[], pred[3]) get-tuple-element(t), index=1
  x = pred[3] get-tuple-element(inner), index=1
  y = f32[2] get-tuple-element(t), index=0
  ROOT r = (pred[3], f32[2], s32[]) tuple(x, y, b)
}""", [np.array([1.5, -2], f32)], (np.array([True, False, True]), np.array([1.5, -2], f32), np.array(7, np.int32)))

write("constant_with_layout", "a constant with a non-default layout keeps logical values.", """
ENTRY e {
  ROOT c = s32[2,3]{0,1} constant({{1, 2, 3}, {4, 5, 6}})
}""", [], np.array([[1, 2, 3], [4, 5, 6]], np.int32))

# fusion calling a computation; call
x = np.array([[1, 2], [3, 4]], f32)
y = np.array([10, 20], f32)
write("fusion_calls_computation", "a fusion whose computation broadcasts, transposes and adds (needs the elementwise add).", """
fused {
  p0 = f32[2,2] parameter(0)
  p1 = f32[2] parameter(1)
  b = f32[2,2] broadcast(p1), dimensions={0}
  t = f32[2,2] transpose(p0), dimensions={1,0}
  ROOT s = f32[2,2] add(t, b)
}

ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2] parameter(1)
  ROOT f = f32[2,2]{0,1} fusion(a, b), kind=kLoop, calls=fused
}""", [x, y], x.T + y[:, None])

write("call_structural", "a call of a computation made of data movement only, returning a tuple.", """
callee {
  p0 = s32[4] parameter(0)
  r = s32[4] reverse(p0), dimensions={0}
  s = s32[2] slice(p0), slice={[1:3]}
  ROOT t = (s32[4], s32[2]) tuple(r, s)
}

ENTRY e {
  a = s32[4] parameter(0)
  ROOT c = (s32[4], s32[2]) call(a), to_apply=callee
}""", [np.array([1, 2, 3, 4], np.int32)], (np.array([4, 3, 2, 1], np.int32), np.array([2, 3], np.int32)))

write("map_second_operand", "map with a computation that returns its second parameter.", """
second {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] copy(b)
}

ENTRY e {
  x = f32[2,2] parameter(0)
  y = f32[2,2] parameter(1)
  ROOT m = f32[2,2] map(x, y), dimensions={0,1}, to_apply=second
}""", [np.array([[1, 2], [3, 4]], f32), np.array([[5, 6], [7, 8]], f32)], np.array([[5, 6], [7, 8]], f32))

write("map_multiply_add", "map with a computation a * b + 1 (needs the elementwise ops).", """
fma {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  m = s32[] multiply(a, b)
  one = s32[] constant(1)
  ROOT r = s32[] add(m, one)
}

ENTRY e {
  x = s32[3] parameter(0)
  y = s32[3] parameter(1)
  ROOT m = s32[3] map(x, y), dimensions={0}, to_apply=fma
}""", [np.array([1, -2, 3], np.int32), np.array([4, 5, -6], np.int32)], np.array([5, -9, -17], np.int32))


x = np.arange(6, dtype=np.int32).reshape(2, 3)
write("fusion_nested_multi_output", "a fusion returning a tuple, whose computation calls another fusion.", """
inner {
  q = s32[2,3] parameter(0)
  ROOT r = s32[3,2] transpose(q), dimensions={1,0}
}

outer {
  p = s32[2,3] parameter(0)
  t = s32[3,2] fusion(p), kind=kLoop, calls=inner
  s = s32[1,3] slice(p), slice={[1:2], [0:3]}
  ROOT o = (s32[3,2], s32[1,3]) tuple(t, s)
}

ENTRY e {
  a = s32[2,3] parameter(0)
  ROOT f = (s32[3,2], s32[1,3]) fusion(a), kind=kLoop, calls=outer
}""", [x], (x.T.copy(), x[1:2].copy()))
