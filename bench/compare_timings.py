#!/usr/bin/env python3
"""How well two `model_bench --save-timings` runs agree with each other.

    bench/compare_timings.py A.json B.json [--detail]

For every fusion both files timed, the Spearman rank correlation between A's and B's times
of the configs both timed (ties get their average rank), and the fusion's median time in A.
Prints the mean and median over fusions, the same by fusion size (median config under
100 us, 100 us to 1 ms, over 1 ms), and how often A's best config is within 5% of B's best
in B. No model ranks one run better than the runs agree with each other. Standard library
only.
"""

import argparse
import json
import statistics
import sys


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2.0
        i = j + 1
    return result


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va > 0 and vb > 0 else 0.0


def load(path):
    with open(path) as f:
        data = json.load(f)
    return {
        fusion: {json.dumps(e["config"], sort_keys=True): e["us"] for e in entries}
        for fusion, entries in data["fusions"].items()
    }


def compare(a, b):
    """Rows of (fusion, configs, spearman, median_us in a, a's best within 5% in b)."""
    rows = []
    for fusion in sorted(set(a) & set(b)):
        keys = sorted(set(a[fusion]) & set(b[fusion]))
        if len(keys) < 3:
            continue
        ta = [a[fusion][k] for k in keys]
        tb = [b[fusion][k] for k in keys]
        best_a = min(range(len(keys)), key=lambda i: ta[i])
        rows.append((fusion, len(keys), spearman(ta, tb), statistics.median(ta),
                     tb[best_a] <= 1.05 * min(tb)))
    return rows


def summary(label, rows):
    if not rows:
        return f"{label:>22}: no fusions"
    rho = [r[2] for r in rows]
    return (f"{label:>22}: {len(rows):3d} fusions, spearman mean {statistics.fmean(rho):.3f} "
            f"median {statistics.median(rho):.3f} min {min(rho):.3f}, "
            f"A's best within 5% in B: {sum(r[4] for r in rows)}/{len(rows)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--detail", action="store_true", help="one line per fusion")
    args = parser.parse_args()
    rows = compare(load(args.a), load(args.b))
    if args.detail:
        for fusion, n, rho, median_us, kept in sorted(rows, key=lambda r: r[3]):
            print(f"{fusion:<50} {n:4d} {rho:7.3f} {median_us:11.1f} us"
                  f"{'' if kept else '  best moved'}")
    print(summary("all", rows))
    print(summary("median < 100 us", [r for r in rows if r[3] < 100]))
    print(summary("100 us - 1 ms", [r for r in rows if 100 <= r[3] < 1000]))
    print(summary(">= 1 ms", [r for r in rows if r[3] >= 1000]))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
