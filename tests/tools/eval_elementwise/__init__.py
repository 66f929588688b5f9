"""Generator of tests/data/eval/elementwise_*.hlo; see gen_eval_elementwise.py."""
