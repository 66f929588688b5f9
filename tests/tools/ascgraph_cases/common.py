"""Cases (a graph, size bindings, input arrays, expected outputs) and graph-building helpers."""

import json
import os

import ml_dtypes
import numpy as np


NP_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64,
            "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64, "u8": np.uint8,
            "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "pred": np.bool_}

RNG = np.random.default_rng(20240603)


def random_array(dtype, shape, low=-2.0, high=2.0):
    """Deterministic values of `dtype`: floats in [low, high), integers in [low, high]."""
    if dtype == "pred":
        return RNG.random(shape) < 0.5
    if dtype in ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"):
        return RNG.integers(int(low), int(high) + 1, size=shape).astype(NP_TYPES[dtype])
    return RNG.uniform(low, high, size=shape).astype(np.float32).astype(NP_TYPES[dtype])


class Case:
    def __init__(self, name, graph_path, sizes, inputs, outputs, folder):
        self.name = name
        self.graph_path = graph_path  # relative to the repository root
        self.sizes = sizes
        self.inputs = inputs
        self.outputs = outputs
        self.folder = folder  # under tests/data/ascgraph

    def write(self, repo, data_dir):
        """Writes the arrays; returns the cases.json entry."""
        case_dir = os.path.join(data_dir, self.folder, self.name)
        os.makedirs(case_dir, exist_ok=True)
        entry = {"name": self.name, "graph": self.graph_path, "sizes": self.sizes,
                 "inputs": [], "outputs": []}
        for kind, arrays in (("inputs", self.inputs), ("outputs", self.outputs)):
            for i, array in enumerate(arrays):
                path = os.path.join(case_dir, f"{kind[:-1]}{i}.npy")
                if array.dtype == ml_dtypes.bfloat16:
                    array = array.view(np.uint16)  # tilesmith's .npy carrier for bf16
                np.save(path, np.ascontiguousarray(array))
                entry[kind].append(os.path.relpath(path, repo))
        return entry


def write_cases_json(cases_json, path):
    with open(path, "w") as f:
        json.dump(cases_json, f, indent=1)
        f.write("\n")
