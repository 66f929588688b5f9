#!/usr/bin/env python3
"""tilesmith's GPU kernels against XLA's own GPU kernels on this machine, fusion by fusion.

    bench/gpu_compare.py [--platform cuda|cpu] [--target cuda:0|host] [--quick] [--json OUT]
                         [--tilesmith PATH] [--budget N] [--corpus-sample N] [--copy-mib N]
                         [--flush-mib N] [FILE.hlo ...]

Runs on a GPU host with the bundle of scripts/device-bundle and JAX with its CUDA plugin
(docs/gpu.md). For every fusion (bench/corpus/*.hlo, configs/examples/*.hlo and a fixed
sample of $TILESMITH_CORPUS_DIR/xla/**/*.hlo, or the files given), in one run, the flow of
bench/xla_compare.py (whose functions this script calls) on another backend:

- tilesmith: `tilesmith tune FILE --target cuda:0 --strategy best-first --budget N --json`
  gives the default and the tuned config's kernel time (the L2 flushed with a memset before
  each launch; median and 20th percentile): CUPTI's kernel duration (its activity API), as
  XLA's profiler reports it, with the CUDA-event time of the same launches kept beside it
  (default_event_us, tuned_event_us); where CUPTI cannot record, the event time, and the row's
  tilesmith_timing says cuda-events;
- XLA: the same HLO text through XLA's own parser, compiled by the CUDA client with the
  fusion's layouts pinned, in a child process, timed once before and once after the tune
  (the lower median counts). Per repetition a 256 MiB device buffer is rewritten (more than
  twice the L2 of an H100/H200/B200) and waited for, then one call is timed to
  block_until_ready; after a warm-up, the median and the 20th percentile. That wall-clock
  time includes XLA's launch and dispatch (see xla_call_floor_us, an f32[] negate), which
  tilesmith's CUDA-event times do not. So the same repetitions are also recorded with JAX's
  profiler: where it has device events (CUPTI, on a GPU), the kernels whose events name the
  fusion's module are summed per call, and that kernel time (xla_kernel_us) is the XLA
  time the ratios use; elsewhere the wall-clock time is (the JSON's xla_time says which).
  A third figure, xla_pipelined_us, times k back-to-back calls with one wait at the end:
  dispatch overlapped, but the L2 warm. The summary's `timing` names the method of each
  side (cupti-kernel on both, on a GPU with CUPTI) and whether they are the same;
- copy bandwidth: a device-side `x + s` over a --copy-mib f32 array (s = 0 passed at run
  time, so XLA cannot drop it), timed the same way, read plus write bytes per second;
- outputs: the same random inputs go to XLA and, as .npy files, to `tilesmith run --target
  host` (the default config; the tuned one too when the target is the host); tilesmith's
  GPU kernels are verified against its evaluator by the tune itself;
- ratios: tilesmith ÷ XLA (below 1: tilesmith is faster), default and tuned, per fusion and
  geometric means over the fusions whose outputs agreed; bandwidth fractions: the fusion's
  parameter and output bytes ÷ time ÷ the copy bandwidth, for XLA, default and tuned.

`--platform cpu --target host` runs the same flow against XLA:CPU and tilesmith's host
kernels (a check of the script where there is no GPU; bench/xla_compare.py is the host
benchmark). Without jax, or without a device of --platform, or when tilesmith finds no GPU
for --target, it says so in one line and exits 0.
"""

import argparse
import functools
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xla_compare  # noqa: E402  (the host comparison's flow, parametrised by backend)

ROOT = xla_compare.ROOT

# Profiler lines that summarise a device's kernels rather than list them.
DERIVED = ("XLA Modules", "XLA Ops", "XLA TraceMe", "Steps", "Framework", "Source code")

# What tilesmith says when --target names a GPU it cannot time on.
NO_GPU = re.compile(r"no GPU here|no CUDA driver|none was timed|libcuda\.so")


class NoDevice(Exception):
    """tilesmith cannot time on --target here: the run stops, skipped."""


class DeviceTimer:
    """Times XLA calls on a device (bench/xla_compare.py's HostTimer interface): flushed
    wall-clock per call, the profiler's kernel time of the same calls, and pipelined calls."""

    planes = "/device:"  # the profiler's planes whose events are kernels (CUPTI's, on a GPU)

    def __init__(self, xla, flush_bytes):
        import jax
        import numpy as np
        self.xla = xla
        self.jax = jax
        buffer = np.zeros(flush_bytes // 4, dtype=np.float32)
        self.buffer = jax.device_put(buffer, xla.devices[0])
        self.rewrite = jax.jit(flush_l2, donate_argnums=0)

    def flush(self):
        """Rewrites the flush buffer on the device and waits: the L2 holds none of the call's
        data afterwards."""
        self.buffer = self.rewrite(self.buffer)
        self.buffer.block_until_ready()

    def measure(self, launch, module=None):
        """Times `launch()` (one call, returning its outputs); `module`: the HLO module name
        its kernels carry (default: the last one xla compiled)."""
        seconds, reps, p20 = xla_compare.time_it(lambda: xla_compare.block(launch()),
                                                 self.flush)
        kernel, why = self.kernel_times(launch, reps, module or self.xla.module_name)
        times = {"xla_wall_us": seconds * 1e6, "xla_wall_p20_us": p20 * 1e6, "xla_reps": reps,
                 "xla_pipelined_us": self.pipelined(launch, seconds) * 1e6,
                 "xla_kernel_us": None, "xla_kernel_p20_us": None}
        if kernel:
            times.update(xla_kernel_us=statistics.median(kernel) * 1e6,
                         xla_kernel_p20_us=sorted(kernel)[len(kernel) // 5] * 1e6,
                         xla_kernels_per_call=why, xla_time="kernel")
        else:
            times.update(xla_time="wall", xla_kernel_missing=why)
        times["xla_us"] = times["xla_%s_us" % times["xla_time"]]
        times["xla_p20_us"] = times["xla_%s_p20_us" % times["xla_time"]]
        return times

    def pipelined(self, launch, single_s, rounds=5):
        """Seconds per call of k back-to-back calls (k calls ≈ 10 ms), one wait at the end."""
        k = max(10, min(1000, int(0.01 / max(single_s, 1e-6))))
        per_call = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(k):
                outputs = launch()
            xla_compare.block(outputs)
            per_call.append((time.perf_counter() - start) / k)
        return statistics.median(per_call)

    def kernel_times(self, launch, reps, name):
        """(seconds per call, kernels per call) from the profiler's device planes, or (None,
        why not). A call's kernels are the device events that name the compiled module
        (their hlo_module stat or annotation); the flush's module has another name. Lines
        a trace viewer derives from the kernels (XLA Modules, XLA Ops, Steps) are left out,
        should a plane carry them, so that no kernel counts twice."""
        try:
            from jax.profiler import ProfileData
            with tempfile.TemporaryDirectory() as trace:
                self.jax.profiler.start_trace(trace)
                try:
                    for _ in range(reps):
                        self.flush()
                        xla_compare.block(launch())
                finally:
                    self.jax.profiler.stop_trace()
                files = glob.glob(os.path.join(trace, "**", "*.xplane.pb"), recursive=True)
                if not files:
                    return None, "the profiler wrote no trace"
                data = ProfileData.from_file(files[0])
                events = sorted((event.start_ns, event.duration_ns)
                                for plane in data.planes if plane.name.startswith(self.planes)
                                for line in plane.lines if not line.name.startswith(DERIVED)
                                for event in line.events if names_module(event, name))
        except Exception as error:  # noqa: BLE001 (a profiler problem costs only this figure)
            return None, "profiler: %s" % (str(error).splitlines() or ["?"])[0]
        if not events:
            return None, "no device events name module %s (no CUPTI, or not a GPU)" % name
        if len(events) % reps:
            return None, "%d device events for %d calls" % (len(events), reps)
        per_call = len(events) // reps
        return [sum(d for _, d in events[i * per_call:(i + 1) * per_call]) * 1e-9
                for i in range(reps)], per_call


def flush_l2(buffer):
    """The flush: every element rewritten (its module, jit_flush_l2, is not the fusion's)."""
    return buffer + 1


def names_module(event, name):
    """Whether a profiler event belongs to HLO module `name`: a stat equal to it, or an
    annotation naming it (`hlo_module=NAME,` or `hlo_module=NAME#`)."""
    for _, value in event.stats:
        text = str(value)
        if text == name or re.search(r"hlo_module=%s(?:[,#]|$)" % re.escape(name), text):
            return True
    return False


def copy_bandwidth(x, s):
    """The copy of the bandwidth figure: s is 0 at run time, which XLA cannot know."""
    return x + s


def bandwidth_child(platform, mib, flush_mib, out):
    """Runs in its own process: the device's copy bandwidth, written to OUT as JSON. The
    array is donated and each call's output is the next call's input, so no call allocates
    (on the host a fresh 1 GiB output would be page faults, not copying)."""
    import jax
    import numpy as np
    xla = xla_compare.Xla(platform)
    timer = DeviceTimer(xla, flush_mib << 20)
    copy = jax.jit(copy_bandwidth, donate_argnums=0)
    state = [xla.put(np.ones((mib << 20) // 4, dtype=np.float32)), xla.put(np.float32(0))]

    def launch():
        state[0] = copy(*state)
        return state[:1]

    times = timer.measure(launch, module="jit_copy_bandwidth")
    moved = 2 * (mib << 20)
    result = {"bytes": moved, "copy_us": times["xla_us"], "time": times["xla_time"],
              "gb_per_s": moved / times["xla_us"] / 1e3,
              "pipelined_gb_per_s": moved / times["xla_pipelined_us"] / 1e3,
              "wall_gb_per_s": moved / times["xla_wall_us"] / 1e3}
    with open(out, "w") as f:
        json.dump(result, f)


def run_child(*arguments):
    """A child of this script (`--bandwidth-child …`) that writes JSON to its last argument."""
    child = subprocess.run([sys.executable, os.path.abspath(__file__)] + list(arguments),
                           capture_output=True, text=True, timeout=600)
    if child.returncode != 0:
        lines = child.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else "exit %d" % child.returncode)
    with open(arguments[-1]) as f:
        return json.load(f)


def measure(path, args, work, bandwidth):
    """One fusion: bench/xla_compare.py's measure on --platform and --target, then the
    bandwidth fractions of XLA's, the default and the tuned time."""
    run_xla = functools.partial(xla_compare.run_xla_child, script=__file__,
                                extra=[args.platform, str(args.flush_mib)],
                                label="XLA:" + args.platform.upper())
    try:
        row = xla_compare.measure(path, args, work, args.target, run_xla)
    except RuntimeError as error:
        if str(error).startswith("tilesmith tune") and NO_GPU.search(str(error)):
            raise NoDevice(str(error)) from None
        raise
    for label in ("xla", "default", "tuned"):
        row[label + "_bandwidth_fraction"] = (
            row["bytes"] / (row[label + "_us"] * 1e-6) / (bandwidth["gb_per_s"] * 1e9))
    return row


def tilesmith_times_here(args, path):
    """None when `tilesmith tune` can time on --target here, else its reason: one config of
    the first fusion tuned up front (a GPU target without a GPU or driver fails at once or
    after compiling it), so no XLA work is spent before finding out."""
    if args.target == "host":
        return None
    with tempfile.TemporaryDirectory() as work:
        probe = subprocess.run([args.tilesmith, "tune", path, "--target", args.target,
                                "--db", os.path.join(work, "probe.db"), "--budget", "1",
                                "--quiet", "--json"], capture_output=True, text=True,
                               timeout=600)
    said = probe.stderr.strip().splitlines()
    if probe.returncode != 0 and said and NO_GPU.search(said[-1]):
        return said[-1]
    try:
        untimed = json.loads(probe.stdout).get("timed") is False
    except ValueError:
        untimed = False
    if untimed:  # compiled and predicted, not timed (a `cuda:sm_XX` target without a GPU)
        return said[-1] if said else "tilesmith tune on %s timed nothing" % args.target
    return None


def summarise(summary):
    good = [r for r in summary["fusions"] if "error" not in r and r["agree"]]
    mean = xla_compare.geomean
    summary["geomean"] = {"fusions": len(good)}
    for key in ("default_vs_xla", "tuned_vs_xla", "default_vs_xla_p20", "tuned_vs_xla_p20"):
        summary["geomean"][key] = mean([r[key] for r in good])
    summary["geomean"]["tuned_vs_xla_pipelined"] = mean(
        [r["tuned_us"] / r["xla_pipelined_us"] for r in good])
    for label in ("xla", "default", "tuned"):
        key = label + "_bandwidth_fraction"
        summary["geomean"][key] = mean([r[key] for r in good])


# How each side's times were taken, as the summary and the caption name them.
METHOD_TEXT = {"cupti-kernel": "kernel durations from CUPTI",
               "cuda-events": "CUDA events around each launch (launch cost included)",
               "wall-clock": "wall clock per call, dispatch included",
               "host-clock": "the host's clock around each kernel call"}


def timing_methods(ran):
    """{xla, tilesmith, same}: the method of every row's XLA and tilesmith time, or
    "mixed (…)" where rows differ. XLA's kernel time is its profiler's CUPTI device events."""
    def one(methods):
        methods = sorted(set(methods))
        if not methods:
            return None
        return methods[0] if len(methods) == 1 else "mixed (%s)" % ", ".join(methods)
    xla = one("cupti-kernel" if r["xla_time"] == "kernel" else "wall-clock" for r in ran)
    tilesmith = one(r.get("tilesmith_timing", "host-clock") for r in ran)
    return {"xla": xla, "tilesmith": tilesmith,
            "same": xla is not None and xla == tilesmith and not xla.startswith("mixed")}


def timing_line(timing):
    """The caption's sentence naming both sides' timing methods."""
    def text(method):
        return "%s (%s)" % (METHOD_TEXT.get(method, method), method) if method else "none"
    line = "Timing: XLA %s; tilesmith %s" % (text(timing["xla"]), text(timing["tilesmith"]))
    return line + (": one method on both sides." if timing["same"] else
                   "; the sides are timed differently, so the ratios compare unlike figures.")


def markdown(summary):
    copy = summary["copy_bandwidth"]
    lines = ["tilesmith (%s, target %s) vs XLA (jax %s, %s) on %s; time ratio tilesmith ÷ XLA "
             "(below 1: tilesmith faster); %% of copy bandwidth = fusion bytes ÷ time ÷ "
             "%.1f GB/s (%s MiB f32 `x + s`, measured in this run)." % (
                 summary["tilesmith_device"] or "?", summary["target"],
                 summary["jax_version"], summary["platform"], summary["device"],
                 copy["gb_per_s"], summary["copy_mib"]),
             "XLA's time: %s." % ("kernel time from JAX's profiler (CUPTI)"
                                  if summary["xla_time"] == "kernel" else
                                  "wall clock per call after an L2 flush, dispatch included "
                                  "(%.1f µs for an f32[] negate)" % (
                                      summary["xla_call_floor_us"] or float("nan"))),
             timing_line(summary["timing"]),
             "",
             "| fusion | emitter | MB | XLA µs | default µs | tuned µs | default ÷ XLA | "
             "tuned ÷ XLA | XLA %BW | default %BW | tuned %BW | outputs |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in summary["fusions"]:
        name = os.path.basename(row["file"])[:-4]
        if "error" in row:
            lines.append("| %s | %s |%s skipped: %s |" % (
                name, row.get("emitter") or "?", " — |" * 9,
                row["error"].replace("|", "/")[:120]))
            continue
        lines.append("| %s | %s | %.2f | %.1f | %.1f | %.1f | %.2f | %.2f | %.0f | %.0f | %.0f "
                     "| %s |" % (
                         name, row["emitter"], row["bytes"] / 1e6, row["xla_us"],
                         row["default_us"], row["tuned_us"], row["default_vs_xla"],
                         row["tuned_vs_xla"], 100 * row["xla_bandwidth_fraction"],
                         100 * row["default_bandwidth_fraction"],
                         100 * row["tuned_bandwidth_fraction"],
                         "agree" if row["agree"] else "DIFFER (%.2g)" % row["largest_error"]))
    g = summary["geomean"]
    if g["fusions"]:
        lines.append("| **geomean** (%d fusions) | | | | | | **%.2f** | **%.2f** | %.0f | %.0f "
                     "| %.0f | |" % (
                         g["fusions"], g["default_vs_xla"], g["tuned_vs_xla"],
                         100 * g["xla_bandwidth_fraction"],
                         100 * g["default_bandwidth_fraction"],
                         100 * g["tuned_bandwidth_fraction"]))
        lines += ["", "Medians above; from the 20th percentiles: geomean %.2f default, %.2f "
                  "tuned. Against XLA's pipelined calls (dispatch hidden, L2 warm): tuned ÷ XLA "
                  "%.2f." % (g["default_vs_xla_p20"], g["tuned_vs_xla_p20"],
                             g["tuned_vs_xla_pipelined"])]
    return "\n".join(lines)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    build = os.environ.get("TILESMITH_BUILD_DIR", os.path.join(ROOT, "build"))
    # An unpacked bundle with bench/ copied into it has ./tilesmith at its root.
    bundled = os.path.join(ROOT, "tilesmith")
    parser.add_argument("files", nargs="*")
    parser.add_argument("--platform", default="cuda",
                        help="JAX platform of XLA's side: cuda (default) or cpu")
    parser.add_argument("--target", help="tilesmith tune's target (default: cuda:0, or host "
                                         "with --platform cpu)")
    parser.add_argument("--quick", action="store_true", help="four fusions, budget 4")
    parser.add_argument("--json", help="write the summary here")
    parser.add_argument("--markdown", help="write the Markdown table here too")
    parser.add_argument("--tilesmith", default=bundled if os.access(bundled, os.X_OK)
                        else os.path.join(build, "bin", "tilesmith"))
    parser.add_argument("--budget", type=int, help="configs tuned per fusion (default 8)")
    parser.add_argument("--corpus-sample", type=int, default=8,
                        help="shared XLA corpus files in the full run (default 8)")
    parser.add_argument("--copy-mib", type=int,
                        help="size of the copy-bandwidth array (default 1024; 256 on cpu)")
    parser.add_argument("--flush-mib", type=int,
                        help="buffer rewritten before each XLA repetition (default 256; on "
                             "cpu 1.5x the last-level cache)")
    args = parser.parse_args()
    cpu = args.platform == "cpu"
    args.target = args.target or ("host" if cpu else "cuda:0")
    args.budget = args.budget or (4 if args.quick else 8)
    args.copy_mib = args.copy_mib or (256 if cpu else 1024)
    llc_mib = (xla_compare.last_level_cache_bytes() * 3 // 2 + (1 << 20) - 1) >> 20
    args.flush_mib = args.flush_mib or (llc_mib if cpu else 256)
    return args


def child_main(argv):
    """The child processes' entry points; None when argv is not one."""
    if len(argv) == 6 and argv[1] in ("--xla-child", "--xla-child-time"):
        timer = functools.partial(DeviceTimer, flush_bytes=int(argv[5]) << 20)
        xla_compare.xla_child(argv[2], argv[3], time_only=argv[1] == "--xla-child-time",
                              platform=argv[4], timer=timer)
        return 0
    if len(argv) == 6 and argv[1] == "--bandwidth-child":
        bandwidth_child(argv[2], int(argv[3]), int(argv[4]), argv[5])
        return 0
    return None


def skipped(why):
    print("gpu_compare: skipped: %s" % why, file=sys.stderr)
    return 0


def main():
    # JAX takes 75% of a GPU's memory at start unless told not to; tilesmith needs some.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    status = child_main(sys.argv)
    if status is not None:
        return status
    args = parse_args()
    try:
        import numpy  # noqa: F401
        import ml_dtypes  # noqa: F401
        import jax
    except ImportError as error:
        return skipped("%s (install jax with its CUDA plugin, e.g. pip install "
                       "'jax[cuda12]', and run this with that python; docs/gpu.md)" % error)
    try:
        device = jax.devices(args.platform)[0]
    except RuntimeError as error:
        return skipped("JAX has no %s device here (%s)" % (
            args.platform, (str(error).splitlines() or ["?"])[0]))
    if not os.access(args.tilesmith, os.X_OK):
        sys.exit("gpu_compare: no tilesmith at %s (--tilesmith PATH)" % args.tilesmith)
    summary = {"platform": args.platform, "target": args.target,
               "device": getattr(device, "device_kind", str(device)),
               "jax_version": jax.__version__, "budget": args.budget,
               "copy_mib": args.copy_mib, "flush_mib": args.flush_mib, "fusions": []}
    files = xla_compare.fusion_files(args)
    if not files:
        sys.exit("gpu_compare: no fusions found (bench/corpus/, configs/examples/, FILE…)")
    why = tilesmith_times_here(args, files[0])
    if why:
        return skipped("tilesmith cannot time on %s here: %s" % (args.target, why))
    print("gpu_compare: %d fusions, XLA on %s (%s), tilesmith --target %s, budget %d" % (
        len(files), args.platform, summary["device"], args.target, args.budget),
        file=sys.stderr)
    with tempfile.TemporaryDirectory() as work:
        summary["copy_bandwidth"] = run_child("--bandwidth-child", args.platform,
                                              str(args.copy_mib), str(args.flush_mib),
                                              os.path.join(work, "bandwidth.json"))
    print("gpu_compare: copy bandwidth %.1f GB/s" % summary["copy_bandwidth"]["gb_per_s"],
          file=sys.stderr)
    for index, path in enumerate(files, 1):
        with tempfile.TemporaryDirectory() as work:
            try:
                row = measure(path, args, work, summary["copy_bandwidth"])
            except NoDevice as error:
                return skipped("tilesmith cannot time on %s here: %s" % (args.target, error))
            except Exception as error:  # noqa: BLE001 (one fusion's failure is its row)
                row = {"file": xla_compare.display_path(path),
                       "error": (str(error).strip().splitlines() or ["?"])[0][:300]}
        summary["fusions"].append(row)
        if "error" in row:
            print("gpu_compare %d/%d  %s  skipped: %s" % (index, len(files), row["file"],
                                                          row["error"]), file=sys.stderr)
            continue
        print("gpu_compare %d/%d  %s  XLA %.1f us (%s), default %.1f us (%.2fx), tuned %.1f us "
              "(%s; %.2fx, %.0f%% of copy bandwidth), outputs %s" % (
                  index, len(files), row["file"], row["xla_us"], row["xla_time"],
                  row["default_us"], row["default_vs_xla"], row["tuned_us"],
                  row.get("tilesmith_timing", "host-clock"),
                  row["tuned_vs_xla"], 100 * row["tuned_bandwidth_fraction"],
                  "agree" if row["agree"] else "DIFFER"), file=sys.stderr)
    ran = [r for r in summary["fusions"] if "error" not in r]
    summary["xla_time"] = "kernel" if ran and all(r["xla_time"] == "kernel" for r in ran) \
        else "wall"
    summary["xla_call_floor_us"] = (statistics.median(r["xla_call_floor_us"] for r in ran)
                                    if ran else None)
    summary["tilesmith_device"] = ran[0].get("tilesmith_device") if ran else None
    summary["timing"] = timing_methods(ran)
    print("gpu_compare: " + timing_line(summary["timing"]), file=sys.stderr)
    summarise(summary)
    xla_compare.write_results(args, summary, markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
