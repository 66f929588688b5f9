#!/usr/bin/env python3
"""A small client for `tilesmith serve`, standard library only (docs/api.md).

    examples/client.py [--url URL] [--token-file F] query FILE [--target T] [--tune]
    examples/client.py [--url URL] tune FILE [--target T] [--budget N] [--strategy S] [--wait S]
    examples/client.py [--url URL] batch FILE... [--target T]
    examples/client.py [--url URL] job ID [--cancel]
    examples/client.py [--url URL] kernels [--target T]
    examples/client.py [--url URL] devices

FILE is HLO text, or an AscGraph request (*.ascgraph.txt / *.ascgraph.json; --sizes s0=4,s1=8).
Prints the server's JSON answer; exits 0 on 2xx, 1 on an HTTP error, 2 on a bad command line.
"""
import argparse
import json
import sys
import urllib.error
import urllib.request


class Client:
    """One tilesmith server. Every method returns (status, parsed JSON body)."""

    def __init__(self, url="http://127.0.0.1:8470", token=None, timeout=630):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            text = error.read()
            try:
                return error.code, json.loads(text)
            except ValueError:
                return error.code, {"error": text.decode(errors="replace")}

    def query(self, fusion, target="host", tune_if_missing=False):
        return self.request("POST", "/v1/query",
                            dict(fusion, target=target, tune_if_missing=tune_if_missing))

    def query_batch(self, fusions, target="host"):
        return self.request("POST", "/v1/query:batch", {"target": target, "queries": fusions})

    def tune(self, fusion, target="host", budget=0, strategy="model", wait_s=None,
             free_layouts=()):
        body = dict(fusion, target=target, budget=budget, strategy=strategy,
                    free_layouts=list(free_layouts))
        if wait_s:
            body.update(wait=True, timeout_s=wait_s)
        return self.request("POST", "/v1/tune", body)

    def job(self, job_id):
        return self.request("GET", "/v1/jobs/" + job_id)

    def cancel(self, job_id):
        return self.request("DELETE", "/v1/jobs/" + job_id)

    def kernels(self, target=None):
        return self.request("GET", "/v1/kernels" + (f"?target={target}" if target else ""))

    def kernel(self, fingerprint):
        return self.request("GET", "/v1/kernels/" + fingerprint)

    def devices(self):
        return self.request("GET", "/v1/devices")


def fusion_from_file(path, sizes=None):
    """The request fields for a fusion file: {"fusion": text} or {"ascgraph": …, "sizes": …}."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    if not (path.endswith(".ascgraph.txt") or path.endswith(".ascgraph.json")):
        return {"fusion": text}
    fields = {"ascgraph": json.loads(text) if path.endswith(".json") else text}
    if sizes:
        fields["sizes"] = {k: int(v) for k, v in (item.split("=") for item in sizes.split(","))}
    return fields


def main(argv):
    parser = argparse.ArgumentParser(description="tilesmith service client")
    parser.add_argument("--url", default="http://127.0.0.1:8470")
    parser.add_argument("--token-file")
    commands = parser.add_subparsers(dest="command", required=True)
    query = commands.add_parser("query")
    query.add_argument("file")
    query.add_argument("--target", default="host")
    query.add_argument("--sizes")
    query.add_argument("--tune", action="store_true", help="queue a tune when missing")
    tune = commands.add_parser("tune")
    tune.add_argument("file")
    tune.add_argument("--target", default="host")
    tune.add_argument("--sizes")
    tune.add_argument("--budget", type=int, default=0)
    tune.add_argument("--strategy", default="model")
    tune.add_argument("--wait", type=float, default=0, metavar="S")
    batch = commands.add_parser("batch")
    batch.add_argument("files", nargs="+")
    batch.add_argument("--target", default="host")
    job = commands.add_parser("job")
    job.add_argument("id")
    job.add_argument("--cancel", action="store_true")
    kernels = commands.add_parser("kernels")
    kernels.add_argument("--target")
    commands.add_parser("devices")
    args = parser.parse_args(argv)

    token = None
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as file:
            token = file.read().strip()
    client = Client(args.url, token)
    if args.command == "query":
        status, body = client.query(fusion_from_file(args.file, args.sizes), args.target,
                                    args.tune)
    elif args.command == "tune":
        status, body = client.tune(fusion_from_file(args.file, args.sizes), args.target,
                                   args.budget, args.strategy, args.wait or None)
    elif args.command == "batch":
        status, body = client.query_batch([fusion_from_file(f) for f in args.files], args.target)
    elif args.command == "job":
        status, body = client.cancel(args.id) if args.cancel else client.job(args.id)
    elif args.command == "kernels":
        status, body = client.kernels(args.target)
    else:
        status, body = client.devices()
    json.dump(body, sys.stdout, indent=2)
    print()
    return 0 if 200 <= status < 300 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
