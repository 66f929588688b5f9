#!/usr/bin/env python3
"""Writes the AscGraph example graphs and their test cases.

- configs/examples/ascgraph/*: the example requests (public text format, one JSON request).
- tests/data/ascgraph/ops/*.ascgraph.txt: one small graph per op and per memory feature.
- tests/data/ascgraph/{examples,ops}/<case>/{input,output}N.npy: inputs and NumPy-computed
  expectations, at small size bindings.
- tests/data/ascgraph/cases.json: the list the C++ test (tests/ascgraph/cases_test.cc) runs.

The expectations come from NumPy (and ml_dtypes for bf16), independent of tilesmith's
lowering and evaluator. Run with a Python that has numpy and ml_dtypes, then review the diff:

    /tmp/pyenv/bin/python tests/tools/gen_ascgraph_cases.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ascgraph_cases.common import write_cases_json  # noqa: E402
from ascgraph_cases.examples import EXAMPLES_DIR, build_examples  # noqa: E402
from ascgraph_cases.op_cases import OPS_DIR, build_op_cases  # noqa: E402

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA_DIR = os.path.join(REPO, "tests", "data", "ascgraph")


def main():
    os.makedirs(os.path.join(REPO, EXAMPLES_DIR), exist_ok=True)
    os.makedirs(os.path.join(REPO, OPS_DIR), exist_ok=True)
    cases = build_examples(REPO) + build_op_cases(REPO)
    entries = []
    for case in cases:
        entry = case.write(REPO, DATA_DIR)
        entry.update(getattr(case, "extra", {}))
        entries.append(entry)
    write_cases_json(entries, os.path.join(DATA_DIR, "cases.json"))
    print(f"wrote {len(entries)} cases to {os.path.relpath(DATA_DIR, REPO)}")


if __name__ == "__main__":
    main()
