"""Evaluator data cases: scatter with XLA's dimension numbers (windows that do not fit are
skipped).

Run by __main__.py; each case is written by a `write` call."""
import itertools
import numpy as np
import ml_dtypes
from hlolit import write

f32 = np.float32


def scatter_ref(operands, indices, updates, update_window_dims, inserted, sdod, ivd, combine,
                input_batching=(), indices_batching=()):
    outs = [o.copy() for o in operands]
    if ivd == indices.ndim:
        indices = indices[..., None]
    upd_shape = updates[0].shape
    scatter_dims = [d for d in range(len(upd_shape)) if d not in update_window_dims]
    idx_batch = [d for d in range(indices.ndim) if d != ivd]
    dropped = set(inserted) | set(input_batching)
    window_operand_dims = [d for d in range(operands[0].ndim) if d not in dropped]
    wsize = [1] * operands[0].ndim
    for k, d in enumerate(window_operand_dims):
        wsize[d] = upd_shape[update_window_dims[k]]
    for g in itertools.product(*[range(upd_shape[d]) for d in scatter_dims]):
        idx = [0] * indices.ndim
        for k, d in enumerate(idx_batch):
            idx[d] = g[k]
        start = [0] * operands[0].ndim
        for k, d in enumerate(sdod):
            idx[ivd] = k
            start[d] = int(indices[tuple(idx)])
        for i, d in enumerate(input_batching):
            start[d] = g[idx_batch.index(indices_batching[i])]
        if any(start[d] < 0 or start[d] + wsize[d] > operands[0].shape[d] for d in range(len(start))):
            continue
        for w in itertools.product(*[range(upd_shape[d]) for d in update_window_dims]):
            u = [0] * len(upd_shape)
            for k, d in enumerate(scatter_dims):
                u[d] = g[k]
            for k, d in enumerate(update_window_dims):
                u[d] = w[k]
            full = list(start)
            for k, d in enumerate(window_operand_dims):
                full[d] += w[k]
            new = combine(*[o[tuple(full)] for o in outs], *[up[tuple(u)] for up in updates])
            if len(outs) == 1:
                new = (new,)
            for o, v in zip(outs, new):
                o[tuple(full)] = v
    return outs[0] if len(outs) == 1 else tuple(outs)


operand = np.arange(5, dtype=f32) * 100
indices = np.array([[1], [3], [1], [1]], dtype=np.int32)
updates = np.array([1, 2, 4, 8], dtype=f32)
out = scatter_ref([operand], indices, [updates], [], [0], [0], 1, lambda a, b: a + b)
write("scatter_add_duplicates", "scatter-add where index 1 appears three times: every update is added.", """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[5] parameter(0)
  i = s32[4,1] parameter(1)
  u = f32[4] parameter(2)
  ROOT s = f32[5] scatter(p, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}""", [operand, indices, updates], out)
assert list(out) == [0, 113, 200, 302, 400]

operand = np.zeros((4, 5), dtype=np.int32)
indices = np.array([[0, 0], [3, 2], [-1, 0], [2, 2], [0, 3]], dtype=np.int32)
updates = (np.arange(5 * 2 * 3, dtype=np.int32) + 1).reshape(5, 2, 3)
out = scatter_ref([operand], indices, [updates], [1, 2], [], [0, 1], 1, lambda a, b: a + b)
write("scatter_window_out_of_bounds_skipped", """scatter of 2x3 windows: starts (3, 2), (-1, 0) and (0, 3) would put part of the window
outside s32[4,5], so those whole windows are skipped; (0, 0) and (2, 2) fit and are added.""", """
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY e {
  p = s32[4,5] parameter(0)
  i = s32[5,2] parameter(1)
  u = s32[5,2,3] parameter(2)
  ROOT s = s32[4,5] scatter(p, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
}""", [operand, indices, updates], out)

a = np.zeros(4, dtype=f32)
b = np.full(4, -5, dtype=np.int32)
indices = np.array([2, 0, 2, 5], dtype=np.int32)
ua = np.array([1.5, 2, 3, 4], dtype=f32)
ub = np.array([7, -9, 3, 100], dtype=np.int32)
out = scatter_ref([a, b], indices, [ua, ub], [], [0], [0], 1,
                  lambda x, y, u, v: (x + u, max(y, v)))
write("scatter_variadic", """variadic scatter of two operands with a tuple reducer (add the f32, take the maximum of the
s32); index 5 is out of bounds and skipped.""", """
add_max {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s = f32[] add(a0, b0)
  m = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s, m)
}

ENTRY e {
  p = f32[4] parameter(0)
  q = s32[4] parameter(1)
  i = s32[4] parameter(2)
  u = f32[4] parameter(3)
  v = s32[4] parameter(4)
  ROOT s = (f32[4], s32[4]) scatter(p, q, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_max
}""", [a, b, indices, ua, ub], out)

operand = np.zeros(3, dtype=np.int32)
indices = np.array([[2], [2], [0], [2]], dtype=np.int32)
updates = np.array([1, 2, 3, 4], dtype=np.int32)
out = scatter_ref([operand], indices, [updates], [], [0], [0], 1, lambda a, b: b)
write("scatter_override_in_index_order", """scatter whose reducer returns the update: with index 2 written three times, the last update
in index order (4) wins.""", """
override {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}

ENTRY e {
  p = s32[3] parameter(0)
  i = s32[4,1] parameter(1)
  u = s32[4] parameter(2)
  ROOT s = s32[3] scatter(p, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=override
}""", [operand, indices, updates], out)
assert list(out) == [3, 0, 4]

operand = np.arange(8, dtype=f32).reshape(2, 4)
indices = np.array([[[3], [0], [3]], [[1], [1], [4]]], dtype=np.int32)
updates = np.array([[10, 20, 30], [40, 50, 60]], dtype=f32)
out = scatter_ref([operand], indices, [updates], [], [1], [1], 2, lambda a, b: a + b, [0], [0])
write("scatter_batching_dims", """scatter with batching dims: operand dim 0 and indices dim 0 are a shared batch, so row i of
the updates goes into operand row i; index 4 is out of bounds and skipped.""", """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[2,4] parameter(0)
  i = s32[2,3,1] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT s = f32[2,4] scatter(p, i, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add
}""", [operand, indices, updates], out)

operand = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8)
indices = np.array([1, 0, 1], dtype=np.int32)
updates = np.array([[2, 2, 2], [3, 3, 3], [100, -1, 64]], dtype=np.int8)


def wrap8(v):
    return np.int8(np.array(int(v), dtype=np.int64).astype(np.uint64).astype(np.uint8).view(np.int8))


out = scatter_ref([operand], indices, [updates], [1], [0], [0], 1, lambda a, b: wrap8(int(a) * int(b)))
write("scatter_multiply_rows_s8_wraps", """scatter-multiply of whole rows into s8[2,3] with the index vector dim implicit (rank 1
indices); products wrap to s8.""", """
mul {
  a = s8[] parameter(0)
  b = s8[] parameter(1)
  ROOT m = s8[] multiply(a, b)
}

ENTRY e {
  p = s8[2,3] parameter(0)
  i = s32[3] parameter(1)
  u = s8[3,3] parameter(2)
  ROOT s = s8[2,3] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul
}""", [operand, indices, updates], out)

