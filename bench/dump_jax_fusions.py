#!/usr/bin/env python3
"""Dumps the fusions XLA:CPU makes of a few real JAX programs into bench/corpus/.

    bench/dump_jax_fusions.py [--tilesmith PATH] [--out DIR] [--keep-dump DIR]

Runs an MLP block (f32 and bf16), layer norm, softmax, softmax attention and an Adam
update through `jax.jit(...).lower(...).compile()` on the CPU backend with
`XLA_FLAGS=--xla_dump_to=DIR`, reads each program's optimised module
(`*.cpu_after_optimizations.txt`) and writes every fusion of its entry computation as a
standalone HLO module (the fused computation and what it calls, as XLA printed them, and an
ENTRY that calls it) to `OUT/<program>_<fusion>.hlo`.

The stack-frame tables (`FileNames` … `StackFrames`) are dropped: tilesmith's parser rejects
them, and they only say where ops came from. So are `metadata`, `backend_config`,
`frontend_attributes`, `statistics` and `sharding`; names, shapes, layouts, signatures and
every other attribute are kept, so each file is the computation XLA runs. XLA:CPU's
YNNPACK fusions (kCustom) become kInput when they reduce, else kLoop. Fusions with a dot are
skipped (tilesmith has no dot emitter), and so is a fusion `tilesmith parse` or `tilesmith
check --target host` rejects; each is printed with the reason. The files are written in a
fixed order with fixed names (same JAX version, same files), and stale `*.hlo` files in OUT
that this run did not write are removed.

Needs jax (the bench's virtual environment: `scripts/bench` makes one under the build
directory); tilesmith itself never depends on it.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Attributes that describe where an instruction came from or how XLA:CPU schedules it, not
# what it computes. Their values are balanced {…} groups (JSON in backend_config).
STRIPPED_ATTRIBUTES = ("metadata", "backend_config", "frontend_attributes", "statistics",
                       "sharding", "origin")


def programs():
    """The JAX programs: (name, function, argument specs[, extra XLA flags]). Shapes are
    chosen so every fusion moves a few MiB: large enough to time, small enough for a 2-core
    machine."""
    import jax
    import jax.numpy as jnp

    f32 = jnp.float32
    bf16 = jnp.bfloat16

    def spec(shape, dtype=f32):
        return jax.ShapeDtypeStruct(shape, dtype)

    def mlp(x, w1, b1, w2, b2):
        h = jax.nn.gelu(x @ w1 + b1)
        return h @ w2 + b2

    def layer_norm(x, gamma, beta):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta

    def softmax(scores):
        return jax.nn.softmax(scores, axis=-1)

    def attention(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.float32(q.shape[-1]))
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

    def adam(p, g, m, v, step):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        m_hat = m / (1 - 0.9 ** step)
        v_hat = v / (1 - 0.999 ** step)
        return p - 1e-3 * m_hat / (jnp.sqrt(v_hat) + 1e-8), m, v

    def mlp_bf16(x, w1, b1):
        return jax.nn.gelu(x @ w1 + b1)

    # XLA:CPU hands the whole attention (both dots and the softmax between them) to one
    # YNNPACK fusion; without YNNPACK fusions its own pipeline fuses the softmax itself.
    no_ynn = "--xla_cpu_experimental_ynn_fusion_type="
    return [
        ("mlp", mlp, [spec((256, 512)), spec((512, 2048)), spec((2048,)), spec((2048, 512)),
                      spec((512,))]),
        ("mlp_bf16", mlp_bf16, [spec((256, 512), bf16), spec((512, 2048), bf16),
                                spec((2048,), bf16)]),
        ("layer_norm", layer_norm, [spec((1024, 1024)), spec((1024,)), spec((1024,))]),
        ("softmax", softmax, [spec((8, 256, 512))]),
        ("attention", attention, [spec((2, 8, 256, 64))] * 3),
        ("attention_no_ynn", attention, [spec((2, 8, 256, 64))] * 3, no_ynn),
        ("adam", adam, [spec((1024, 1024))] * 4 + [spec(())]),
    ]


def balanced_end(text, start):
    """Index just past the {…} group that opens at text[start], skipping quoted strings."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced braces")


def strip_attributes(line):
    """Removes `, name={…}` for every attribute in STRIPPED_ATTRIBUTES."""
    pattern = re.compile(r",\s*(%s)=\{" % "|".join(STRIPPED_ATTRIBUTES))
    while True:
        match = pattern.search(line)
        if not match:
            return line
        end = balanced_end(line, match.end() - 1)
        line = line[:match.start()] + line[end:]


def split_computations(text):
    """{name: [lines]} of every computation in a dumped module, in order, and the entry's
    name. A computation starts at a column-0 line ending in `{` and ends at a line `}`."""
    computations = {}
    entry = None
    current = None
    for line in text.splitlines():
        if current is None:
            if line.endswith("{") and not line.startswith(("HloModule", " ")):
                head = line[:-1].strip()
                is_entry = head.startswith("ENTRY ")
                if is_entry:
                    head = head[len("ENTRY "):]
                name = re.match(r"%?([\w.\-]+)", head).group(1)
                current = (name, [head + " {"])
                if is_entry:
                    entry = name
            continue
        if line == "}":
            computations[current[0]] = current[1]
            current = None
        else:
            current[1].append(line)
    return computations, entry


def called(lines):
    """Names of the computations an instruction list calls (to_apply, calls, …)."""
    names = []
    for line in lines[1:]:
        for match in re.finditer(r"\b(?:to_apply|calls|condition|body|comparator|"
                                 r"select|scatter)=%?([\w.\-]+)", line):
            names.append(match.group(1))
    return names


def instruction_shape_and_op(line):
    """(name, shape text, op) of an instruction line `[ROOT] %n = SHAPE op(…)…`."""
    match = re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$", line)
    name, rest = match.group(1), match.group(2)
    # The shape is a balanced (…) tuple or one array type with an optional {layout}.
    if rest.startswith("("):
        depth = 0
        for i, c in enumerate(rest):
            depth += c == "("
            depth -= c == ")"
            if depth == 0:
                break
        shape, rest = rest[:i + 1], rest[i + 1:].lstrip()
    else:
        shape_match = re.match(r"(\w+\[[^\]]*\](?:\{[^}]*\})?)\s*", rest)
        shape, rest = shape_match.group(1), rest[shape_match.end():]
    op = re.match(r"([\w\-]+)", rest).group(1)
    return name, shape, op


def fusion_module(program, fusion_name, fused, computations, kind):
    """The text of one standalone module: the fused computation, what it calls, and an
    ENTRY that passes its parameters to a fusion instruction."""
    order = []

    def visit(name):
        if name in order:
            return
        for callee in called(computations[name]):
            visit(callee)
        order.append(name)

    visit(fused)
    params = []
    root_shape = None
    for line in computations[fused][1:]:
        name, shape, op = instruction_shape_and_op(line)
        if op == "parameter":
            number = int(re.search(r"parameter\((\d+)\)", line).group(1))
            params.append((number, shape))
        if line.lstrip().startswith("ROOT"):
            root_shape = shape
    params.sort()
    out = ["HloModule %s_%s" % (program, re.sub(r"[^\w]", "_", fusion_name)), ""]
    for name in order:
        for line in computations[name]:
            out.append(strip_attributes(line))
        out.append("}")
        out.append("")
    out.append("ENTRY %main {")
    for number, shape in params:
        out.append("  %%p%d = %s parameter(%d)" % (number, shape, number))
    operands = ", ".join("%%p%d" % number for number, _ in params)
    out.append("  ROOT %%fusion = %s fusion(%s), kind=%s, calls=%%%s" %
               (root_shape, operands, kind, fused))
    out.append("}")
    return "\n".join(out) + "\n"


def fusion_kind(kind, computation_lines):
    """XLA:CPU's kCustom (YNNPACK) fusions become kInput when they reduce, else kLoop: the
    kind tilesmith's analysis would give the same body."""
    if kind != "kCustom":
        return kind
    ops = [instruction_shape_and_op(line)[2] for line in computation_lines[1:]]
    return "kInput" if "reduce" in ops else "kLoop"


def extract(program, text):
    """[(file stem, module text)] of every fusion in the entry computation of one module."""
    computations, entry = split_computations(text)
    result = []
    for line in computations[entry][1:]:
        if " fusion(" not in line:
            continue
        name, _, _ = instruction_shape_and_op(line)
        fused = re.search(r"calls=%?([\w.\-]+)", line).group(1)
        kind = re.search(r"kind=(\w+)", line).group(1)
        kind = fusion_kind(kind, computations[fused])
        stem = "%s_%s" % (program, re.sub(r"[^\w]", "_", name))
        result.append((stem, fusion_module(program, name, fused, computations, kind)))
    return result


def dump(dump_dir):
    """Compiles every program with XLA_FLAGS=--xla_dump_to in child processes (XLA reads its
    flags once, at start-up; one child per set of extra flags) and returns {program:
    optimised module text}."""
    groups = {}
    for program in programs():
        groups.setdefault(program[3] if len(program) > 3 else "", []).append(program[0])
    for index, (flags, names) in enumerate(sorted(groups.items())):
        env = dict(os.environ)
        env["XLA_FLAGS"] = ("--xla_dump_to=%s --xla_dump_hlo_as_text "
                            "--xla_dump_hlo_module_re=^jit_bench_ %s" % (
                                os.path.join(dump_dir, str(index)), flags)).strip()
        env["JAX_PLATFORMS"] = "cpu"
        code = ("import sys; sys.path.insert(0, %r)\n"
                "import jax, dump_jax_fusions as d\n"
                "for program in d.programs():\n"
                "    if program[0] in %r:\n"
                "        program[1].__name__ = 'bench_' + program[0]\n"
                "        jax.jit(program[1]).lower(*program[2]).compile()\n" % (
                    os.path.dirname(os.path.abspath(__file__)), names))
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
    texts = {}
    for folder in sorted(os.listdir(dump_dir)):
        for file in sorted(os.listdir(os.path.join(dump_dir, folder))):
            match = re.match(r"module_\d+\.jit_bench_(\w+)\.cpu_after_optimizations\.txt$",
                             file)
            if match:
                with open(os.path.join(dump_dir, folder, file)) as f:
                    texts[match.group(1)] = f.read()
    return texts


def not_for_tilesmith(module):
    """Why a fusion is left out although tilesmith might run it, or None."""
    if re.search(r"\s(dot|convolution)\(", module):
        return ("a dot: tilesmith has no dot emitter (its loop emitter would compute every "
                "output's dot product on its own); XLA:CPU gives these to YNNPACK")
    return None


def tilesmith_accepts(tilesmith, path, timeout_s=60):
    """None when `tilesmith parse` and `check --target host` pass on the file within
    `timeout_s` each, else why."""
    for args in (["parse", path], ["check", path, "--target", "host"]):
        try:
            run = subprocess.run([tilesmith] + args, capture_output=True, text=True,
                                 timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return "`tilesmith %s` took over %d s" % (args[0], timeout_s)
        if run.returncode != 0:
            message = (run.stderr.strip() or run.stdout.strip()).splitlines()
            return "`tilesmith %s` failed: %s" % (args[0], message[-1] if message else "?")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    build = os.environ.get("TILESMITH_BUILD_DIR", os.path.join(ROOT, "build"))
    parser.add_argument("--tilesmith", default=os.path.join(build, "bin", "tilesmith"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "corpus"))
    parser.add_argument("--keep-dump", help="dump into this folder and keep it")
    args = parser.parse_args()
    try:
        import jax
    except ImportError:
        sys.exit("dump_jax_fusions: needs jax (run it with the bench venv's python, e.g. "
                 "$BUILD/bench-venv/bin/python)")
    if not os.access(args.tilesmith, os.X_OK):
        sys.exit("dump_jax_fusions: no tilesmith at %s (--tilesmith PATH)" % args.tilesmith)
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        dump_dir = args.keep_dump or os.path.join(tmp, "dump")
        texts = dump(dump_dir)
        written, skipped = [], []
        for program in (p[0] for p in programs()):
            if program not in texts:
                skipped.append((program, "XLA dumped no optimised module"))
                continue
            for stem, module in extract(program, texts[program]):
                header = ("// The fusion %s of the JAX program '%s' (bench/dump_jax_fusions.py),\n"
                          "// as XLA:CPU (jax %s) fused it; metadata and backend_config "
                          "stripped.\n" % (stem[len(program) + 1:], program, jax.__version__))
                path = os.path.join(args.out, stem + ".hlo")
                candidate = os.path.join(tmp, stem + ".hlo")
                with open(candidate, "w") as f:
                    f.write(header + module)
                why = not_for_tilesmith(module) or tilesmith_accepts(args.tilesmith, candidate)
                if why:
                    skipped.append((stem, why))
                    continue
                with open(path, "w") as f:
                    f.write(header + module)
                written.append(stem)
    for file in sorted(os.listdir(args.out)):
        if file.endswith(".hlo") and file[:-4] not in written:
            os.remove(os.path.join(args.out, file))
    for stem in written:
        print("wrote    %s.hlo" % os.path.join(os.path.relpath(args.out), stem))
    for stem, why in skipped:
        print("skipped  %s: %s" % (stem, why))
    print("%d fusions written, %d skipped (jax %s)" % (len(written), len(skipped),
                                                     jax.__version__))


if __name__ == "__main__":
    main()
