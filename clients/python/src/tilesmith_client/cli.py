"""`tilesmith-client`: the client's calls from a shell or a build script.

    tilesmith-client [--url URL] [--token-file F] query FILE [--target T] [--tune-if-missing]
                                                    [--predict]
    tilesmith-client [--url URL] batch FILE... [--target T] [--tune-if-missing] [--predict]
    tilesmith-client [--url URL] tune FILE [--target T] [--budget N] [--strategy S] [--seed N]
                                      [--free-layouts p0,out0] [--wait S]
    tilesmith-client [--url URL] jobs ID... [--wait S] [--cancel]
    tilesmith-client [--url URL] kernels [--target T]
    tilesmith-client [--url URL] devices

FILE is HLO text, or an AscGraph request (*.ascgraph.txt / *.ascgraph.json; --sizes s0=4,s1=8).
Answers go to stdout as JSON, progress and errors to stderr. Exit status: 0 success (a query
found a config, a tune ended `done`), 1 an HTTP error, nothing found or a job that did not
finish well, 2 a bad command line. The URL defaults to $TILESMITH_URL, else
http://127.0.0.1:8470.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .client import DEFAULT_URL, Client, Fusion, Job, TilesmithError


def _sizes(text: Optional[str]) -> Optional[Mapping[str, int]]:
    if not text:
        return None
    pairs = (item.split("=", 1) for item in text.split(","))
    return {name.strip(): int(value) for name, value in pairs}


def _print(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2)
    print()


def _report(job: Job) -> None:
    progress = job.progress
    best = progress.get("best_median_us")
    line = (f"job {job.id[:12]} {job.state}: measured {progress.get('measured', 0)}"
            f"/{progress.get('total') or '?'}, failed {progress.get('failed', 0)}")
    if best is not None:
        line += f", best {float(best):.3f} us"
    print(line, file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tilesmith-client",
                                     description="A client for `tilesmith serve`.")
    parser.add_argument("--url", default=os.environ.get("TILESMITH_URL", DEFAULT_URL))
    parser.add_argument("--token-file", help="a file holding the server's bearer token")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="seconds to wait for one HTTP answer (default 60)")
    commands = parser.add_subparsers(dest="command", required=True)

    query = commands.add_parser("query", help="the best known config of one fusion")
    batch = commands.add_parser("batch", help="the best known configs of many fusions")
    query.add_argument("file")
    batch.add_argument("files", nargs="+")
    for command in (query, batch):
        command.add_argument("--target")
        command.add_argument("--sizes", help="AscGraph size bindings: s0=4,s1=8")
        command.add_argument("--tune-if-missing", "--tune", action="store_true",
                             help="queue a tune for a fusion nothing is stored for")
        command.add_argument("--predict", action="store_true",
                             help="answer from the cost model when nothing is measured")

    tune = commands.add_parser("tune", help="tune one fusion, waiting with progress")
    tune.add_argument("file")
    tune.add_argument("--target")
    tune.add_argument("--sizes")
    tune.add_argument("--budget", type=int, default=0, help="configs to measure; 0: all")
    tune.add_argument("--strategy", default="model")
    tune.add_argument("--seed", type=int, default=0)
    tune.add_argument("--free-layouts", default="", metavar="p0,out0")
    tune.add_argument("--wait", type=float, default=600.0, metavar="S",
                      help="wait up to S seconds for the job (default 600; 0: do not wait)")

    jobs = commands.add_parser("jobs", aliases=["job"], help="show, wait for or cancel jobs")
    jobs.add_argument("ids", nargs="+", metavar="ID")
    jobs.add_argument("--wait", type=float, default=0.0, metavar="S",
                      help="wait up to S seconds for every job to end")
    jobs.add_argument("--cancel", action="store_true")

    kernels = commands.add_parser("kernels", help="the kernels in the results database")
    kernels.add_argument("--target")
    commands.add_parser("devices", help="the targets the server serves")
    return parser


def _run(args: argparse.Namespace, client: Client) -> int:
    if args.command == "query":
        answer = client.query(Fusion.from_file(args.file, _sizes(args.sizes)), args.target,
                              args.tune_if_missing, args.predict)
        _print(answer.body)
        return 0 if answer.found else 1
    if args.command == "batch":
        answers = client.query_batch([Fusion.from_file(f, _sizes(args.sizes)) for f in args.files],
                                     args.target, args.tune_if_missing, args.predict)
        found = sum(answer.found for answer in answers)
        _print({"count": len(answers), "found": found,
                "results": [dict(answer.body, status=answer.status) for answer in answers]})
        return 0 if found == len(answers) else 1
    if args.command == "tune":
        layouts = [name for name in args.free_layouts.split(",") if name]
        job = client.tune(Fusion.from_file(args.file, _sizes(args.sizes)), args.target,
                          args.budget, args.strategy, args.seed, layouts,
                          wait=args.wait > 0, timeout_s=args.wait, progress=_report)
        _print(job.body)
        return 0 if job.state == "done" or (args.wait <= 0 and not job.finished) else 1
    if args.command in ("jobs", "job"):
        if args.cancel:
            found: List[Job] = [client.cancel(job_id) for job_id in args.ids]
        elif args.wait > 0:
            found = client.wait_all(args.ids, args.wait, progress=_report)
        else:
            found = client.jobs(args.ids)
        _print([job.body for job in found])
        return 0
    if args.command == "kernels":
        listed: List[Dict[str, Any]] = [vars(kernel) for kernel in client.kernels(args.target)]
        _print(listed)
        return 0
    _print(client.devices())
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The console entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    token = None
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as file:
            token = file.read().strip()
    client = Client(args.url, token, timeout_s=args.timeout)
    try:
        return _run(args, client)
    except TilesmithError as error:
        print(f"tilesmith-client: {error}", file=sys.stderr)
        return 1
    except TimeoutError as error:
        print(f"tilesmith-client: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"tilesmith-client: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
