"""The HLO text XLA compiles for a tilesmith fusion file, and the reduce inits in it.

xla_compare.py and gpu_compare.py hand XLA the fusion's computation as the ENTRY; the
random inputs they make give each reduce's init parameter its reducer's identity.
"""

import re


def without_entry_layout(text):
    """The module without its header's `entry_computation_layout={...}`: a dump's header
    describes the entry it was dumped with (its bitcast parameters, its scalars), and XLA
    would impose those shapes on the fusion computation that replaces it."""
    start = text.find("entry_computation_layout={")
    if start < 0:
        return text
    depth, end = 0, start + len("entry_computation_layout=")
    while end < len(text):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
        if depth == 0:
            break
    head = text[:start].rstrip()
    return (head[:-1] if head.endswith(",") else head) + text[end:]


def xla_text(path):
    """The file as XLA:CPU compiles it: the fusion's computation as the ENTRY (XLA:CPU has
    no kInput fusion instruction; its own passes fuse the body again), whole-line //
    comments dropped (XLA's test files keep RUN and CHECK lines there)."""
    with open(path) as f:
        text = "".join(line for line in f if not line.lstrip().startswith("//"))
    entry = re.search(r"^ENTRY\b[^\n]*\{\n(.*?)^\}", text, re.M | re.S)
    if not entry:
        return text  # a bare computation: XLA takes the last one as the entry
    fused = re.search(r"\bfusion\(.*\bcalls=%?([\w.\-]+)", entry.group(1))
    if not fused:
        return text
    text = without_entry_layout(text[:entry.start()] + text[entry.end():])
    header = re.search(r"^%%?%s\b[^\n]*\{\n.*?^\}\n?" % re.escape(fused.group(1)), text,
                       re.M | re.S)
    body = header.group(0)
    text = text[:header.start()] + text[header.end():]
    return text.rstrip() + "\n\nENTRY " + body.rstrip() + "\n"


REDUCERS = ("add", "or", "multiply", "and", "maximum", "minimum")


def identity_of(reducer, dtype):
    """The value `reducer` (an element of REDUCERS) leaves unchanged, as `dtype`."""
    import numpy as np
    if reducer in ("add", "or"):
        return np.zeros((), dtype)
    if reducer == "multiply":
        return np.ones((), dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array({"and": -1 if dtype.kind == "i" else info.max, "maximum": info.min,
                         "minimum": info.max}[reducer], dtype)
    if dtype.kind == "b":
        return np.array(reducer != "maximum", dtype)
    return np.array({"and": 1, "maximum": -np.inf, "minimum": np.inf}[reducer]).astype(dtype)


def reduction_identities(text):
    """{parameter number: reducer} for the entry's parameters that are a reduce's init
    value, whose value must be that reducer's identity (identity_of). XLA requires an init to be
    one; with any other value each backend may fold it in a different number of times
    (XLA:CUDA once per partial sum, XLA:CPU and tilesmith once), so random ones differ."""
    bodies = re.findall(r"^(ENTRY\b)?[^\n]*\{\n(.*?)^\}", text, re.M | re.S)
    if not bodies:
        return {}
    # The ENTRY, else (a bare module) the last computation, as XLA's parser takes it.
    entry = next((body for is_entry, body in bodies if is_entry), bodies[-1][1])
    parameters = dict(re.findall(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*[^=\n]*?\bparameter\((\d+)\)",
                                 entry, re.M))
    identities = {}
    for operands, reducer in re.findall(r"\breduce\((.*?)\).*?\bto_apply=%?([\w.\-]+)",
                                        entry):
        names = [operand.split()[-1].lstrip("%") for operand in operands.split(",")
                 if operand.strip()]
        body = re.search(r"^%%?%s\b[^\n]*\{\n(.*?)^\}" % re.escape(reducer), text, re.M | re.S)
        root = body and re.search(r"^\s*ROOT\s[^=]*=\s*\S+\s+(\w+)\(", body.group(1), re.M)
        if not root or root.group(1) not in REDUCERS or len(names) % 2:
            continue
        for name in names[len(names) // 2:]:
            if name in parameters:
                identities[int(parameters[name])] = root.group(1)
    return identities
