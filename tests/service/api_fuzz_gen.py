"""Requests for the API fuzzer (api_fuzz.py): valid seeds mutated structurally.

Every request comes from one `random.Random`, so a seed gives the same mix of routes,
methods and mutations. Seeds are real fusions: the HLO and AscGraph examples of the
repository and, when present, files of the shared corpus (read in place).
"""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ELEMENT_TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16",
                 "f32", "f64", "c64", "c128", "f8e4m3fn", "f8e5m2"]
ASC_DTYPES = ["FLOAT", "FLOAT16", "BF16", "DOUBLE", "INT8", "INT16", "INT32", "INT64", "UINT8",
              "UINT16", "UINT32", "UINT64", "BOOL", "DT_FLOAT", "COMPLEX64", "", 0, 1, 27, -1]
HUGE_DIMS = [2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 10**30]
SMALL_DIMS = [1, 2, 3, 7]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"]
STRATEGIES = ["model", "exhaustive", "random", "best-first", "evolutionary"]
GET_ROUTES = ["/healthz", "/metrics", "/v1/devices", "/v1/kernels", "/report"]
POST_ROUTES = ["/v1/query", "/v1/query:batch", "/v1/tune", "/v1/split"]
HLO_TOKENS = ["{", "}", "(", ")", "[", "]", ",", "=", "%", "ROOT ", "ENTRY ", "fusion", "0",
              "parameter(0)", "dimensions={}", "calls=", "kind=kLoop", "\n", "/*", "*/", "\"",
              "-", "e+308", "{...}", "tuple()", "f32[]", "s32[2]{0}", ":T(2,2)", "HloModule m\n",
              "reduce(", "to_apply=", "slice={[0:1]}", "\u00e9", "\x00", "\ud800", "-0", "nan"]
WEIRD_STRINGS = ["", " ", "\x00", "a\x00b", "\ud800", "\udfff\ud800", "\U0001F600" * 3,
                 "\u202e\u00e9\u6f22", "../../../etc/passwd", "%00", "null", "{", "\\",
                 "\"", "host\n", "HOST", "cuda:sm_90", "cuda:sm_9999999999", "p0,out0", "out99"]


def _read(path):
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def load_seeds(corpus_dir):
    """(hlo_texts, ascgraphs): each ascgraph is (text_or_object, size_names)."""
    hlo_paths = [ROOT / "configs/examples/gelu.hlo"]
    hlo_paths += sorted((ROOT / "tests/data").glob("split_*.hlo"))
    hlo_paths += sorted((ROOT / "tests/data/eval").glob("*.hlo"))
    asc_paths = sorted((ROOT / "configs/examples/ascgraph").glob("*.ascgraph.*"))
    asc_paths += sorted((ROOT / "tests/data/ascgraph/invalid").glob("*.ascgraph.*"))
    corpus = Path(corpus_dir) if corpus_dir else None
    if corpus and corpus.is_dir():
        hlo_paths += sorted((corpus / "xla").glob("*/*.hlo"))
        asc_paths += sorted((corpus / "ascgraph").glob("*.ascgraph.*"))
    hlo = [t for t in (_read(p) for p in hlo_paths) if t]
    asc = []
    for path in asc_paths:
        text = _read(path)
        if not text:
            continue
        sizes = sorted(set(re.findall(r"\bs\d+\b", text)))
        if path.name.endswith(".json"):
            try:
                graph = json.loads(text)
            except ValueError:
                continue
            asc.append((graph, sizes))
        else:
            asc.append((text, sizes))
    return hlo, asc


class Generator:
    """Makes request descriptions: method, path, headers, body (bytes) and what to expect."""

    def __init__(self, rng, hlo, asc, token, zero_dims=True):
        self.rng = rng
        self.hlo = hlo
        self.asc = asc
        self.token = token
        self.zero_dims = zero_dims
        self.small_hlo = [t for t in hlo if _largest_shape(t) <= 1 << 16] or hlo
        self.fingerprints = ["96f8a4bf" + "0" * 56]
        self.jobs = ["0" * 32]

    # ---- values -------------------------------------------------------------------------
    def weird_value(self, depth=0):
        r = self.rng
        choice = r.randrange(20)
        if choice == 0:
            return None
        if choice == 1:
            return r.choice([True, False])
        if choice == 2:
            return r.choice([0, -1, 1, -(2**63), 2**63 - 1, 2**63, 2**64, 10**40, -(10**40)])
        if choice == 3:
            return r.choice([0.5, -0.0, 1e308, -1e308, 1e-320, 3.0, 2.0**53 + 1])
        if choice == 4:
            return r.choice(WEIRD_STRINGS)
        if choice == 5:
            return "x" * r.choice([1000, 70000, 300000])
        if choice == 6:
            return "".join(chr(r.choice([r.randrange(1, 0x80), r.randrange(0x80, 0xD800),
                                         r.randrange(0xD800, 0xE000), r.randrange(0xE000, 0x110000)]))
                           for _ in range(r.randrange(1, 40)))
        if choice == 7:
            return [] if r.random() < 0.5 else {}
        if choice == 8:
            return self.deep(r.choice([10, 255, 257, 1000, 5000]))
        if choice == 9:
            return [r.randrange(-3, 3) for _ in range(r.choice([3, 1000, 20000]))]
        if choice == 10 and depth < 3:
            return {self.weird_key(): self.weird_value(depth + 1) for _ in range(r.randrange(1, 4))}
        if choice == 11 and depth < 3:
            return [self.weird_value(depth + 1) for _ in range(r.randrange(1, 4))]
        if choice == 12:
            return r.randrange(-5, 5)
        return r.choice(["host", "cuda:sm_90", "model", "p0", "s0", "s0=4", "P('i')", "i"])

    def weird_key(self):
        return self.rng.choice(["", "fusion", "ascgraph", "sizes", "target", "budget", "x" * 300,
                                "\x00", "\ud800", "\u00e9", "queries", "predict", "wait", "a.b"])

    def deep(self, depth):
        value = 0
        for i in range(depth):
            value = [value] if i % 2 else {"a": value}
        return value

    # ---- fusions ------------------------------------------------------------------------
    def dims(self, small):
        pool = [0] if self.zero_dims else []
        pool += SMALL_DIMS if small else SMALL_DIMS + HUGE_DIMS
        return self.rng.choice(pool)

    def mutate_hlo(self, text, small=False):
        r = self.rng
        for _ in range(r.choice([0, 1, 1, 1, 2, 3])):
            # Half the mutations keep the module well formed (dimensions, types, layouts,
            # ranks), so they reach the analysis and the cost models.
            op = r.randrange(4) if r.random() < 0.5 else r.randrange(4, 9)
            if op == 0 and text:  # replace one character
                i = r.randrange(len(text))
                text = text[:i] + r.choice(["\x00", "\xff", "\ud800", "{", "]", "9", " ", "\n",
                                            chr(r.randrange(32, 127))]) + text[i + 1:]
            elif op == 1 and text:  # delete a span
                i = r.randrange(len(text))
                text = text[:i] + text[i + r.randrange(1, 40):]
            elif op == 2:  # insert a token
                i = r.randrange(len(text) + 1)
                text = text[:i] + r.choice(HLO_TOKENS) + text[i:]
            elif op == 3:  # swap two tokens
                tokens = re.findall(r"\w+|[^\w\s]|\s+", text)
                if len(tokens) > 2:
                    a, b = r.randrange(len(tokens)), r.randrange(len(tokens))
                    tokens[a], tokens[b] = tokens[b], tokens[a]
                    text = "".join(tokens)
            elif op in (4, 5):  # a dimension value everywhere (the module stays valid)
                values = re.findall(r"\[([\d,]+)\]", text)
                dims = sorted({d for v in values for d in v.split(",") if d})
                if dims:
                    old, new = r.choice(dims), str(self.dims(small))
                    everywhere = op == 4
                    text = re.sub(r"\[([\d,]+)\]", lambda m: "[" + ",".join(
                        new if d == old and (everywhere or r.random() < 0.3) else d
                        for d in m.group(1).split(",")) + "]", text)
            elif op == 6:  # an element type everywhere, or once
                present = [t for t in ELEMENT_TYPES if t + "[" in text]
                if present:
                    old, new = r.choice(present), r.choice(ELEMENT_TYPES)
                    count = 0 if r.random() < 0.6 else 1
                    text = re.sub(r"\b%s\[" % re.escape(old), new + "[", text, count=count)
            elif op == 7:  # mangle a layout
                text = re.sub(r"\]\{[\d,]*\}|\](?=[ ,)])", lambda m: "]" + r.choice(
                    ["{}", "{0}", "{1,0}", "{0,1}", "{5,5}", "{0,0}", "{1,0:T(2,2)}", "{2,1,0}",
                     "{-1}", "{" + ",".join(["0"] * 40) + "}"])
                    if r.random() < 0.2 else m.group(0), text)
            else:  # change a rank
                text = re.sub(r"\[([\d,]+)\]", lambda m: "[" + m.group(1) + ",1]"
                              if r.random() < 0.1 else m.group(0), text)
        return text

    def huge_hlo(self):
        count = self.rng.choice([2000, 20000])
        lines = ["HloModule huge", "", "ENTRY e {", "  p0 = f32[64] parameter(0)"]
        prev = "p0"
        for i in range(count):
            lines.append(f"  v{i} = f32[64] {self.rng.choice(['add', 'multiply'])}({prev}, p0)")
            prev = f"v{i}"
        lines.append(f"  ROOT r = f32[64] negate({prev})")
        return "\n".join(lines) + "\n}\n"

    def mutate_json(self, value, budget=2):
        """A copy of `value` with a few nodes replaced, deleted or added."""
        r = self.rng
        if budget <= 0 or r.random() < 0.3:
            return value
        if isinstance(value, dict) and value:
            out = dict(value)
            key = r.choice(list(out))
            action = r.randrange(5)
            if action == 0:
                del out[key]
            elif action == 1:
                out[self.weird_key()] = self.weird_value()
            elif action == 2:
                out[key] = self.weird_value()
            else:
                out[key] = self.mutate_json(out[key], budget - 1)
            return out
        if isinstance(value, list) and value:
            out = list(value)
            i = r.randrange(len(out))
            action = r.randrange(4)
            if action == 0:
                del out[i]
            elif action == 1:
                out.insert(i, out[i])
            else:
                out[i] = self.mutate_json(out[i], budget - 1)
            return out
        if isinstance(value, str):
            if re.fullmatch(r"s\d+", value) or "*" in value:
                return r.choice(["0", "-1", "s0 / 0", "s0 * 0", "s99", "2147483648", "s0 -",
                                 "(((s0)))", "s0 % 0", "99999999999999999999", value + " * s1"])
            if value in ASC_DTYPES:
                return r.choice(ASC_DTYPES)
            return r.choice([self.weird_value(), value[::-1], value + "\x00"])
        if isinstance(value, bool) or value is None:
            return self.weird_value()
        if isinstance(value, (int, float)):
            return r.choice([0, -1, 1, 2**31, 2**63 - 1, -(2**63), 2**64, 0.5, 1e300, 7])
        return value

    def fusion_fields(self, small=False):
        r = self.rng
        roll = r.random()
        if roll < 0.003:
            return {"fusion": self.huge_hlo()}
        if roll < 0.7 or not self.asc:
            text = r.choice(self.small_hlo if small else self.hlo)
            return {"fusion": self.mutate_hlo(text, small) if r.random() < 0.8 else text}
        graph, names = r.choice(self.asc)
        if isinstance(graph, str):
            graph = self.mutate_hlo(graph, small) if r.random() < 0.7 else graph
            if r.random() < 0.1:
                graph = json.dumps(graph)[1:-1]
        else:
            graph = self.mutate_json(graph, 4) if r.random() < 0.7 else graph
            if r.random() < 0.2:
                graph = json.dumps(graph)
        fields = {"ascgraph": graph}
        if r.random() < 0.9:
            sizes = {n: self.dims(small) if r.random() < 0.1 else r.choice([1, 2, 4, 8, 16])
                     for n in names}
            fields["sizes"] = self.mutate_json(sizes) if r.random() < 0.2 else sizes
        return fields

    # ---- routes -------------------------------------------------------------------------
    def query_body(self):
        r = self.rng
        tune = r.random() < 0.08
        body = self.fusion_fields(small=tune)
        if r.random() < 0.95:  # this server serves two targets: one must be named
            body["target"] = r.choice(["host"] * 6 + ["cuda:sm_90"] * 4 + ["cuda:sm_80"])
        if r.random() < 0.4:
            body["predict"] = r.random() < 0.8
        if tune:
            body["tune_if_missing"] = r.choice([False, {"budget": 1, "strategy": "random"}])
        return body

    def tune_body(self):
        r = self.rng
        body = self.fusion_fields(small=True)
        body.update({"target": "host", "budget": r.choice([1, 1, 2]),
                     "strategy": r.choice(STRATEGIES), "seed": r.randrange(4)})
        if r.random() < 0.2:
            body["free_layouts"] = r.choice([["p0"], ["out0"], "p0,out0", ["p9"], []])
        if r.random() < 0.05:
            body.update({"wait": True, "timeout_s": r.choice([0, 1, 2])})
        return body

    def split_body(self):
        r = self.rng
        body = self.fusion_fields(small=True)
        body["mesh"] = r.choice(["host-4x2"] * 4 + ["h100x8-nvlink", "no_such", "../x", {
            "name": "m", "device": "host",
            "axes": [{"name": "i", "size": r.choice([1, 2, 4]), "bandwidth_gbps": 20,
                      "latency_us": 1}]}])
        if r.random() < 0.5:
            body["in_specs"] = r.choice([["P('i','j')", "P('j',None)"], [["i", None], None],
                                         ["P('i')"], [None, None, None], "P('i')"])
        if r.random() < 0.4:
            body["out_specs"] = r.choice([["P('i',None)"], [None], [[["j", "i"], None]]])
        if r.random() < 0.5:
            body["top"] = r.choice([0, 1, 5, 10])
        return body

    def post_body(self, path):
        r = self.rng
        if path == "/v1/query":
            body = self.query_body()
        elif path == "/v1/tune":
            body = self.tune_body()
        elif path == "/v1/split":
            body = self.split_body()
        else:
            count = r.choice([0, 1, 2, 3, 5, 20, 10001] if r.random() < 0.05 else [1, 2, 3, 5])
            if count > 100:
                queries = [{} for _ in range(count)]
            else:
                queries = [self.query_body() for _ in range(count)]
            body = {"queries": queries}
            if r.random() < 0.6:
                body["target"] = r.choice(["host", "cuda:sm_90"])
            if r.random() < 0.3:
                body["predict"] = r.random() < 0.8
        if r.random() < 0.35 and path != "/v1/tune":
            body = self.mutate_json(body, 3)
            if isinstance(body, dict) and body.get("tune_if_missing") not in (None, False):
                # A mutation that asks for a tune: keep the tuned fusion small.
                for key in ("fusion", "ascgraph", "sizes"):
                    body.pop(key, None)
                body.update(self.fusion_fields(small=True))
        return body

    def encode(self, body):
        """The body as bytes; sometimes with a duplicate key, stray bytes or another form."""
        r = self.rng
        text = json.dumps(body, ensure_ascii=r.random() < 0.7)
        roll = r.random()
        if roll < 0.04 and text.startswith("{"):
            key = r.choice(list(body) or ["fusion"]) if isinstance(body, dict) else "x"
            text = "{" + json.dumps(key) + ":" + json.dumps(self.weird_value()) + \
                   ("," if len(text) > 2 else "") + text[1:]
        elif roll < 0.07 and text:
            i = r.randrange(len(text))
            text = text[:i] + r.choice(["", "\x00", ",", "}", "\"", "\\", "\ud800", "1e999"]) + \
                text[i + r.randrange(0, 3):]
        elif roll < 0.08:
            text = r.choice(["", "[]", "null", "1", "\"x\"", "{", "[" * 300 + "]" * 300,
                             "{\"a\":" * 300 + "1" + "}" * 300, "\ufeff{}"])
        data = text.encode("utf-8", errors="surrogatepass")
        if r.random() < 0.01:
            data = data.replace(b"host", b"h\xffst\xc0")
        return data

    def auth(self):
        """(header value or None, whether a server must accept it)."""
        r = self.rng
        t = self.token
        if r.random() < 0.88:
            return "Bearer " + t, True
        return r.choice([(None, False), ("bearer " + t, True), ("BEARER " + t, True),
                         ("Bearer  " + t + "  ", True), ("Bearer " + t + "x", False),
                         ("Bearer " + t[:-1], False), ("Basic " + t, False), ("Bearer", False),
                         ("Bearer ", False), (t, False), ("Bearer \u00e9" + t, False),
                         ("bEaReR " + t, True)])

    def path_for(self, path):
        r = self.rng
        if path == "/v1/kernels" and r.random() < 0.4:
            return path + "?target=" + r.choice(["host", "cuda:sm_90", "nope", "%ff", "", "%00",
                                                 "host&target=x", "h%6fst"])
        if path == "/report" and r.random() < 0.5:
            return "/report/" + r.choice(self.fingerprints)[: r.choice([3, 6, 10, 64])]
        return path

    def id_path(self):
        r = self.rng
        if r.random() < 0.5:
            fp = r.choice(self.fingerprints)
            return "/v1/kernels/" + r.choice([fp, fp[:6], fp[:5], fp.upper(), fp + "0", "zz" * 4,
                                              "%30" * 8, "a" * 10000])
        job = r.choice(self.jobs)
        return "/v1/jobs/" + r.choice([job, job[:10], "..", "%2e%2e", "x" * 5000, job + "%00"])

    def odd_path(self):
        r = self.rng
        return r.choice(["/", "", "*", "/v1", "/v1/", "/v1//query", "/v1/query/", "/V1/QUERY",
                         "/v1/%71uery", "/v1/query%00", "/../v1/query", "//healthz",
                         "/healthz?x=1", "/healthz#f", "http://127.0.0.1/healthz",
                         "/v1/jobs/", "/v1/jobs/a/b", "/v1/kernels/a/b", "/report/a/b",
                         "/report/%zz", "/v1/query:batchx", "/\u00e9", "/%", "/%%41",
                         "/v1/kernels?" + "&".join(["target=host"] * 200),
                         "/" + "a" * r.choice([100, 8000, 70000]), "/v1/query?predict=true"])

    def next_request(self):
        """A dict: method, path, headers, body (bytes), route, expectations."""
        r = self.rng
        roll = r.random()
        req = {"headers": {}, "body": b"", "raw": None, "expect": {}}
        if roll < 0.05:
            req["raw"] = self.raw_request()
            req.update(method="RAW", path="", route="raw")
            return req
        if roll < 0.55:
            path = r.choice(POST_ROUTES + ["/v1/query", "/v1/query", "/v1/split"])
            method = "POST"
        elif roll < 0.75:
            path = self.path_for(r.choice(GET_ROUTES))
            method = "GET" if r.random() < 0.85 else "HEAD"
        elif roll < 0.85:
            path = self.id_path()
            method = r.choice(["GET", "GET", "DELETE", "HEAD"])
        elif roll < 0.93:
            path = r.choice(GET_ROUTES + POST_ROUTES)
            method = r.choice(METHODS + ["get", "FOO", "GET GET", "M" * 300])
        else:
            path = self.odd_path()
            method = r.choice(METHODS)
        req.update(method=method, path=path, route=path.split("?")[0][:60])
        if method == "POST" or (method in ("PUT", "PATCH") and r.random() < 0.5):
            body = self.post_body(path if path in POST_ROUTES else "/v1/query")
            req["body"] = self.encode(body)
            req["json"] = body
            req["headers"]["Content-Type"] = r.choice(["application/json"] * 5 +
                                                      ["text/plain", "", "application/json; x"])
        auth, accepted = self.auth()
        if auth is not None:
            req["headers"]["Authorization"] = auth
        req["expect"]["auth_ok"] = accepted
        return req

    def raw_request(self):
        """Bytes of a malformed or unusual HTTP request."""
        r = self.rng
        auth = ("Authorization: Bearer " + self.token + "\r\n").encode()
        body = json.dumps({"fusion": r.choice(self.small_hlo), "target": "host"}).encode()
        size = str(len(body)).encode()
        chunk = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        post = b"POST /v1/query HTTP/1.1\r\nHost: x\r\n" + auth
        cases = [
            b"\x00\xff\xfe garbage\r\n\r\n",
            b"GET /healthz\r\n\r\n",
            b"GET /healthz HTTP/1.0\r\n\r\n",
            b"GET /healthz HTTP/2.0\r\n\r\n",
            b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
            b"GET /healthz HTTP/1.1\nHost: x\n\n",
            b"GET /v1/devices HTTP/1.1\r\nHost: x\r\nNoColonHeader\r\n\r\n",
            b"GET /v1/devices HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n" + auth + b"\r\n",
            b"GET /v1/devices HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
            b"GET /v1/devices HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(3000))
            + b"\r\n",
            post + b"Content-Length: -1\r\n\r\n" + body,
            post + b"Content-Length: abc\r\n\r\n" + body,
            post + b"Content-Length: 99999999999999999999\r\n\r\n" + body,
            post + b"Content-Length: " + size + b"\r\nContent-Length: 3\r\n\r\n" + body,
            post + b"Content-Length: " + size + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk,
            post + b"Transfer-Encoding: chunked\r\n\r\n" + chunk,
            post + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n" + body + b"\r\n0\r\n\r\n",
            post + b"Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n" + body,
            post + b"Transfer-Encoding: chunked\r\n\r\n%x;ext=1\r\n%s\r\n0\r\nTrailer: x\r\n\r\n"
            % (len(body), body),
            post + b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(body), body),
            post + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + chunk,
            post + b"Content-Length: " + size + b"\r\n\r\n" + body[: len(body) // 2],
            post + b"Content-Length: " + size + b"\r\n\r\n" + body + b"GET /healthz HTTP/1.1\r\n\r\n",
            post + b"Content-Length: 5000000\r\n\r\n" + b"{" * 5000000,
            post + b"Expect: 100-continue\r\nContent-Length: " + size + b"\r\n\r\n" + body,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/devices HTTP/1.1\r\nHost: x\r\n"
            + auth + b"\r\n",
            b"GET /v1/devices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + self.token.encode()
            + b"\r\nAuthorization: Bearer wrong\r\n\r\n",
            b"GET /v1/devices HTTP/1.1\r\nHost: x\r\nAuthorization: \xff\xfe\r\n\r\n",
            b"GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n",
            b"\r\n\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n",
        ]
        return r.choice(cases)


def _largest_shape(text):
    largest = 0
    for dims in re.findall(r"\[([\d,]+)\]", text):
        count = 1
        for d in dims.split(","):
            if d:
                count *= int(d)
        largest = max(largest, count)
    return largest
