#!/usr/bin/env python3
"""Gathers the JSON every benchmark of one `scripts/bench` run wrote into one summary.

    bench/summary.py PREFIX [--out OUT.json] [--quick]

Reads PREFIX.parser.json, PREFIX.host_kernels.json, PREFIX.emitters.json,
PREFIX.compile.json, PREFIX.service.json, PREFIX.model.json, PREFIX.agreement.json,
PREFIX.tuning_gain.*.json and
PREFIX.xla.json (whichever exist), writes {machine, date, quick, benches: {...}} to OUT and
prints a Markdown section for docs/benchmarks.md: the machine, one line per
benchmark with its headline ratios, and the per-fusion table against XLA:CPU. Standard
library only.
"""

import argparse
import datetime
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xla_compare  # noqa: E402 (machine(), markdown(): one definition of each)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def pct(x):
    return "%.0f%%" % (100 * x)


def rows(benches):
    """(benchmark, headline) pairs for the benches that ran."""
    out = []
    parser = benches.get("parser")
    if parser and parser.get("parser"):
        largest = max(parser["parser"], key=lambda r: r["instructions"])
        text = "%.0f MB/s at %dk instructions (time per MB %.2f× the smallest)" % (
            largest["megabytes_per_second"], largest["instructions"] // 1000,
            largest["seconds_per_megabyte_vs_smallest"])
        adds = parser.get("adds")
        if adds:
            text += "; %.0f MB/s at %dk plain adds" % (adds["megabytes_per_second"],
                                                       adds["instructions"] // 1000)
        if "growth_exponent" in parser:
            text += "; growth exponent %.2f" % parser["growth_exponent"]
        if parser.get("peak_memory_vs_text", -1) >= 0:
            text += "; peak memory %.1f× the text" % parser["peak_memory_vs_text"]
        out.append(("parser", text))
    host = benches.get("host_kernels")
    if host:
        parts = ["%s %s" % (f["name"], pct(f["fraction_of_copy"])) for f in host["fusions"]]
        out.append(("host kernels ÷ copy bandwidth (%.1f GB/s)" % (
            host["copy_bytes_per_second"] / 1e9), ", ".join(parts)))
    emitters = benches.get("emitters")
    if emitters:
        parts = ["%s %s→%s" % (f["name"], pct(f["default_fraction_of_copy"]),
                                 pct(f["best_fraction_of_copy"])) for f in emitters["fusions"]]
        out.append(("emitters ÷ copy bandwidth, default→best (%.1f GB/s)" % (
            emitters["copy_bytes_per_second"] / 1e9), ", ".join(parts)))
    compile_ = benches.get("compile")
    if compile_ and "gelu_default" in compile_:
        g = compile_["gelu_default"]
        text = "GELU candidate: %.1f ms to PTX, %.1f ms to cubin" % (
            g["to_ptx"]["median_ms"], g["to_cubin"]["median_ms"])
        if "pool" in compile_:
            text += "; pool of %d: %.1f candidates/s" % (
                compile_["pool"]["workers"], compile_["pool"]["candidates_per_second"])
        out.append(("compile throughput (%s)" % compile_.get("target", "cuda"), text))
    service = benches.get("service")
    if service:
        text = "%.0f requests/s, p50 %.2f ms, p99 %.2f ms (%d connections, saturated)" % (
            service["requests_per_s"], service["p50_ms"], service["p99_ms"],
            service["connections"])
        if "offered_requests_per_s" in service:
            text += "; at %.0f requests/s offered: p50 %.2f ms, p99 %.2f ms" % (
                service["offered_requests_per_s"], service["open_loop_p50_ms"],
                service["open_loop_p99_ms"])
        text += "; %d-fusion batch %.0f ms cold, %.0f ms warm" % (
            service["batch_size"], service["batch_cold_ms"], service["batch_warm_ms"])
        out.append(("service /v1/query", text))
    model = benches.get("model")
    if model:
        out.append(("host cost model", "median Spearman %.2f over %d fusions; best-first "
                    "within 5%% of the best after %s of the configs (random order: %s)" % (
                        model["median_spearman"], len(model["fusions"]),
                        pct(model["median_share"]), pct(model["median_random_share"]))))
    for name, gain in sorted(benches.get("tuning_gain", {}).items()):
        if gain.get("geomean_speedup"):
            out.append(("tuning gain: %s" % name, "geomean %.2f× over %d fusions (default ÷ "
                        "tuned)" % (gain["geomean_speedup"], gain["geomean_rows"])))
    agreement = benches.get("agreement")
    if agreement and agreement.get("fusions"):
        out.append(("run-to-run agreement", "mean Spearman %.2f (min %.2f) of config times "
                    "over %d fusions tuned twice; search winners agree %d, verdicts agree %d" % (
                        agreement["mean_spearman"] or 0, agreement["min_spearman"] or 0,
                        agreement["fusions"], agreement["search_winners_agree"],
                        agreement["verdicts_agree"])))
    xla = benches.get("xla")
    if xla and xla.get("geomean", {}).get("fusions"):
        g = xla["geomean"]
        out.append(("tilesmith ÷ XLA:CPU time", "geomean %.2f default, %.2f tuned over %d "
                    "fusions (below 1: tilesmith faster)" % (
                        g["default_vs_xla"], g["tuned_vs_xla"], g["fusions"])))
    elif xla and xla.get("skipped"):
        out.append(("tilesmith ÷ XLA:CPU time", "skipped: " + xla["skipped"]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefix")
    parser.add_argument("--out")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    benches = {}
    for name in ("parser", "host_kernels", "emitters", "compile", "service", "model", "agreement",
                 "xla"):
        data = load("%s.%s.json" % (args.prefix, name))
        if data is not None:
            benches[name] = data
    gains = {}
    for path in sorted(glob.glob("%s.tuning_gain.*.json" % args.prefix)):
        data = load(path)
        if data is not None:
            gains[path[len(args.prefix) + len(".tuning_gain."):-len(".json")]] = data
    if gains:
        benches["tuning_gain"] = gains
    machine = xla_compare.machine()
    summary = {"machine": machine, "date": datetime.datetime.now(datetime.timezone.utc)
               .strftime("%Y-%m-%d %H:%M UTC"), "quick": args.quick, "benches": benches}
    summary["load_average"] = os.getloadavg()[0]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    print("Measured with `scripts/bench%s` on %s (%d cores), %s; load average %.1f at the "
          "end (other work on the machine moves every figure)." % (
              " --quick" if args.quick else "", machine["cpu"], machine["online_cores"],
              summary["date"], summary["load_average"]))
    print()
    print("| benchmark | result |")
    print("| --- | --- |")
    for name, text in rows(benches):
        print("| %s | %s |" % (name, text.replace("|", "/")))
    xla = benches.get("xla")
    if xla and xla.get("fusions"):
        print()
        print(xla_compare.markdown(xla))
    return 0


if __name__ == "__main__":
    sys.exit(main())
