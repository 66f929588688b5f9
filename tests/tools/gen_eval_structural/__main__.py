"""Writes the structural evaluator's data cases into tests/data/eval/.

Expected values come from NumPy, ml_dtypes and the small reference implementations here
(pad, reduce-window, gather, scatter written per element from XLA's operation semantics),
independent of the C++ evaluator. Run with a Python that has numpy and ml_dtypes, then
review the diff:

    python tests/tools/gen_eval_structural [output_dir]
"""

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if len(sys.argv) > 1:
    os.environ["TILESMITH_EVAL_OUT"] = os.path.abspath(sys.argv[1])
sys.path.insert(0, HERE)
for script in ["data_movement", "structural", "reduce", "dot_gather", "scatter"]:
    runpy.run_path(os.path.join(HERE, script + ".py"), run_name="__main__")
