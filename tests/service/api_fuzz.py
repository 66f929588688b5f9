#!/usr/bin/env python3
"""Fuzzes the whole HTTP API of `tilesmith serve` on 127.0.0.1 (standard library only).

  api_fuzz.py --server build/bin/tilesmith --requests 2000 --seed 1 [--time-limit 240]
              [--json OUT] [--repro-dir DIR] [--keep-going] [--no-zero-dims]
  api_fuzz.py --server build/bin/tilesmith --replay DIR/api_fuzz_seed1_req42.http

Starts a server over a fresh database with a token, sends requests made from real
fusions mutated structurally (api_fuzz_gen.py; the mix follows the seed), and checks after
every request: the server is alive, no 5xx (nor a 5xx inside a batch), a valid bearer token
(any case of the scheme) is accepted and an invalid one refused, HEAD is allowed where GET is,
a query whose `predict` or `tune_if_missing` has the wrong type is 400. A thread probes
/healthz every 0.1 s (time to the whole response), and every 10th request does too; none may
take over 100 ms. At the end the server must exit 0 on SIGTERM and the database must pass
`PRAGMA integrity_check`. Each failure writes the request (raw bytes, and a description with
the seed, request number and route) to the reproducer folder. Exit status 1 on any failure.
"""

import argparse
import base64
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_fuzz_gen  # noqa: E402

HEALTHZ_LIMIT_MS = 100.0
REQUEST_TIMEOUT_S = 60.0
SERVER_ERRORS = (500, 502, 503, 504)


class Server:
    """`tilesmith serve` as a process over `db` with a token file."""

    def __init__(self, binary, workdir, token):
        self.binary = binary
        self.workdir = Path(workdir)
        self.db = self.workdir / "fuzz.db"
        token_file = self.workdir / "token"
        token_file.write_text(token + "\n")
        self.stderr_path = self.workdir / "server.stderr"
        self.args = [binary, "serve", "--port", "0", "--db", str(self.db), "--targets",
                     "host,cuda:sm_90", "--token-file", str(token_file), "--workers", "1",
                     "--batch", "1", "--warmup-ms", "1", "--rep-ms", "2", "--read-timeout", "5",
                     "--body-limit-mib", "4"]
        self.proc = None
        self.port = None

    def start(self):
        stderr = open(self.stderr_path, "ab")
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=stderr)
        stderr.close()
        line = self.proc.stdout.readline().decode(errors="replace")
        match = re.search(r"http://[\d.]+:(\d+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError("the server did not start: %r; stderr: %s" % (line, self.stderr_tail()))
        self.port = int(match.group(1))

    def alive(self, wait_s=0.0):
        """False once the process has exited (waiting up to wait_s for it to go)."""
        deadline = time.monotonic() + wait_s
        while True:
            if self.proc.poll() is not None:
                return False
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.05)

    def stop(self, timeout_s=20.0):
        """(exit code or None if it did not stop, seconds taken) after SIGTERM."""
        start = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        return code, time.monotonic() - start

    def stderr_tail(self, lines=15):
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def http_bytes(req, port):
    """The bytes of a generated request (or its raw bytes)."""
    if req["raw"] is not None:
        return req["raw"]
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n" % (
        req["method"], req["path"], port)
    for name, value in req["headers"].items():
        head += "%s: %s\r\n" % (name, value)
    body = req["body"]
    if body or req["method"] in ("POST", "PUT", "PATCH"):
        head += "Content-Length: %d\r\n" % len(body)
    return head.encode("utf-8", errors="surrogatepass") + b"\r\n" + body


def exchange(port, data, timeout_s=REQUEST_TIMEOUT_S, head_only=False):
    """Sends `data`, half-closes, reads until the server closes. (bytes, error or None)."""
    chunks = []
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            try:
                sock.sendall(data)
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server may answer (413, 431) and close before reading it all
            deadline = time.monotonic() + timeout_s
            while True:
                if time.monotonic() > deadline:
                    return b"".join(chunks), "no answer within %.0f s" % timeout_s
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                if head_only and b"\r\n\r\n" in b"".join(chunks):
                    break
    except socket.timeout:
        return b"".join(chunks), "no answer within %.0f s" % timeout_s
    except OSError as error:
        return b"".join(chunks), "connection error: %s" % error
    return b"".join(chunks), None


def parse_response(data):
    """(status or None, headers dict, body bytes) of the first response in `data`."""
    while True:
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        match = re.match(r"HTTP/1\.[01] (\d{3})", lines[0]) if lines else None
        if not match:
            return None, {}, b""
        if not match.group(1).startswith("1") or not body:
            break
        data = body  # an interim answer (100 Continue): the final one follows
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        decoded, rest = b"", body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            try:
                size = int(size_line.split(b";")[0], 16)
            except ValueError:
                break
            if size == 0:
                break
            decoded, rest = decoded + rest[:size], rest[size + 2:]
        body = decoded
    elif "content-length" in headers:
        body = body[: int(headers["content-length"] or 0)]
    return int(match.group(1)), headers, body


def healthz_ms(port, timeout_s=10.0):
    start = time.monotonic()
    data, error = exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                           timeout_s)
    elapsed = (time.monotonic() - start) * 1000
    status, _, _ = parse_response(data)
    return elapsed if status == 200 and error is None else None


class Prober(threading.Thread):
    """GET /healthz every `interval_s` while the fuzzer runs; records the slowest."""

    def __init__(self, port, interval_s=0.1):
        super().__init__(daemon=True)
        self.port = port
        self.interval_s = interval_s
        self.stop_event = threading.Event()
        self.current = 0  # the request in flight, set by the fuzzer
        self.samples = 0
        self.slowest = 0.0
        self.slow = []  # (ms, request number) over the limit
        self.failed = []

    def run(self):
        while not self.stop_event.wait(self.interval_s):
            at = self.current
            ms = healthz_ms(self.port)
            if ms is None:
                self.failed.append(at)
                continue
            self.samples += 1
            self.slowest = max(self.slowest, ms)
            if ms > HEALTHZ_LIMIT_MS:
                self.slow.append((round(ms, 1), at))


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.token = "fuzz-%016x" % self.rng.getrandbits(64)
        hlo, asc = api_fuzz_gen.load_seeds(args.corpus)
        self.gen = api_fuzz_gen.Generator(self.rng, hlo, asc, self.token, not args.no_zero_dims)
        self.seed_counts = (len(hlo), len(asc))
        self.counts = {"requests": 0, "1xx": 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0,
                       "no_status": 0, "crashes": 0, "restarts": 0}
        self.by_route = {}
        self.failures = []
        self.history = []
        self.slowest_sync = 0.0
        self.repro_dir = Path(args.repro_dir)
        self.stop_reason = None

    # ---- failures -----------------------------------------------------------------------
    def fail(self, number, req, kind, detail, response=b""):
        record = {"seed": self.args.seed, "request": number, "route": req.get("route"),
                  "method": req.get("method"), "path": req.get("path"), "failure": kind,
                  "detail": detail, "response_head": response[:600].decode("utf-8", "replace")}
        self.failures.append(record)
        self.repro_dir.mkdir(parents=True, exist_ok=True)
        stem = self.repro_dir / ("api_fuzz_seed%d_req%d" % (self.args.seed, number))
        raw = req.get("bytes", b"")
        stem.with_suffix(".http").write_bytes(raw)
        record["reproducer"] = str(stem.with_suffix(".http"))
        record["previous"] = [{"request": r.get("number"), "route": r["route"],
                               "method": r["method"],
                               "bytes_b64": base64.b64encode(r.get("bytes", b"")[:200000]).decode()}
                              for r in self.history if r.get("number", number) < number][-5:]
        stem.with_suffix(".json").write_text(json.dumps(record, indent=1))
        print("api_fuzz: FAIL seed %d request %d %s %s: %s: %s (reproducer %s)" % (
            self.args.seed, number, req.get("method"), (req.get("path") or "")[:80], kind,
            detail, record["reproducer"]), file=sys.stderr, flush=True)

    # ---- checks -------------------------------------------------------------------------
    def check(self, number, req, data, error, status, headers, body):
        route = req["route"]
        if status in SERVER_ERRORS or (status and status >= 500):
            self.fail(number, req, "5xx", "status %d: %s" % (status, body[:300]), data)
        if req["raw"] is not None:
            for code in re.findall(rb"(?:^|\r\n)HTTP/1\.[01] (5\d\d)", data)[1:]:
                self.fail(number, req, "5xx", "pipelined answer %s" % code.decode(), data)
        if error and "no answer" in error:
            self.fail(number, req, "hang", error, data)
        elif status is None and req["raw"] is None and len(req["bytes"]) < (4 << 20) and \
                "\r\n" not in req["path"] and " " not in req["method"]:
            self.fail(number, req, "no_answer", "the connection closed without an answer (%s)"
                      % (error or "no status line"), data)
        if req["raw"] is not None or status is None:
            return
        known = route in api_fuzz_gen.GET_ROUTES + api_fuzz_gen.POST_ROUTES or re.fullmatch(
            r"/v1/(jobs|kernels)/[^/]+|/report/[^/]*", route)
        get_route = known and route not in api_fuzz_gen.POST_ROUTES
        if req["method"] == "HEAD" and get_route and status == 405:
            self.fail(number, req, "head", "HEAD on a GET route answered 405", data)
        if status == 405 and "allow" not in headers:
            self.fail(number, req, "allow", "405 without an Allow header", data)
        allowed = (req["method"] == "POST") == (route in api_fuzz_gen.POST_ROUTES) or (
            req["method"] == "HEAD" and get_route) or (
            req["method"] == "DELETE" and route.startswith("/v1/jobs/"))
        if known and allowed and route != "/healthz" and req["method"] in ("GET", "HEAD", "POST",
                                                                            "DELETE"):
            if req["expect"].get("auth_ok") and status == 401:
                self.fail(number, req, "auth", "a valid token (%r) got 401" %
                          req["headers"].get("Authorization", "")[:12], data)
            if not req["expect"].get("auth_ok") and status < 400:
                self.fail(number, req, "auth", "an invalid token got %d" % status, data)
        if status == 401:
            return
        self.check_body(number, req, status, body, data)

    def check_body(self, number, req, status, body, data):
        sent = req.get("json")
        if req["method"] != "POST" or not isinstance(sent, dict) or not req.get("clean"):
            return
        if req["route"] == "/v1/query" and bad_flags(sent) and status in (200, 202, 404):
            self.fail(number, req, "flags", "predict/tune_if_missing of a wrong type got %d" %
                      status, data)
        if req["route"] != "/v1/query:batch" or status != 200:
            return
        try:
            answer = json.loads(body)
        except ValueError:
            return self.fail(number, req, "body", "a 200 batch answer is not JSON", data)
        queries = sent.get("queries") if isinstance(sent.get("queries"), list) else []
        for i, result in enumerate(answer.get("results", [])):
            item_status = result.get("status") if isinstance(result, dict) else None
            if isinstance(item_status, int) and item_status >= 500:
                self.fail(number, req, "5xx", "batch query %d: %s" % (i, json.dumps(result)[:300]),
                          data)
            if i < len(queries) and isinstance(queries[i], dict) and bad_flags(queries[i]) \
                    and item_status in (200, 202, 404):
                self.fail(number, req, "flags", "batch query %d with a wrongly typed flag got %s"
                          % (i, item_status), data)

    def learn(self, req, status, body):
        """Fingerprints and job ids from answers, for later GET/DELETE requests."""
        if status is None or not body.startswith(b"{"):
            return
        for fp in re.findall(rb'"fingerprint":\s*"([0-9a-f]{64})"', body[:20000])[:2]:
            if fp.decode() not in self.gen.fingerprints:
                self.gen.fingerprints.append(fp.decode())
        for job in re.findall(rb'"id":\s*"([0-9a-f]{32})"', body[:20000])[:2]:
            if job.decode() not in self.gen.jobs:
                self.gen.jobs.append(job.decode())

    # ---- the run ------------------------------------------------------------------------
    def cancel_jobs(self, server):
        for job in self.gen.jobs[1:]:
            exchange(server.port, ("DELETE /v1/jobs/%s HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                   "Bearer %s\r\nConnection: close\r\n\r\n" % (job, self.token)
                                   ).encode(), 30.0)

    def run(self, workdir):
        args = self.args
        server = Server(args.server, workdir, self.token)
        server.start()
        prober = Prober(server.port)
        prober.start()
        start = time.monotonic()
        number = 0
        try:
            while number < args.requests:
                if time.monotonic() - start > args.time_limit:
                    self.stop_reason = "time limit (%.0f s)" % args.time_limit
                    break
                number += 1
                prober.current = number
                req = self.gen.next_request()
                req["number"] = number
                req["clean"] = req["raw"] is None and self._clean(req)
                req["bytes"] = http_bytes(req, server.port)
                self.history = (self.history + [req])[-8:]
                data, error = exchange(server.port, req["bytes"], head_only=req["method"] == "HEAD")
                status, headers, body = parse_response(data)
                self.count(req, status)
                if not server.alive(0.3 if error else 0.0):
                    self.counts["crashes"] += 1
                    code = server.proc.returncode
                    how = "killed by signal %d" % -code if code < 0 else "exited %d" % code
                    culprits = self.blame(workdir)
                    self.fail(number, req, "crash", "the server %s; alone on a fresh server, "
                              "request(s) %s kill it; stderr:\n%s" % (
                                  how, culprits or "none", server.stderr_tail()), data)
                    if not args.keep_going:
                        self.stop_reason = "crash"
                        break
                    self.counts["restarts"] += 1
                    server.start()
                    prober.port = server.port
                    continue
                self.check(number, req, data, error, status, headers, body)
                self.slow_healthz(prober)
                self.learn(req, status, body)
                if number % 10 == 0:
                    ms = healthz_ms(server.port)
                    if ms is None:
                        self.fail(number, req, "healthz", "GET /healthz did not answer 200")
                    else:
                        self.slowest_sync = max(self.slowest_sync, ms)
                        if ms > HEALTHZ_LIMIT_MS:
                            self.fail(number, req, "healthz", "GET /healthz took %.1f ms" % ms)
                if number % 100 == 0:
                    self.cancel_jobs(server)
        finally:
            prober.stop_event.set()
            prober.join()
        self.slow_healthz(prober)
        self.elapsed = time.monotonic() - start
        alive = server.proc.poll() is None
        if alive:
            self.cancel_jobs(server)
        code, took = server.stop()
        if alive and code != 0:
            self.fail(number, {"route": "SIGTERM", "method": "", "path": ""}, "sigterm",
                      "the server exited %s %.1f s after SIGTERM" % (code, took))
        self.sigterm = (code, round(took, 2))
        integrity = integrity_check(server.db)
        if integrity != "ok":
            self.fail(number, {"route": "database", "method": "", "path": ""}, "integrity",
                      integrity)
        return self.summary(prober, number, integrity)

    def blame(self, workdir, last=4):
        """The numbers of the last requests that kill a fresh server when sent alone."""
        culprits = []
        for i, req in enumerate(self.history[-last:]):
            fresh = Path(workdir) / ("blame%d" % i)
            fresh.mkdir(exist_ok=True)
            server = Server(self.args.server, fresh, self.token)
            try:
                server.start()
            except RuntimeError:
                continue
            data = re.sub(rb"Host: 127\.0\.0\.1:\d+", b"Host: 127.0.0.1:%d" % server.port,
                          req["bytes"])
            exchange(server.port, data, 30.0)
            if not server.alive(1.5):
                culprits.append(req.get("number"))
            server.stop(10.0)
        return culprits

    def slow_healthz(self, prober):
        """A failure for each slow probe, blamed on the request that was in flight."""
        while prober.slow:
            ms, at = prober.slow.pop(0)
            blamed = next((r for r in self.history if r.get("number") == at),
                          {"route": "/healthz", "method": "GET", "path": "/healthz"})
            self.fail(at, blamed, "healthz", "GET /healthz took %.1f ms while this request "
                      "was in flight" % ms)

    def _clean(self, req):
        """Whether the body is the JSON of req["json"] (no byte-level damage)."""
        try:
            return json.loads(req["body"]) == req["json"]
        except (KeyError, ValueError, UnicodeDecodeError):
            return False

    def count(self, req, status):
        self.counts["requests"] += 1
        key = "%dxx" % (status // 100) if status else "no_status"
        self.counts[key] = self.counts.get(key, 0) + 1
        route = self.by_route.setdefault("%s %s" % (req["method"][:8], req["route"][:40]), {})
        route[str(status)] = route.get(str(status), 0) + 1

    def summary(self, prober, number, integrity):
        slowest = max(prober.slowest, self.slowest_sync)
        out = dict(self.counts)
        out.update(seed=self.args.seed, seeds={"hlo": self.seed_counts[0],
                                               "ascgraph": self.seed_counts[1]},
                   healthz_probes=prober.samples + number // 10,
                   slowest_healthz_ms=round(slowest, 1), wall_s=round(self.elapsed, 1),
                   integrity=integrity, sigterm_exit=self.sigterm[0],
                   sigterm_s=self.sigterm[1], stopped=self.stop_reason,
                   failures=len(self.failures),
                   failure_kinds=sorted({f["failure"] for f in self.failures}),
                   by_route=self.by_route)
        distinct = {}
        for f in self.failures:
            detail = re.sub(r"\d+", "N", f["detail"].split("\n")[0])[:110]
            key = "%s %s %s: %s" % (f["failure"], f["method"], re.sub(
                r"/[0-9a-f]{6,}.*", "/…", f["route"] or ""), detail)
            first = distinct.setdefault(key, [0, f["request"], f.get("reproducer")])
            first[0] += 1
        for key, (count, first, repro) in sorted(distinct.items(), key=lambda kv: kv[1][1]):
            print("api_fuzz: %5d x %s (first: request %d, %s)" % (count, key, first, repro))
        out["distinct_failures"] = [{"signature": k, "count": c, "first_request": n,
                                     "reproducer": r} for k, (c, n, r) in distinct.items()]
        print("api_fuzz: seed %d: %d requests in %.1f s (2xx %d, 4xx %d, 5xx %d, no status %d); "
              "crashes %d; slowest /healthz %.1f ms of %d probes (limit %.0f); integrity %s; "
              "SIGTERM exit %s in %.1f s; failures %d%s" % (
                  self.args.seed, out["requests"], out["wall_s"], out["2xx"], out["4xx"],
                  out["5xx"], out["no_status"], out["crashes"], slowest, out["healthz_probes"],
                  HEALTHZ_LIMIT_MS, integrity, self.sigterm[0], self.sigterm[1],
                  len(self.failures), " (stopped: %s)" % self.stop_reason
                  if self.stop_reason else ""), flush=True)
        return out


def bad_flags(query):
    predict = query.get("predict", False)
    tune = query.get("tune_if_missing", False)
    return not isinstance(predict, bool) or not isinstance(tune, (bool, dict))


def integrity_check(db):
    try:
        with sqlite3.connect(str(db)) as conn:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
        return "ok" if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:5])
    except sqlite3.Error as error:
        return "cannot check: %s" % error


def replay(args):
    """Sends the bytes of a reproducer to a fresh server and says what happened."""
    data = Path(args.replay).read_bytes()
    with tempfile.TemporaryDirectory(prefix="api_fuzz_replay.") as workdir:
        token = re.search(rb"(?i)bearer\s+(fuzz-[0-9a-f]{16})", data)
        server = Server(args.server, workdir, token.group(1).decode() if token else "fuzz-token")
        server.start()
        port_fixed = re.sub(rb"Host: 127\.0\.0\.1:\d+", b"Host: 127.0.0.1:%d" % server.port, data)
        answer, error = exchange(server.port, port_fixed)
        status, _, body = parse_response(answer)
        alive = server.alive(0.5)
        print("replay: status %s%s; %s" % (status, ", " + error if error else "",
                                           "server alive" if alive else "SERVER DIED (%s)"
                                           % server.proc.returncode))
        print(body[:600].decode("utf-8", "replace"))
        if not alive:
            print(server.stderr_tail())
        code, _ = server.stop()
        return 0 if alive and (status or 0) < 500 else 1


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True, help="the tilesmith binary")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=240.0,
                        help="stop sending after this many seconds (not a failure)")
    parser.add_argument("--json", help="write the counts here")
    parser.add_argument("--repro-dir", default="api_fuzz_repro",
                        help="where failing requests are written (default ./api_fuzz_repro)")
    parser.add_argument("--corpus", default=os.environ.get(
        "TILESMITH_CORPUS_DIR", str(api_fuzz_gen.ROOT.parent / "shared" / "corpus")))
    parser.add_argument("--keep-going", action="store_true",
                        help="restart the server after a crash and go on")
    parser.add_argument("--no-zero-dims", action="store_true",
                        help="never make a dimension 0 (to see past a known crash)")
    parser.add_argument("--replay", help="send this reproducer (.http) to a fresh server")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 30000))  # deeply nested bodies
    if args.replay:
        return replay(args)
    fuzzer = Fuzzer(args)
    with tempfile.TemporaryDirectory(prefix="api_fuzz.") as workdir:
        summary = fuzzer.run(workdir)
    summary["failure_list"] = [{k: v for k, v in f.items() if k != "previous"}
                               for f in fuzzer.failures]
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))
    return 1 if fuzzer.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
