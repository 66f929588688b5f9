#!/usr/bin/env python3
"""Run-to-run agreement: the same fusions tuned twice, each time into a fresh database.

    bench/agreement.py --tilesmith BIN [--quick] [--json OUT] [FUSION.hlo ...]

Per fusion: the Spearman rank correlation of the two runs' config times (the median of
each config's latest trial, over the configs both runs measured), and whether the two runs'
noise-aware verdicts agree (the same reported config; the same significant/not). Both runs
tune exhaustively with the same budget and seed, so they measure the same configs. On small
kernels the search's ranking is mostly noise (correlations well under 1), which is why an
answer carries its verdict. Standard library only (sqlite3 reads the databases).
"""

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

from compare_timings import ranks  # the same tie rule as the timing comparisons

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUSIONS = [
    "tests/data/tuner/gelu_f32.hlo",
    "bench/corpus/softmax_broadcast_divide_fusion.hlo",
    "bench/corpus/layer_norm_broadcast_subtract_fusion.hlo",
    "bench/corpus/adam_multiply_add_fusion.hlo",
]
QUICK_FUSIONS = FUSIONS[:2]


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va > 0 and vb > 0 else None


def config_times(db):
    """config_hash -> median of its latest verified trial."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT config_hash, median_us FROM measurements WHERE status = 'ok' "
            "ORDER BY measured_at").fetchall()
    return {h: t for h, t in rows}


def tune(binary, fusion, db, args):
    command = [binary, "tune", fusion, "--target", "host", "--db", db, "--strategy",
               "exhaustive", "--budget", str(args.budget), "--warmup-ms", "2", "--rep-ms", "10",
               "--json", "--quiet"]
    if args.confirm_time_s:
        command += ["--confirm-time-s", str(args.confirm_time_s)]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("%s: %s" % (fusion, run.stderr.strip()[-400:]))
    return json.loads(run.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tilesmith", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--confirm-time-s", type=float, default=0)
    parser.add_argument("fusions", nargs="*")
    args = parser.parse_args()
    fusions = args.fusions or [os.path.join(ROOT, f)
                               for f in (QUICK_FUSIONS if args.quick else FUSIONS)]
    start = time.monotonic()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for n, fusion in enumerate(fusions):
            runs, times = [], []
            for r in range(2):
                db = os.path.join(work, "%d_%d.db" % (n, r))
                runs.append(tune(args.tilesmith, fusion, db, args))
                times.append(config_times(db))
            common = sorted(set(times[0]) & set(times[1]))
            rho = spearman([times[0][h] for h in common], [times[1][h] for h in common])
            a, b = runs
            same_config = a["best"]["config"] == b["best"]["config"]
            same_significance = a.get("significant") == b.get("significant")
            rows.append({
                "fusion": os.path.relpath(fusion, ROOT),
                "configs": len(common),
                "spearman": rho,
                "verdicts": [{"config": x["best"]["config"], "significant": x.get("significant"),
                              "speedup": x.get("speedup"), "speedup_low": x.get("speedup_low"),
                              "speedup_high": x.get("speedup_high"),
                              "reason": (x.get("verdict") or {}).get("reason")} for x in runs],
                "search_winners_agree": (a.get("search_best") or a["best"])["config"] ==
                                        (b.get("search_best") or b["best"])["config"],
                "verdicts_agree": same_config and same_significance,
            })
            print("%-55s configs %3d  spearman %s  search winners %s  verdicts %s (%s / %s)" % (
                rows[-1]["fusion"], len(common), "%.2f" % rho if rho is not None else "-",
                "agree" if rows[-1]["search_winners_agree"] else "differ",
                "agree" if rows[-1]["verdicts_agree"] else "differ",
                "significant" if a.get("significant") else "not significant",
                "significant" if b.get("significant") else "not significant"), file=sys.stderr)
    rhos = [r["spearman"] for r in rows if r["spearman"] is not None]
    summary = {
        "fusions": len(rows),
        "mean_spearman": sum(rhos) / len(rhos) if rhos else None,
        "min_spearman": min(rhos) if rhos else None,
        "search_winners_agree": sum(r["search_winners_agree"] for r in rows),
        "verdicts_agree": sum(r["verdicts_agree"] for r in rows),
        "seconds": time.monotonic() - start,
        "rows": rows,
    }
    print("run-to-run: mean Spearman %s over %d fusions; search winners agree %d/%d, "
          "verdicts agree %d/%d (%.0f s)" % (
              "%.2f" % summary["mean_spearman"] if rhos else "-", len(rows),
              summary["search_winners_agree"], len(rows), summary["verdicts_agree"], len(rows),
              summary["seconds"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
