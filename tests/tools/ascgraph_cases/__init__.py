"""Writers for the AscGraph test cases (see gen_ascgraph_cases.py)."""
