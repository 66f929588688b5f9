#!/usr/bin/env python3
"""tilesmith's host kernels against XLA:CPU on this machine, fusion by fusion.

    bench/xla_compare.py [--quick] [--json OUT] [--tilesmith PATH] [--cores N]
                         [--budget N] [--corpus-sample N] [FILE.hlo ...]

For every fusion (bench/corpus/*.hlo, configs/examples/*.hlo and a fixed sample of
$TILESMITH_CORPUS_DIR/xla/**/*.hlo, or the files given), in one run:

- tilesmith: `tilesmith tune FILE --target host --strategy best-first --budget N
  --flush cache --json` gives the default config's and the tuned config's median kernel
  time (the measurer's warm-up, repetitions and last-level-cache write before each, as
  XLA's are timed);
- XLA:CPU: the same HLO text goes through XLA's own parser (`hlo_module_from_text`), into
  an XlaComputation, to StableHLO and through the CPU client's `compile_and_load` with the
  fusion's parameter and result layouts pinned, so XLA compiles the identical computation
  with its own fusion and code generation, in a child process (XLA aborts on some inputs);
  it is timed the same way (warm-up, median and 20th percentile of repetitions, the cache
  flushed before each, outputs allocated by XLA as it always does), once before and once
  after tilesmith's tune, and the lower median counts;
- outputs: the same random inputs (floats uniform in [-1, 1), signed ints in [-8, 8),
  unsigned in [0, 16), pred 50/50: the distribution `tilesmith tune` verifies with; a
  reduce's init parameter gets the reducer's identity) go to XLA and, as .npy files, to
  `tilesmith run` with the default and the tuned config; every output must agree within a
  dtype tolerance;
- ratios: tilesmith's time ÷ XLA's (below 1: tilesmith is faster), default and tuned, per
  fusion and as geometric means over the fusions whose outputs agreed (from the medians,
  and from the 20th percentiles, which other load on a shared machine moves less).

Threads: tilesmith's host kernels run their blocks on a pool of one thread per core and
XLA:CPU runs its parallel loop partitions on a pool of one thread per schedulable core;
`--cores N` pins this process and every tilesmith it starts to the first N cores before
XLA starts (XLA sizes its pool from the affinity mask; tilesmith's pool keeps one thread
per online core, time-sliced on the N cores).

Needs jax (the virtual environment `scripts/bench` makes under the build directory);
without it, says so and exits 0 (the comparison is skipped, nothing else fails).
"""

import argparse
import glob
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xla_hlo_text import (  # noqa: E402,F401  (gpu_compare and the tests reach them here)
    REDUCERS, identity_of, reduction_identities, without_entry_layout, xla_text)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The --quick set: one fusion of each kind from the real programs.
QUICK = ["mlp_multiply_multiply_fusion", "layer_norm_broadcast_add_fusion",
         "softmax_ynn_fusion", "adam_divide_subtract_fusion"]

# Largest |tilesmith - XLA| allowed, relative to max(1, |XLA|): a few units in the last
# place of the type after a handful of ops computed in another order or with another
# polynomial for exp/tanh/log.
TOLERANCE = {"float64": 1e-9, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


def machine():
    """The CPU model and core counts, for the table's caption."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "online_cores": os.cpu_count(),
            "schedulable_cores": len(os.sched_getaffinity(0))}


def last_level_cache_bytes():
    best = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path).read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        best = max(best, int(text.rstrip("KM")) * scale)
    return best or 32 << 20


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


class Xla:
    """XLA through jaxlib: HLO text in, a loaded executable out. `platform` is JAX's name
    of the backend ("cpu" here; bench/gpu_compare.py passes "cuda")."""

    def __init__(self, platform="cpu"):
        import jax  # noqa: F401 (the client is created here)
        import jax.extend
        from jax._src.lib import xla_client
        self.jax = jax
        self.xc = xla_client
        self.backend = jax.extend.backend.get_backend(platform)
        self.devices = self.backend.local_devices()[:1]
        self.from_text = self._find("hlo_module_from_text")
        self.computation_type = self._find("XlaComputation")
        from jax._src.lib import _jax
        self.to_mlir = _jax.mlir.xla_computation_to_mlir_module

    def _find(self, name):
        """The entry point under whichever module this jaxlib keeps it in."""
        import importlib
        for module in ("jaxlib._hlo", "jax._src.lib.xla_client", "jaxlib.xla_extension",
                       "jax._src.lib.xla_extension"):
            try:
                found = getattr(importlib.import_module(module), name, None)
            except ImportError:
                continue
            if found is not None:
                return found
        raise RuntimeError("this jaxlib has no %s (tried jaxlib._hlo, xla_client, "
                           "xla_extension)" % name)

    def compile(self, text):
        """(executable, parameter shapes, how the layouts were set) of an HLO module."""
        module = self.from_text(text)
        self.module_name = module.name  # what a profiler's events name it by
        computation = self.computation_type(module.as_serialized_hlo_module_proto())
        program = computation.program_shape()
        mlir = self.to_mlir(computation)
        devices = self.xc.DeviceList(tuple(self.devices))
        try:
            # The fusion's own layouts, not the client's row-major defaults.
            options = self.xc.CompileOptions()
            options.argument_layouts = program.parameter_shapes()
            options.executable_build_options.result_layout = program.result_shape()
            return (self.backend.compile_and_load(mlir, devices, options),
                    program.parameter_shapes(), "the fusion's")
        except Exception as error:  # noqa: BLE001
            # Nested tuple results and some bitcasts cannot be pinned; XLA picks them.
            pinned_error = str(error).splitlines()[0]
        try:
            return (self.backend.compile_and_load(mlir, devices, self.xc.CompileOptions()),
                    program.parameter_shapes(), "XLA's own (pinning failed: %s)" % pinned_error)
        except Exception as error:  # noqa: BLE001
            raise RuntimeError(str(error).splitlines()[0]) from None

    def put(self, array):
        return self.jax.device_put(array, self.devices[0])


def numpy_dtype(shape):
    """The shape's element type as numpy (ml_dtypes for bf16), or None when not bridged."""
    import numpy as np
    try:
        dtype = np.dtype(shape.numpy_dtype())
    except Exception:  # noqa: BLE001 (f8, s4, tokens: not bridged)
        return None
    if dtype.name not in ("bool", "float16", "float32", "float64", "bfloat16", "complex64",
                          "complex128") and dtype.kind not in "iu":
        return None
    if dtype.kind in "iu" and dtype.itemsize * 8 not in (8, 16, 32, 64):
        return None
    return dtype


def random_input(dtype, dims, rng):
    import numpy as np
    if dtype.name == "bool":
        return rng.integers(0, 2, size=dims).astype(bool)
    if dtype.kind == "i":
        return rng.integers(-8, 8, size=dims).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 16, size=dims).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-1, 1, size=dims) + 1j * rng.uniform(-1, 1, size=dims)).astype(dtype)
    return rng.uniform(-1, 1, size=dims).astype(np.float32).astype(dtype)


def npy_view(array):
    """What tilesmith's .npy mapping expects: bf16 as uint16 bits."""
    import numpy as np
    return array.view(np.uint16) if array.dtype.name == "bfloat16" else array


def compare(expected, actual, reduces=False):
    """(agree, largest error relative to max(1, |expected|)) of one output. Reductions sum
    in another order in each (a tree in tilesmith, XLA's own loop order): 8x the tolerance."""
    import numpy as np
    if expected.shape != actual.shape:
        return False, float("inf")
    if expected.dtype.kind in "biu":
        return bool(np.array_equal(expected, actual)), float(
            np.max(np.abs(expected.astype(np.int64) - actual.astype(np.int64)), initial=0))
    e = expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64)
    a = actual.astype(e.dtype)
    same_special = np.array_equal(np.isnan(e), np.isnan(a)) and np.array_equal(
        e[np.isinf(e)], a[np.isinf(e)])
    finite = np.isfinite(e) & np.isfinite(a)
    if not finite.any():
        return same_special, 0.0
    scale = max(1.0, float(np.max(np.abs(e[finite]))))
    error = float(np.max(np.abs(e[finite] - a[finite]))) / scale
    tolerance = TOLERANCE.get(expected.dtype.name, 1e-5) * (8 if reduces else 1)
    return same_special and error <= tolerance, error


def time_it(run, flush, warmup_s=0.01, budget_s=0.1, min_reps=20, max_reps=2000):
    """(median, repetitions, 20th percentile) seconds of `run()` after a warm-up; `flush()`
    (untimed) before each repetition."""
    end = time.perf_counter() + warmup_s
    run()
    while time.perf_counter() < end:
        run()
    times = []
    while (sum(times) < budget_s or len(times) < min_reps) and len(times) < max_reps:
        flush()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(times), sorted(times)[len(times) // 5]


def tilesmith_cmd(tilesmith, args, timeout=600):
    run = subprocess.run([tilesmith] + args, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        lines = (run.stderr.strip() or run.stdout.strip()).splitlines()
        raise RuntimeError("tilesmith %s: %s" % (args[0], lines[-1] if lines else
                                                 "exit %d" % run.returncode))
    return run.stdout


def block(outputs):
    """Waits for every output of a call."""
    for out in outputs:
        out.block_until_ready()


class HostTimer:
    """Times XLA:CPU calls: a buffer 1.5x the last-level cache written (untimed) before each
    repetition. A timer's measure(launch) gives the xla_us, xla_p20_us and xla_reps of xla.json
    (and whatever else it measured); bench/gpu_compare.py has the GPU's."""

    def __init__(self, xla):
        import numpy as np
        self.buffer = np.zeros(last_level_cache_bytes() * 3 // 2 // 8, dtype=np.float64)

    def flush(self):
        self.buffer.__iadd__(1.0)

    def measure(self, launch):
        """Times `launch()` (one call; returns its outputs, maybe not yet computed)."""
        seconds, reps, p20 = time_it(lambda: block(launch()), self.flush)
        return {"xla_us": seconds * 1e6, "xla_p20_us": p20 * 1e6, "xla_reps": reps}


def xla_child(path, work, time_only=False, platform="cpu", timer=HostTimer):
    """Runs in its own process (XLA aborts on some inputs): compiles the fusion with XLA on
    `platform`, writes random inputs (WORK/p<i>.npy, tilesmith's .npy mapping) and XLA's
    outputs (WORK/xla_out<i>.npy), times it with `timer(xla)`, and writes WORK/xla.json."""
    import numpy as np
    xla = Xla(platform)
    timing = timer(xla)
    text = xla_text(path)
    executable, params, layouts = xla.compile(text)
    identities = reduction_identities(text)
    rng = np.random.default_rng(int.from_bytes(os.path.basename(path).encode()[:8], "little"))
    inputs = []
    for i, shape in enumerate(params):
        dtype = numpy_dtype(shape)
        if dtype is None:
            raise RuntimeError("parameter %d is %s: no numpy type for it here" % (i, shape))
        inputs.append(random_input(dtype, shape.dimensions(), rng))
        if i in identities:
            inputs[-1] = np.full(shape.dimensions(), identity_of(identities[i], dtype))
        if not time_only:
            np.save(os.path.join(work, "p%d.npy" % i), npy_view(inputs[-1]))
    buffers = [xla.put(value) for value in inputs]
    outputs = [np.asarray(out) for out in executable.execute(buffers)]
    if not time_only:
        for i, out in enumerate(outputs):
            np.save(os.path.join(work, "xla_out%d.npy" % i), npy_view(out))

    times = timing.measure(lambda: executable.execute(buffers))
    # XLA's fixed cost per call (dispatch, output allocation): an f32[] negate.
    floor, _, _ = xla.compile("HloModule floor\nENTRY e {\n  p = f32[] parameter(0)\n"
                              "  ROOT n = f32[] negate(p)\n}\n")
    scalar = [xla.put(np.float32(1))]
    floor_s, _, _ = time_it(lambda: block(floor.execute(scalar)), lambda: None)
    with open(os.path.join(work, "xla_again.json" if time_only else "xla.json"), "w") as f:
        json.dump(dict(times, xla_call_floor_us=floor_s * 1e6, xla_layouts=layouts,
                       parameters=len(inputs), outputs=[out.dtype.name for out in outputs],
                       bytes=int(sum(v.nbytes for v in inputs) + sum(v.nbytes for v in outputs))),
                  f)


def run_xla_child(path, work, time_only=False, script=__file__, extra=(), label="XLA:CPU"):
    """xla.json of the child (`script --xla-child[-time] PATH WORK EXTRA…`), or RuntimeError
    with the child's last words, prefixed with `label`."""
    mode = "--xla-child-time" if time_only else "--xla-child"
    child = subprocess.run([sys.executable, os.path.abspath(script), mode, path, work] +
                           list(extra), capture_output=True, text=True, timeout=600)
    if child.returncode != 0:
        lines = [line for line in child.stderr.splitlines()
                 if re.search(r"Error|error:|Check failed|RET_CHECK|UNIMPLEMENTED|INTERNAL|"
                              r"INVALID_ARGUMENT|no numpy type", line)]
        reason = lines[-1].strip() if lines else "exit %d" % child.returncode
        reason = re.sub(r"^(jax\.errors\.|jaxlib\.\w+\.)?\w*Error: ", "", reason)
        reason = re.sub(r"^[EF]\d{4} [\d:.]+\s+\d+ ", "", reason)
        if child.returncode < 0:
            reason = "aborted: " + reason
        raise RuntimeError("%s: %s" % (label, reason))
    with open(os.path.join(work, "xla_again.json" if time_only else "xla.json")) as f:
        return json.load(f)


def display_path(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT) else path


def measure(path, args, work, target="host", run_xla=run_xla_child):
    """One fusion: XLA's compile, outputs and time (in a child: `run_xla(path, work,
    time_only)`), tilesmith's tune on `target`, and the outputs of tilesmith's default and
    (when `target` is the host) tuned kernels on the same inputs."""
    row = {"file": display_path(path)}
    analyzed = json.loads(tilesmith_cmd(args.tilesmith, ["analyze", path, "--json"]))
    row["emitter"] = analyzed.get("emitter")
    row.update(run_xla(path, work))
    outputs = row.pop("outputs")
    parameters = row.pop("parameters")
    tune = tune_fusion(path, args, work, target)
    row.update(tune_times(tune))
    # `tilesmith run` runs on the host only: a GPU's tuned config is checked by the tune.
    configs = [("default", None)] + ([("tuned", tune["best"]["config"])]
                                     if target == "host" else [])
    row["agree"], row["largest_error"] = check_outputs(path, args, work, parameters, outputs,
                                                       configs)
    # XLA is timed before and after tilesmith: the lower median of the two, so a burst of
    # other load during one of them does not decide the ratio.
    take_lower_xla(row, run_xla(path, work, time_only=True))
    add_ratios(row)
    return row


def tune_fusion(path, args, work, target):
    """`tilesmith tune --json` of the fusion on `target`, args.budget configs, best-first;
    RuntimeError when it gave no JSON or verified no config."""
    # Exit 1 with its JSON when no config verified: the JSON says what became of them.
    # XLA's runs start after a write over the last-level cache (time_it), so tilesmith's do
    # too (`--flush cache`): its default, evicting only the kernel's buffers, leaves the code
    # and page tables cached and would flatter small kernels.
    tuned = subprocess.run([args.tilesmith, "tune", path, "--target", target, "--db",
                            os.path.join(work, "tune.db"), "--strategy", "best-first",
                            "--budget", str(args.budget), "--timeout-ms", "30000",
                            "--flush", "cache", "--quiet", "--json"],
                           capture_output=True, text=True, timeout=1800)
    try:
        tune = json.loads(tuned.stdout)
    except ValueError:
        lines = tuned.stderr.strip().splitlines()
        raise RuntimeError("tilesmith tune: " + (lines[-1] if lines else "exit %d" %
                                                 tuned.returncode)) from None
    if tune.get("timed") is False:
        # A CUDA target without a GPU: the times are the cost model's, never a measurement.
        lines = tuned.stderr.strip().splitlines()
        raise RuntimeError("tilesmith tune: not timed, predicted only: " +
                           (lines[-1] if lines else "no GPU"))
    if not tune.get("best") or not tune.get("default"):
        reasons = "; ".join(tuned.stderr.strip().splitlines()[-1:])
        raise RuntimeError("tilesmith tune verified no config (%s of %s measured failed%s)" % (
            tune.get("failed"), tune.get("measured"), ": " + reasons if reasons else ""))
    return tune


def tune_times(tune):
    """The row's fields from a tune's JSON: default and tuned medians and 20th percentiles,
    and how they were timed (tilesmith_timing): a CUDA tune names its method (cupti-kernel,
    or cuda-events where CUPTI could not record; then the event medians are the times) and
    keeps the event medians beside kernel times; host times are the host's clock around each
    kernel call (host-clock)."""
    row = {"default_us": tune["default"]["median_us"], "tuned_us": tune["best"]["median_us"],
           "default_p20_us": tune["default"]["p20_us"], "tuned_p20_us": tune["best"]["p20_us"],
           "tuned_config": tune["best"]["config"], "configs_measured": tune["measured"],
           "tilesmith_device": tune.get("device"),
           "tilesmith_timing": tune["best"].get("timing_method") or "host-clock"}
    methods = {tune["best"].get("timing_method"), tune["default"].get("timing_method")}
    if len(methods) > 1:  # one of them fell back to events: the two are not comparable
        row["tilesmith_timing"] = "mixed (%s)" % ", ".join(sorted(m or "?" for m in methods))
    for label, key in (("default", "default"), ("tuned", "best")):
        if tune[key].get("event_us") is not None:
            row[label + "_event_us"] = tune[key]["event_us"]
    return row


def check_outputs(path, args, work, parameters, outputs, configs):
    """(agree, largest error) of XLA's outputs (WORK/xla_out<i>.npy, dtype names `outputs`)
    against `tilesmith run --target host` of each (label, config) on the same inputs."""
    import numpy as np
    reduces = bool(re.search(r"\s(reduce|reduce-window)\(", xla_text(path)))
    npy_args = []
    for i in range(parameters):
        npy_args += ["--input", os.path.join(work, "p%d.npy" % i)]
    all_agree, largest = True, 0.0
    for label, config in configs:
        outs = [os.path.join(work, "%s_out%d.npy" % (label, i)) for i in range(len(outputs))]
        command = ["run", path, "--target", "host"] + npy_args
        for out in outs:
            command += ["--output", out]
        if config is not None:
            command += ["--config", json.dumps(config)]
        tilesmith_cmd(args.tilesmith, command)
        for i, (dtype, out) in enumerate(zip(outputs, outs)):
            want = np.load(os.path.join(work, "xla_out%d.npy" % i))
            got = np.load(out)
            if dtype == "bfloat16":
                import ml_dtypes
                want, got = want.view(ml_dtypes.bfloat16), got.view(ml_dtypes.bfloat16)
            agree, error = compare(want, got, reduces=reduces)
            all_agree = all_agree and agree
            largest = max(largest, error)
    return all_agree, largest


def take_lower_xla(row, again):
    """Keeps the XLA timing (every xla_* time of xla.json) of the lower median of two runs."""
    row["xla_us_runs"] = [row["xla_us"], again["xla_us"]]
    if again["xla_us"] < row["xla_us"]:
        row.update((key, value) for key, value in again.items() if key.startswith("xla_")
                   and key.endswith("_us") and key != "xla_call_floor_us")


def add_ratios(row):
    """tilesmith ÷ XLA, default and tuned, from the medians and from the 20th percentiles."""
    row["default_vs_xla"] = row["default_us"] / row["xla_us"]
    row["tuned_vs_xla"] = row["tuned_us"] / row["xla_us"]
    # The 20th percentiles: what both take when other load leaves them alone.
    row["default_vs_xla_p20"] = row["default_p20_us"] / row["xla_p20_us"]
    row["tuned_vs_xla_p20"] = row["tuned_p20_us"] / row["xla_p20_us"]


def fusion_files(args):
    if args.files:
        return [os.path.abspath(f) for f in args.files]
    ours = sorted(glob.glob(os.path.join(ROOT, "bench", "corpus", "*.hlo")))
    if args.quick:
        quick = [f for f in ours if os.path.basename(f)[:-4] in QUICK]
        return quick or ours[:4]
    files = ours + sorted(glob.glob(os.path.join(ROOT, "configs", "examples", "*.hlo")))
    corpus = os.environ.get("TILESMITH_CORPUS_DIR", os.path.join(ROOT, "..", "shared", "corpus"))
    shared = sorted(glob.glob(os.path.join(corpus, "xla", "**", "*.hlo"), recursive=True))
    if shared and args.corpus_sample > 0:
        step = max(1, len(shared) // args.corpus_sample)
        files += [os.path.abspath(f) for f in shared[::step][:args.corpus_sample]]
    return files


def markdown(summary):
    m = summary["machine"]
    lines = ["tilesmith host kernels vs XLA:CPU (jax %s) on %s, %d of %d cores; time ratio "
             "tilesmith ÷ XLA (below 1: tilesmith faster); load average %.1f at the start." % (
                 summary["jax_version"], m["cpu"], summary["cores"], m["online_cores"],
                 summary.get("load_average_at_start", float("nan"))),
             ] + (["XLA's time includes its per-call cost (dispatch, allocating outputs): "
                   "%.1f µs for an f32[] negate." % summary["xla_call_floor_us"]]
                  if summary.get("xla_call_floor_us") else []) + [
             "",
             "| fusion | emitter | XLA:CPU µs | default µs | tuned µs | default ÷ XLA | "
             "tuned ÷ XLA | outputs |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in summary["fusions"]:
        name = os.path.basename(row["file"])[:-4]
        if "error" in row:
            lines.append("| %s | %s | — | — | — | — | — | skipped: %s |" % (
                name, row.get("emitter") or "?", row["error"].replace("|", "/")[:120]))
            continue
        lines.append("| %s | %s | %.1f | %.1f | %.1f | %.2f | %.2f | %s |" % (
            name, row["emitter"], row["xla_us"], row["default_us"], row["tuned_us"],
            row["default_vs_xla"], row["tuned_vs_xla"],
            "agree" if row["agree"] else "DIFFER (%.2g)" % row["largest_error"]))
    g = summary["geomean"]
    if g["fusions"]:
        lines.append("| **geomean** (%d fusions) | | | | | **%.2f** | **%.2f** | |" % (
            g["fusions"], g["default_vs_xla"], g["tuned_vs_xla"]))
        if g.get("default_vs_xla_p20"):
            lines.append("")
            lines.append("Medians above; from the 20th percentiles of the same repetitions "
                         "(less exposed to other load): geomean %.2f default, %.2f tuned." % (
                             g["default_vs_xla_p20"], g["tuned_vs_xla_p20"]))
    return "\n".join(lines)


def write_results(args, summary, table):
    """Prints the Markdown table; writes the JSON summary to --json and the table to
    --markdown when given."""
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


def main():
    if len(sys.argv) == 4 and sys.argv[1] in ("--xla-child", "--xla-child-time"):
        xla_child(sys.argv[2], sys.argv[3], time_only=sys.argv[1] == "--xla-child-time")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    build = os.environ.get("TILESMITH_BUILD_DIR", os.path.join(ROOT, "build"))
    parser.add_argument("files", nargs="*")
    parser.add_argument("--quick", action="store_true", help="four fusions, budget 4")
    parser.add_argument("--json", help="write the summary here")
    parser.add_argument("--markdown", help="write the Markdown table here too")
    parser.add_argument("--tilesmith", default=os.path.join(build, "bin", "tilesmith"))
    parser.add_argument("--cores", type=int, default=0, help="pin to the first N cores")
    parser.add_argument("--budget", type=int, help="configs tuned per fusion (default 8)")
    parser.add_argument("--corpus-sample", type=int, default=8,
                        help="shared XLA corpus files in the full run (default 8)")
    args = parser.parse_args()
    if args.budget is None:
        args.budget = 4 if args.quick else 8
    if args.cores > 0:
        os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:args.cores]))
    try:
        import numpy  # noqa: F401
        import ml_dtypes  # noqa: F401
        import jax
    except ImportError as error:
        print("xla_compare: skipped: %s (run it with the bench venv's python; scripts/bench "
              "installs jax there when PyPI is reachable)" % error, file=sys.stderr)
        return 0
    if not os.access(args.tilesmith, os.X_OK):
        sys.exit("xla_compare: no tilesmith at %s (--tilesmith PATH)" % args.tilesmith)
    cores = len(os.sched_getaffinity(0))
    summary = {"machine": machine(), "cores": cores,
               "load_average_at_start": os.getloadavg()[0],
               "jax_version": jax.__version__, "budget": args.budget,
               "threads": {"tilesmith": "a pool of %d threads (one per online core) runs the "
                                        "kernel's blocks" % os.cpu_count(),
                           "xla": "the CPU client's intra-op pool, one thread per "
                                  "schedulable core (%d)" % cores},
               "fusions": []}
    files = fusion_files(args)
    print("xla_compare: %d fusions, tilesmith tune budget %d, %d cores" % (
        len(files), args.budget, cores), file=sys.stderr)
    for index, path in enumerate(files, 1):
        with tempfile.TemporaryDirectory() as work:
            try:
                row = measure(path, args, work)
            except Exception as error:  # noqa: BLE001 (one fusion's failure is its row)
                row = {"file": os.path.relpath(path, ROOT) if path.startswith(ROOT) else path,
                       "error": (str(error).strip().splitlines() or ["?"])[0][:300]}
        summary["fusions"].append(row)
        if "error" in row:
            print("xla_compare %d/%d  %s  skipped: %s" % (index, len(files), row["file"],
                                                          row["error"]), file=sys.stderr)
        else:
            print("xla_compare %d/%d  %s  XLA %.1f us, default %.1f us (%.2fx), tuned %.1f us "
                  "(%.2fx), outputs %s" % (
                      index, len(files), row["file"], row["xla_us"], row["default_us"],
                      row["default_vs_xla"], row["tuned_us"], row["tuned_vs_xla"],
                      "agree" if row["agree"] else "DIFFER"), file=sys.stderr)
    ran = [r for r in summary["fusions"] if "error" not in r]
    good = [r for r in ran if r["agree"]]
    summary["xla_call_floor_us"] = (statistics.median(r["xla_call_floor_us"] for r in ran)
                                    if ran else None)
    summary["geomean"] = {"fusions": len(good),
                          "default_vs_xla": geomean([r["default_vs_xla"] for r in good]),
                          "tuned_vs_xla": geomean([r["tuned_vs_xla"] for r in good]),
                          "default_vs_xla_p20": geomean([r["default_vs_xla_p20"] for r in good]),
                          "tuned_vs_xla_p20": geomean([r["tuned_vs_xla_p20"] for r in good])}
    write_results(args, summary, markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
