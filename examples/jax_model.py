#!/usr/bin/env python3
"""End to end for a compiler engineer: the fusions of a real JAX model, tuned by tilesmith.

    examples/jax_model.py [--url URL | --tilesmith PATH] [--target host] [--budget N]

Jits a small transformer block (layer norm, attention, a GELU MLP, residual adds) on JAX's
CPU backend with `XLA_FLAGS=--xla_dump_to=…`, takes each fusion of XLA:CPU's optimised
module as a standalone HLO module (as bench/dump_jax_fusions.py does; fusions holding a
`dot` are left out: tilesmith has no dot emitter), sends them all in one
`POST /v1/query:batch` with `tune_if_missing`, waits for the tuning jobs, asks again and
prints one row per fusion: emitter, best config, default and tuned time, and the answer's
source. Without --url it starts `tilesmith serve` on a free port and a fresh database in a
temporary folder, and stops it at the end.

JAX is never a dependency of tilesmith: without it this example says it is skipped and exits
0 (`pip install jax` in a virtual environment to run it).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "clients", "python", "src"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from tilesmith_client import Answer, Client, Job, TilesmithError  # noqa: E402


def dump_fusions(dump_dir: str) -> List[Tuple[str, str]]:
    """[(name, standalone HLO module)] of the non-dot fusions of the model's optimised module.
    Must run before anything imports jax: XLA reads XLA_FLAGS once."""
    os.environ["XLA_FLAGS"] = (f"--xla_dump_to={dump_dir} --xla_dump_hlo_as_text "
                               "--xla_dump_hlo_module_re=^jit_transformer_block")
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp

    import dump_jax_fusions  # bench/: module splitting shared with the XLA:CPU comparison

    batch, seq, d_model, heads, hidden = 4, 128, 256, 4, 1024

    def layer_norm(x: Any, gamma: Any, beta: Any) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta

    def transformer_block(x: Any, p: Dict[str, Any]) -> Any:
        h = layer_norm(x, p["ln1_g"], p["ln1_b"])
        q, k, v = (jnp.einsum("bsd,de->bse", h, p[w]).reshape(batch, seq, heads, -1)
                   for w in ("wq", "wk", "wv"))
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(jnp.float32(d_model // heads))
        attended = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
        x = x + jnp.einsum("bsd,de->bse", attended.reshape(batch, seq, d_model), p["wo"])
        h = layer_norm(x, p["ln2_g"], p["ln2_b"])
        h = jax.nn.gelu(jnp.einsum("bsd,dh->bsh", h, p["w1"]) + p["b1"])
        return x + jnp.einsum("bsh,hd->bsd", h, p["w2"]) + p["b2"]

    f32 = jnp.float32
    spec = jax.ShapeDtypeStruct
    params = {"ln1_g": spec((d_model,), f32), "ln1_b": spec((d_model,), f32),
              "ln2_g": spec((d_model,), f32), "ln2_b": spec((d_model,), f32),
              "wq": spec((d_model, d_model), f32), "wk": spec((d_model, d_model), f32),
              "wv": spec((d_model, d_model), f32), "wo": spec((d_model, d_model), f32),
              "w1": spec((d_model, hidden), f32), "b1": spec((hidden,), f32),
              "w2": spec((hidden, d_model), f32), "b2": spec((d_model,), f32)}
    jax.jit(transformer_block).lower(spec((batch, seq, d_model), f32), params).compile()
    print(f"jax {jax.__version__}: transformer block x f32[{batch},{seq},{d_model}], "
          f"{heads} heads, MLP {hidden}", file=sys.stderr)

    files = sorted(glob.glob(os.path.join(dump_dir, "*jit_transformer_block*"
                                          ".cpu_after_optimizations.txt")))
    if not files:
        sys.exit(f"jax_model.py: XLA wrote no optimised module into {dump_dir}")
    with open(files[0], encoding="utf-8") as file:
        text = file.read()
    fusions = []
    for stem, module in dump_jax_fusions.extract("block", text):
        name = stem[len("block_"):]
        reason = dump_jax_fusions.not_for_tilesmith(module)
        if reason:
            print(f"  left out {name}: {reason.split(':')[0]}", file=sys.stderr)
            continue
        fusions.append((name, module))
    return fusions


def start_server(tilesmith: str, work: str, target: str) -> Tuple[subprocess.Popen, str]:
    """`tilesmith serve` on a free port over a fresh database; returns it and its URL."""
    server = subprocess.Popen(
        [tilesmith, "serve", "--port", "0", "--db", os.path.join(work, "results.db"),
         "--targets", target, "--warmup-ms", "2", "--rep-ms", "10"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    line = server.stdout.readline()
    if "http://" not in line:
        server.kill()
        sys.exit(f"jax_model.py: tilesmith serve did not start ({tilesmith})")
    return server, line.split("serving on ", 1)[1].split()[0]


def shorten(config: Optional[Dict[str, Any]]) -> str:
    return "-" if not config else json.dumps(config, sort_keys=True, separators=(",", ":"))


def time_us(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running tilesmith serve (default: start one)")
    build = os.environ.get("TILESMITH_BUILD_DIR", os.path.join(ROOT, "build"))
    parser.add_argument("--tilesmith", default=os.path.join(build, "bin", "tilesmith"))
    parser.add_argument("--target", default="host")
    parser.add_argument("--budget", type=int, default=8, help="configs measured per fusion")
    parser.add_argument("--wait", type=float, default=1800, metavar="S")
    args = parser.parse_args()

    if importlib.util.find_spec("jax") is None:
        print("jax_model.py: skipped: JAX is not installed (tilesmith never needs it; "
              "`pip install jax` in a virtual environment to run this example)")
        return 0
    if not args.url and not os.access(args.tilesmith, os.X_OK):
        sys.exit(f"jax_model.py: no tilesmith at {args.tilesmith} (scripts/build tilesmith, "
                 "or --url URL of a running server)")

    with tempfile.TemporaryDirectory(prefix="tilesmith-jax-") as work:
        fusions = dump_fusions(os.path.join(work, "dump"))
        server = None
        url = args.url
        if not url:
            server, url = start_server(args.tilesmith, work, args.target)
        try:
            rows = tune_and_ask(Client(url), fusions, args.target, args.budget, args.wait)
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=120)
    print_table(rows)
    return 0


def tune_and_ask(client: Client, fusions: List[Tuple[str, str]], target: str, budget: int,
                 wait_s: float) -> List[Tuple[str, Answer]]:
    """One batch query that queues a tune for every fusion not yet known, the wait, and the
    batch asked again."""
    print(f"{len(fusions)} fusions to {client.url}: one POST /v1/query:batch with "
          f"tune_if_missing (budget {budget}, best-first) on {target}", file=sys.stderr)
    modules = [module for _, module in fusions]
    first = client.query_batch(modules, target=target,
                               tune_if_missing={"budget": budget, "strategy": "best-first"})
    jobs = sorted({answer.job_id for answer in first if answer.job_id})
    print(f"  {sum(a.found for a in first)} answered from the database, {len(jobs)} tuning "
          "jobs queued", file=sys.stderr)

    def progress(job: Job) -> None:
        if job.finished:
            print(f"  job {job.id[:12]} {job.state}: {job.progress.get('measured', 0)} "
                  "configs measured", file=sys.stderr)

    client.wait_all(jobs, timeout_s=wait_s, progress=progress)
    answers = client.query_batch(modules, target=target)
    if not all(answer.found for answer in answers):
        time.sleep(1.5)  # the server may keep a miss in memory for up to a second
        answers = client.query_batch(modules, target=target)
    return [(name, explain(client, answer)) for (name, _), answer in zip(fusions, answers)]


def explain(client: Client, answer: Answer) -> Answer:
    """A 404 after tuning means no candidate verified: the answer's error then names how the
    trials failed (their status and the first message), from GET /v1/kernels/{fingerprint}."""
    if answer.found or not answer.fingerprint:
        return answer
    try:
        trials = client.kernel(answer.fingerprint).get("measurements", [])
    except TilesmithError:
        return answer
    failed = [trial for trial in trials if trial.get("status") != "ok"]
    if not failed:
        return answer
    statuses = sorted({str(trial.get("status")) for trial in failed})
    message = str(failed[0].get("message") or "").splitlines()[0][:80]
    return Answer(answer.status, dict(answer.body, error=f"{len(failed)} of {len(trials)} "
                                      f"trials failed ({', '.join(statuses)}): {message}"))


def print_table(rows: List[Tuple[str, Answer]]) -> None:
    header = ("fusion", "emitter", "default us", "tuned us", "speedup", "source", "best config")
    table = []
    for name, answer in rows:
        if not answer.found:
            table.append((name, "-", "-", "-", "-", "none", str(answer.error)))
            continue
        default, tuned = answer.default_median_us, answer.median_us
        speedup = f"{default / tuned:.2f}x" if default and tuned else "-"
        table.append((name, answer.emitter or "-", time_us(default), time_us(tuned), speedup,
                      answer.source or "-", shorten(answer.config)))
    widths = [max(len(str(row[i])) for row in [header, *table]) for i in range(len(header) - 1)]
    for row in [header, *table]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)) +
              "  " + str(row[-1]))


if __name__ == "__main__":
    sys.exit(main())
