#!/usr/bin/env python3
"""Experiments on the rows `model_bench --generated --dump-rows` writes: the learned model's
learner outside the bench, so an idea is tried in seconds on the same rows before it is
built into the product.

    build/bench-venv/bin/pip install numpy scipy xgboost   # once
    build/bench-venv/bin/python bench/model_rows.py EXPERIMENT ROWS.json [ROWS.json ...]

Each file's judged rows are scored (mean Spearman per fusion against run A and run B,
averaged); the training rows of the first file train the experiments that learn from
other fusions. Experiments:

  ceiling   trees fitted within each judged fusion (k-fold over its configs, the analytic
            time as the margin), under 24 settings: folds 4 or 8, depth 2-4, learning rate
            0.1 or 0.3, 30 or 100 rounds. The bench's own row is one of them (4 folds, depth
            2, 0.1, 100 rounds, with its estimates' trees beside).
  ablate    the same fit (4 folds, depth 2) leaving out one feature group at a time.
  share     the learned model (800 fusions' rows and 3 boosters: log-time and pairwise, depth
            5, 100 rounds) with each correction share from 0.25 to 1.5 (the product's: 0.5).
  context   the same with the fusion as context beside each config: its mean and spread of
            analytic log time, its median memory share, the config's percentile among its
            fusion's predictions.
  nearest   log-time trees trained, for each judged fusion, on its K nearest training
            fusions only (K = 40, 100, 200; by emitter, bytes, element size, flops per byte,
            f16 and gather shares, memory share, division and vector shares).

The learner is XGBoost's Python package, not the bench's XGBoost 1.7 C library: figures
agree with the bench's within about 0.02, so compare an experiment with its own baseline
line, never with the bench's table.
"""

import argparse
import collections
import json
import sys

try:
    import numpy as np
    import xgboost as xgb
    from scipy.stats import rankdata, spearmanr
except ImportError as missing:
    sys.exit(f"model_rows.py needs numpy, scipy and xgboost ({missing}): "
             "build/bench-venv/bin/pip install numpy scipy xgboost")


def load(path):
    try:
        with open(path) as f:
            rows = json.load(f)
        return rows["feature_names"], rows["train"], rows["judged"]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"cannot read {path} as `model_bench --generated --dump-rows` rows: {error!r}")


def matrix(rows):
    return np.array([[np.nan if v is None else v for v in r["features"]] for r in rows],
                    dtype=np.float32)


def by_fusion(rows):
    groups = collections.defaultdict(list)
    for i, r in enumerate(rows):
        groups[r["fusion"]].append(i)
    return groups


def spearman(predicted, truth):
    rho = spearmanr(predicted, truth)[0]
    return 0.0 if np.isnan(rho) else rho


def fusion_score(judged, idx, predicted):
    """A fusion's Spearman against run A and run B, averaged."""
    return np.mean([spearman(predicted, [judged[i][run] for i in idx])
                    for run in ("run_a_us", "run_b_us")])


def score(judged, predicted):
    return np.mean([fusion_score(judged, idx, [predicted[i] for i in idx])
                    for idx in by_fusion(judged).values()])


def agreement(judged):
    return np.mean([spearman([judged[i]["run_a_us"] for i in idx],
                             [judged[i]["run_b_us"] for i in idx])
                    for idx in by_fusion(judged).values()])


def fit_within(judged, X, folds, depth, eta, rounds):
    """Every judged config predicted by trees fitted to its fusion's other configs."""
    predicted = np.zeros(len(judged))
    for idx in by_fusion(judged).values():
        idx = np.array(idx)
        measured = np.log([min(judged[i]["run_a_us"], judged[i]["run_b_us"]) for i in idx])
        analytic = np.log([judged[i]["analytic_us"] for i in idx])
        fold = np.random.RandomState(0).permutation(len(idx)) % min(folds, len(idx))
        for k in range(fold.max() + 1):
            train = fold != k
            params = dict(max_depth=depth, eta=eta, subsample=0.8, colsample_bytree=0.8,
                          base_score=0, verbosity=0, nthread=2)
            booster = xgb.train(params, xgb.DMatrix(X[idx][train], label=measured[train],
                                                    base_margin=analytic[train]), rounds)
            predicted[idx[~train]] = booster.predict(
                xgb.DMatrix(X[idx][~train], base_margin=analytic[~train]))
    return predicted


def ceiling(files):
    for path, (names, _, judged) in files:
        X = matrix(judged)
        results = []
        for folds in (4, 8):
            for depth in (2, 3, 4):
                for eta in (0.1, 0.3):
                    for rounds in (30, 100):
                        rho = score(judged, fit_within(judged, X, folds, depth, eta, rounds))
                        results.append((rho, f"{folds} folds, depth {depth}, eta {eta}, "
                                              f"{rounds} rounds"))
        results.sort(reverse=True)
        print(f"{path}: agreement {agreement(judged):.3f}, analytic "
              f"{score(judged, [r['analytic_us'] for r in judged]):.3f}")
        for rho, setting in results[:4]:
            print(f"  {rho:.3f}  {setting}")
        print(f"  ... worst {results[-1][0]:.3f}  {results[-1][1]}")


GROUPS = {
    "code counts": ["code."],
    "analytic terms": ["analytic."],
    "config and launch fields": ["cfg.", "launch."],
    "walks": ["sweep."],
    "kernel shape": ["kernel.", "ratio."],
    "all but config and launch fields": ["code.", "analytic.", "sweep.", "kernel.", "ratio.",
                                         "occupancy.", "waves.", "coalescing.", "resources.",
                                         "shared."],
}


def ablate(files):
    judged_files = [(names, judged, matrix(judged)) for _, (names, _, judged) in files]
    for left_out, prefixes in [("nothing", [])] + list(GROUPS.items()):
        figures = []
        for names, judged, X in judged_files:
            keep = [i for i, n in enumerate(names) if not any(n.startswith(p) for p in prefixes)]
            figures.append(score(judged, fit_within(judged, X[:, keep], 4, 2, 0.1, 100)))
        print(f"without {left_out:34s}", " ".join(f"{x:.3f}" for x in figures),
              f"mean {np.mean(figures):.3f}")


def booster_params(seed, depth):
    """The learned model's settings (as the bench's), for trees trained across fusions."""
    return dict(base_score=0, tree_method="hist", max_depth=depth, eta=0.1, min_child_weight=2,
                subsample=0.8, colsample_bytree=0.8, seed=seed, verbosity=0, nthread=2)


def train_boosters(X, train, objective, seeds=3):
    order = sorted(range(len(train)), key=lambda i: train[i]["fusion"])
    X = X[order]
    train = [train[i] for i in order]
    analytic = np.log([r["analytic_us"] for r in train])
    measured = np.log([r["measured_us"] for r in train])
    boosters = []
    for seed in range(seeds):
        params = booster_params(seed, depth=5)
        if objective == "pairwise":
            params["objective"] = "rank:pairwise"
            data = xgb.DMatrix(X, label=-measured, base_margin=-analytic)
            data.set_group([len(g) for g in by_fusion(train).values()])
        else:
            params["objective"] = "reg:squarederror"
            data = xgb.DMatrix(X, label=measured, base_margin=analytic)
        boosters.append(xgb.train(params, data, 100))
    return boosters


def correction(boosters, X, objective):
    """The trees' mean correction of log time (without the analytic margin)."""
    value = np.mean([b.predict(xgb.DMatrix(X)) for b in boosters], axis=0)
    return -value if objective == "pairwise" else value


def with_context(index, rows, X):
    """X with four columns more: the fusion as context beside each config."""
    analytic = np.log([r["analytic_us"] for r in rows])
    memory_share = X[:, index["analytic.memory_us"]] / np.maximum(1e-6, X[:, index["analytic.us"]])
    extra = np.zeros((len(rows), 4), dtype=np.float32)
    for idx in by_fusion(rows).values():
        idx = np.array(idx)
        extra[idx, 0] = (rankdata(analytic[idx]) - 1) / max(1, len(idx) - 1)
        extra[idx, 1] = analytic[idx].mean()
        extra[idx, 2] = analytic[idx].std()
        extra[idx, 3] = np.nanmedian(memory_share[idx])
    return np.c_[X, extra]


def transfer(files, shares, add_context):
    names, train, _ = files[0][1]
    index = {n: i for i, n in enumerate(names)}
    X = matrix(train)
    if add_context:
        X = with_context(index, train, X)
    judged_files = []
    for _, (_, _, judged) in files:
        Xj = matrix(judged)
        if add_context:
            Xj = with_context(index, judged, Xj)
        judged_files.append((judged, Xj, np.log([r["analytic_us"] for r in judged])))
    for objective in ("log-time", "pairwise"):
        boosters = train_boosters(X, train, objective)
        corrections = [correction(boosters, Xj, objective) for _, Xj, _ in judged_files]
        for share in shares:
            figures = [score(judged, analytic + share * corrected)
                       for (judged, _, analytic), corrected in zip(judged_files, corrections)]
            print(f"{objective:8s} share {share:.2f}", " ".join(f"{x:.3f}" for x in figures),
                  f"mean {np.mean(figures):.3f}")


def descriptors(names, rows, X):
    """Per fusion: emitter (weighted), then medians of a few fusion-wide features."""
    index = {n: i for i, n in enumerate(names)}
    emitters = [i for i, n in enumerate(names) if n.startswith("emitter.")]
    result = {}
    for fusion, idx in by_fusion(rows).items():
        x = X[idx]

        def median(name):
            column = x[:, index[name]]
            return 0.0 if np.isnan(column).all() else float(np.nanmedian(column))

        shape = [np.log1p(median("bytes.total")), median("bytes.element"),
                 np.log1p(median("flops.per_byte")), median("code.half_lanes_per_instruction"),
                 median("code.gather_lanes_per_instruction"),
                 median("analytic.memory_us") / max(1e-6, median("analytic.us")),
                 np.log(np.nanmin(x[:, index["analytic.us"]])), median("code.division_share"),
                 median("code.vector_share")]
        result[fusion] = (np.nan_to_num(3 * np.nanmax(x[:, emitters], axis=0)),
                          np.nan_to_num(np.array(shape)), idx)
    return result


def nearest(files):
    names, train, _ = files[0][1]
    X = matrix(train)
    analytic = np.log([r["analytic_us"] for r in train])
    measured = np.log([r["measured_us"] for r in train])
    known = descriptors(names, train, X)
    fusions = list(known)
    shapes = np.array([known[f][1] for f in fusions])
    mean, spread = shapes.mean(0), shapes.std(0) + 1e-9
    points = np.array([np.r_[known[f][0], (known[f][1] - mean) / spread] for f in fusions])
    judged_files = []
    for _, (_, _, judged) in files:
        Xj = matrix(judged)
        judged_files.append((judged, Xj, np.log([r["analytic_us"] for r in judged]),
                             descriptors(names, judged, Xj)))
    for k in (40, 100, 200):
        figures = []
        for judged, Xj, judged_analytic, judged_descriptors in judged_files:
            rho = []
            for emitter, shape, idx in judged_descriptors.values():
                point = np.r_[emitter, (shape - mean) / spread]
                near = np.argsort(((points - point) ** 2).sum(1))[:k]
                rows = np.concatenate([known[fusions[n]][2] for n in near])
                value = 0
                for seed in range(3):
                    booster = xgb.train(booster_params(seed, depth=4), xgb.DMatrix(X[rows], label=measured[rows],
                                                            base_margin=analytic[rows]), 100)
                    value = value + booster.predict(xgb.DMatrix(Xj[idx])) / 3
                rho.append(fusion_score(judged, idx, judged_analytic[idx] + 0.5 * value))
            figures.append(np.mean(rho))
        print(f"{k} nearest fusions", " ".join(f"{x:.3f}" for x in figures),
              f"mean {np.mean(figures):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", choices=["ceiling", "ablate", "share", "context",
                                               "nearest"])
    parser.add_argument("rows", nargs="+", help="`model_bench --dump-rows` files")
    args = parser.parse_args()
    files = [(path, load(path)) for path in args.rows]
    widths = {len(names) for _, (names, _, _) in files}
    if len(widths) != 1:
        sys.exit("the files have different feature schemas; dump them with one model_bench")
    if args.experiment == "ceiling":
        ceiling(files)
    elif args.experiment == "ablate":
        ablate(files)
    elif args.experiment == "share":
        transfer(files, (0.25, 0.5, 0.75, 1.0, 1.5), add_context=False)
    elif args.experiment == "context":
        transfer(files, (0.5,), add_context=True)
    else:
        nearest(files)


if __name__ == "__main__":
    main()
