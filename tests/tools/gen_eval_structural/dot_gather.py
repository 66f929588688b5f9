"""Evaluator data cases: dot, and gather with XLA's dimension numbers (clamped starts).

Run by __main__.py; each case is written by a `write` call."""
import itertools
import numpy as np
import ml_dtypes
from hlolit import write

f32 = np.float32
bf16 = ml_dtypes.bfloat16
f8 = ml_dtypes.float8_e4m3fn

# ---- dot
a = np.arange(12, dtype=f32).reshape(2, 2, 3) - 4
b = np.arange(12, dtype=f32).reshape(2, 3, 2) * 0.5
write("dot_batch_f32", "dot with one batch dimension: f32[2,2,3] x f32[2,3,2] -> f32[2,2,2].", """
ENTRY e {
  a = f32[2,2,3] parameter(0)
  b = f32[2,3,2] parameter(1)
  ROOT d = f32[2,2,2] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}""", [a, b], np.einsum("bik,bkj->bij", a, b))

a = np.arange(24, dtype=np.int32).reshape(3, 2, 4) - 7
b = np.arange(40, dtype=np.int32).reshape(4, 2, 5) - 11
write("dot_batch_not_leading", """dot with the batch dimension in the middle of both operands: s32[3,2,4] (batch 1, contracting 2)
x s32[4,2,5] (batch 1, contracting 0) -> batch, lhs free, rhs free = s32[2,3,5].""", """
ENTRY e {
  a = s32[3,2,4] parameter(0)
  b = s32[4,2,5] parameter(1)
  ROOT d = s32[2,3,5] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
}""", [a, b], np.einsum("ibk,kbj->bij", a, b))

a = np.arange(24, dtype=np.float64).reshape(3, 2, 4) / 8
b = np.arange(60, dtype=np.float64).reshape(4, 5, 3) / 4 - 3
write("dot_two_contracting_dims", """dot contracting two dimensions given in different orders: lhs dims {0,2} pair with rhs dims
{2,0}; f64[3,2,4] x f64[4,5,3] -> f64[2,5].""", """
ENTRY e {
  a = f64[3,2,4] parameter(0)
  b = f64[4,5,3] parameter(1)
  ROOT d = f64[2,5] dot(a, b), lhs_contracting_dims={0,2}, rhs_contracting_dims={2,0}
}""", [a, b], np.einsum("aib,bja->ij", a, b))

a = np.array([[256, 1, 1], [3, 0.5, 0.25]], dtype=bf16)
b = np.array([[1, 2], [1, 0], [1, 1]], dtype=bf16)
write("dot_bf16_to_f32", """bf16 x bf16 -> f32 accumulates in f32: 256 + 1 + 1 = 258 and 256*2 + 1 = 513 need more than
bf16's 8 significant bits.""", """
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = bf16[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [a, b], a.astype(f32) @ b.astype(f32))

a = np.array([[256, 1, 1, 1]], dtype=bf16)
b = np.array([1, 1, 1, 1], dtype=bf16)
write("dot_bf16_rounds_once", """bf16 x bf16 -> bf16 accumulates in f32 and rounds once at the end: 256 + 1 + 1 + 1 = 259 ->
260 (per-step bf16 rounding would give 256).""", """
ENTRY e {
  a = bf16[1,4] parameter(0)
  b = bf16[4] parameter(1)
  ROOT d = bf16[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [a, b], np.array([260], dtype=bf16))

a = np.array([[127, -128, 100], [-1, 2, -3]], dtype=np.int8)
b = np.array([[127, 1], [-128, 2], [100, 3]], dtype=np.int8)
write("dot_s8_to_s32", "s8 x s8 -> s32: products and sums far outside s8 are exact in s32.", """
ENTRY e {
  a = s8[2,3] parameter(0)
  b = s8[3,2] parameter(1)
  ROOT d = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [a, b], a.astype(np.int32) @ b.astype(np.int32))

a = np.array([65536, 1, 2147483647], dtype=np.int32)
b = np.array([65536, 1, 2], dtype=np.int32)
expect = np.array((65536 * 65536 + 1 + 2147483647 * 2) % 2**32, dtype=np.uint32).view(np.int32)
write("dot_s32_wraps", "s32 dot wraps modulo 2^32: 65536 * 65536 + 1 + 2147483647 * 2 -> -1.", """
ENTRY e {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}""", [a, b], expect)
assert int(expect) == -1

a = np.array([[1, 0.0625, 0.0625, 0.0625, 0.0625]], dtype=f8)
b = np.array([[1], [1], [1], [1], [1]], dtype=f8)
write("dot_f8_to_f8", """f8e4m3fn x f8e4m3fn -> f8e4m3fn accumulates in f32 and rounds once: 1 + 4 * 0.0625 = 1.25,
which f8e4m3fn holds (per-step rounding would stay at 1).""", """
ENTRY e {
  a = f8e4m3fn[1,5] parameter(0)
  b = f8e4m3fn[5,1] parameter(1)
  ROOT d = f8e4m3fn[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [a, b], np.array([[1.25]], dtype=f8))

a = np.array([[1 + 2j, 3 - 1j], [0.5j, -2]], dtype=np.complex64)
b = np.array([[2 - 1j], [1j]], dtype=np.complex64)
write("dot_c64", "c64 matrix-vector dot.", """
ENTRY e {
  a = c64[2,2] parameter(0)
  b = c64[2,1] parameter(1)
  ROOT d = c64[2,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [a, b], (a.astype(np.complex128) @ b.astype(np.complex128)).astype(np.complex64))

a = np.arange(6, dtype=f32).reshape(2, 3)
b = np.array([1, -1], dtype=f32)
write("dot_outer_product", "dot without contracting dimensions is an outer product: f32[2,3] x f32[2] -> f32[2,3,2].", """
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[2] parameter(1)
  ROOT d = f32[2,3,2] dot(a, b)
}""", [a, b], np.einsum("ij,k->ijk", a, b))


# ---- gather (XLA semantics, computed per output element)
def gather_ref(operand, indices, offset_dims, collapsed, start_index_map, ivd, slice_sizes,
               operand_batching=(), indices_batching=()):
    if ivd == indices.ndim:
        indices = indices[..., None]
    batch_dims_idx = [d for d in range(indices.ndim) if d != ivd]
    batch_shape = [indices.shape[d] for d in batch_dims_idx]
    dropped = set(collapsed) | set(operand_batching)
    offset_operand_dims = [d for d in range(operand.ndim) if d not in dropped]
    out_rank = len(batch_shape) + len(offset_operand_dims)
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    out_shape = [0] * out_rank
    for k, d in enumerate(offset_dims):
        out_shape[d] = slice_sizes[offset_operand_dims[k]]
    for k, d in enumerate(batch_out):
        out_shape[d] = batch_shape[k]
    out = np.zeros(out_shape, dtype=operand.dtype)
    for o in itertools.product(*[range(n) for n in out_shape]):
        g = [o[d] for d in batch_out]
        idx = [0] * indices.ndim
        for k, d in enumerate(batch_dims_idx):
            idx[d] = g[k]
        start = [0] * operand.ndim
        for k, d in enumerate(start_index_map):
            idx[ivd] = k
            start[d] = int(indices[tuple(idx)])
        for i, d in enumerate(operand_batching):
            start[d] = g[batch_dims_idx.index(indices_batching[i])]
        for d in range(operand.ndim):
            start[d] = min(max(start[d], 0), operand.shape[d] - slice_sizes[d])
        full = list(start)
        for k, d in enumerate(offset_dims):
            full[offset_operand_dims[k]] += o[d]
        out[o] = operand[tuple(full)]
    return out


rng = np.random.default_rng(7)
operand = np.arange(600, dtype=f32).reshape(30, 20)
indices = rng.integers(-5, 36, size=(10, 2)).astype(np.int32)
indices[0] = [100, -100]
indices[1] = [12, 26]
indices[2] = [13, 27]
out = gather_ref(operand, indices, [1, 2], [], [1, 0], 1, [4, 8])
write("gather_start_index_map_clamped", """The corpus gather (xla/loop/gather_start_index_map.hlo): start_index_map={1,0} sends index
component 0 to operand dim 1 and component 1 to dim 0. Starts are clamped to [0, 12] in dim 1 and
[0, 26] in dim 0 so each 4x8 slice fits.""", """
ENTRY main {
  %operand = f32[30,20] parameter(0)
  %indices = s32[10,2] parameter(1)
  ROOT %gather = f32[10,4,8] gather(%operand, %indices),
    offset_dims={1,2},
    collapsed_slice_dims={},
    start_index_map={1,0},
    index_vector_dim=1,
    slice_sizes={4,8}
}""", [operand, indices], out)

operand = np.arange(15, dtype=np.int16).reshape(5, 3)
indices = np.array([4, 0, 7, -1], dtype=np.int32)
out = gather_ref(operand, indices, [1], [0], [0], 1, [1, 3])
write("gather_rows_implicit_index_vector", """embedding-style gather of rows: index_vector_dim equal to the indices' rank means each
index is a vector of one; out-of-range rows clamp to the first/last.""", """
ENTRY e {
  p = s16[5,3] parameter(0)
  i = s32[4] parameter(1)
  ROOT g = s16[4,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}""", [operand, indices], out)

operand = np.arange(24, dtype=f32).reshape(4, 6)
indices = np.array([[1, 5], [0, 0], [3, 2]], dtype=np.int64)
out = gather_ref(operand, indices, [0, 2], [], [0, 1], 1, [2, 3])
write("gather_offset_dims_around_batch", """gather whose offset dims {0,2} surround the batch dim: f32[4,6] slices of 2x3 at three
(row, col) starts; the result is f32[2,3,3] with the batch in the middle.""", """
ENTRY e {
  p = f32[4,6] parameter(0)
  i = s64[3,2] parameter(1)
  ROOT g = f32[2,3,3] gather(p, i), offset_dims={0,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}
}""", [operand, indices], out)

operand = np.arange(30, dtype=np.int32).reshape(2, 5, 3)
indices = np.array([[[4], [0], [2], [9]], [[1], [1], [3], [-4]]], dtype=np.int32)
out = gather_ref(operand, indices, [2], [1], [1], 2, [1, 1, 3], [0], [0])
write("gather_batching_dims", """gather with batching dims: operand dim 0 and indices dim 0 are a shared batch, so row i of
the indices picks from operand[i]. Start index 9 and -4 clamp to 4 and 0.""", """
ENTRY e {
  p = s32[2,5,3] parameter(0)
  i = s32[2,4,1] parameter(1)
  ROOT g = s32[2,4,3] gather(p, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}
}""", [operand, indices], out)

operand = np.arange(12, dtype=np.uint8).reshape(3, 4)
indices = np.array([[2, 0, 1], [3, 1, 0]], dtype=np.uint32)
out = gather_ref(operand, indices, [], [0, 1], [0, 1], 0, [1, 1])
write("gather_index_vector_dim_0", """gather with index_vector_dim=0: the indices' columns are (row, col) vectors; collapsing both
dims picks single elements; (2, 3) clamps nothing, (0, 1) and (1, 0) are in range.""", """
ENTRY e {
  p = u8[3,4] parameter(0)
  i = u32[2,3] parameter(1)
  ROOT g = u8[3] gather(p, i), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1}
}""", [operand, indices], out)

