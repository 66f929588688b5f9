"""The tilesmith HTTP API (docs/api.md) as Python calls, standard library only.

A build system asks `Client.query` or `Client.query_batch` for the best known config of its
fusions, queues tuning with `tune_if_missing` or `Client.tune`, and follows jobs with
`Client.job`, `Client.jobs` and `Client.wait`. Every HTTP error is a `TilesmithError` that
carries the status and the server's message; a query for a fusion nothing is stored for is
not an error but an `Answer` whose `found` is false.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import (Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

JSONObject = Dict[str, Any]

DEFAULT_URL = "http://127.0.0.1:8470"
"""Where `tilesmith serve` listens on its defaults."""

FINISHED_STATES = ("done", "failed", "cancelled")
"""Job states that do not change any more."""


class TilesmithError(Exception):
    """An answer other than 2xx, or no answer at all (status 0: the server was unreachable)."""

    def __init__(self, status: int, message: str, body: Optional[JSONObject] = None) -> None:
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status: int = status
        self.message: str = message
        self.body: JSONObject = body if body is not None else {}


@dataclass(frozen=True)
class Fusion:
    """One fusion in a request: HLO text, or an AscGraph (text or JSON) with size bindings."""

    hlo: Optional[str] = None
    ascgraph: Union[str, JSONObject, None] = None
    sizes: Optional[Mapping[str, int]] = None

    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"],
                  sizes: Optional[Mapping[str, int]] = None) -> "Fusion":
        """HLO text, or an AscGraph when the name ends in .ascgraph.txt or .ascgraph.json."""
        name = os.fspath(path)
        with open(name, encoding="utf-8") as file:
            text = file.read()
        if name.endswith(".ascgraph.json"):
            return Fusion(ascgraph=json.loads(text), sizes=sizes)
        if name.endswith(".ascgraph.txt"):
            return Fusion(ascgraph=text, sizes=sizes)
        return Fusion(hlo=text)

    def fields(self) -> JSONObject:
        """The request fields that name this fusion (`fusion`, or `ascgraph` and `sizes`)."""
        if (self.hlo is None) == (self.ascgraph is None):
            raise ValueError("a Fusion holds exactly one of hlo and ascgraph")
        if self.hlo is not None:
            return {"fusion": self.hlo}
        fields: JSONObject = {"ascgraph": self.ascgraph}
        if self.sizes:
            fields["sizes"] = dict(self.sizes)
        return fields


FusionLike = Union[Fusion, str]
"""A `Fusion`, or HLO text."""


def _fields(fusion: FusionLike) -> JSONObject:
    return (Fusion(hlo=fusion) if isinstance(fusion, str) else fusion).fields()


@dataclass(frozen=True)
class Answer:
    """The answer to one query: status 200 (a stored or predicted config) or 404 (nothing)."""

    status: int
    body: JSONObject

    @property
    def found(self) -> bool:
        return self.status == 200

    @property
    def source(self) -> Optional[str]:
        """`measured`, `nearest-device` or `predicted`; None when nothing was found."""
        return self.body.get("source")

    @property
    def fingerprint(self) -> Optional[str]:
        return self.body.get("fingerprint")

    @property
    def name(self) -> Optional[str]:
        return self.body.get("name")

    @property
    def emitter(self) -> Optional[str]:
        return self.body.get("emitter")

    @property
    def config(self) -> Optional[JSONObject]:
        return self.body.get("config")

    @property
    def median_us(self) -> Optional[float]:
        """The measured median, or the predicted time of a prediction."""
        value = self.body.get("median_us", self.body.get("predicted_us"))
        return None if value is None else float(value)

    @property
    def default_median_us(self) -> Optional[float]:
        value = self.body.get("default_median_us")
        return None if value is None else float(value)

    @property
    def job_id(self) -> Optional[str]:
        """The tuning job a `tune_if_missing` query queued or joined."""
        job = self.body.get("job")
        return job.get("id") if isinstance(job, dict) else None

    @property
    def error(self) -> Optional[str]:
        return self.body.get("error")


@dataclass(frozen=True)
class Job:
    """A tuning job as `GET /v1/jobs/{id}` shows it."""

    body: JSONObject

    @property
    def id(self) -> str:
        return str(self.body["id"])

    @property
    def state(self) -> str:
        """`queued`, `running`, `done`, `failed` or `cancelled`."""
        return str(self.body["state"])

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    @property
    def progress(self) -> JSONObject:
        """`compiled`, `measured`, `failed`, `total`, `best_median_us`, `best_config`."""
        return dict(self.body.get("progress") or {})

    @property
    def result(self) -> Optional[JSONObject]:
        """The tune's result once the job is done (`best`, `default`, `speedup`, …)."""
        return self.body.get("result")

    @property
    def error(self) -> Optional[str]:
        return self.body.get("error")


@dataclass(frozen=True)
class Kernel:
    """One kernel of the results database as `GET /v1/kernels` lists it."""

    fingerprint: str
    name: str
    source_format: str
    measurements: int
    ok: int
    failed: int
    best_median_us: Optional[float]
    best: Optional[JSONObject]

    @staticmethod
    def from_json(item: JSONObject) -> "Kernel":
        best_us = item.get("best_median_us")
        return Kernel(fingerprint=str(item["fingerprint"]), name=str(item.get("name", "")),
                      source_format=str(item.get("source_format", "")),
                      measurements=int(item.get("measurements", 0)), ok=int(item.get("ok", 0)),
                      failed=int(item.get("failed", 0)),
                      best_median_us=None if best_us is None else float(best_us),
                      best=item.get("best"))


ProgressCallback = Callable[[Job], None]
"""Called with the job each time its state or progress changes while waiting."""


class Client:
    """One tilesmith server. Methods raise `TilesmithError` on any answer other than 2xx."""

    def __init__(self, url: str = DEFAULT_URL, token: Optional[str] = None,
                 timeout_s: float = 60.0) -> None:
        self.url: str = url.rstrip("/")
        self.token: Optional[str] = token
        self.timeout_s: float = timeout_s

    def request(self, method: str, path: str, body: Optional[JSONObject] = None,
                allow: Sequence[int] = ()) -> Tuple[int, Any]:
        """Sends one request; returns (status, parsed body) for 2xx and the `allow`ed codes."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            text = error.read()
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = {"error": text.decode(errors="replace")}
            if not isinstance(parsed, dict):
                parsed = {"error": str(parsed)}
            if error.code in allow:
                return error.code, parsed
            raise TilesmithError(error.code, str(parsed.get("error", error.reason)),
                                 parsed) from None
        except urllib.error.URLError as error:
            raise TilesmithError(0, f"{self.url}: {error.reason}") from None
        except (TimeoutError, ConnectionError) as error:
            raise TilesmithError(0, f"{self.url}: {error}") from None

    def healthy(self) -> bool:
        """Whether `GET /healthz` answers 200."""
        try:
            return self.request("GET", "/healthz")[0] == 200
        except TilesmithError:
            return False

    def devices(self) -> List[JSONObject]:
        """The targets the server serves, each with its device key and whether it can tune."""
        return list(self.request("GET", "/v1/devices")[1].get("devices", []))

    def query(self, fusion: FusionLike, target: Optional[str] = None,
              tune_if_missing: Union[bool, Mapping[str, Any]] = False,
              predict: bool = False) -> Answer:
        """The best config known for a fusion; never waits for tuning. A 404 (nothing stored)
        is an `Answer` whose `found` is false and whose `job_id` names any queued tune."""
        body = _fields(fusion)
        body.update(_options(target, tune_if_missing, predict))
        status, answer = self.request("POST", "/v1/query", body, allow=(404,))
        if status == 404 and "fingerprint" not in answer:
            raise TilesmithError(status, str(answer.get("error", "not found")), answer)
        return Answer(status, answer)

    def query_batch(self, fusions: Iterable[FusionLike], target: Optional[str] = None,
                    tune_if_missing: Union[bool, Mapping[str, Any]] = False,
                    predict: bool = False) -> List[Answer]:
        """One `Answer` per fusion, in order (up to 10,000). A fusion that does not parse gets
        an `Answer` with status 400 and the parser's message in `error`."""
        body: JSONObject = {"queries": [_fields(fusion) for fusion in fusions]}
        body.update(_options(target, tune_if_missing, predict))
        results = self.request("POST", "/v1/query:batch", body)[1].get("results", [])
        return [Answer(int(item.get("status", 200)), item) for item in results]

    def tune(self, fusion: FusionLike, target: Optional[str] = None, budget: int = 0,
             strategy: str = "model", seed: int = 0, free_layouts: Sequence[str] = (),
             wait: bool = True, timeout_s: float = 600.0,
             progress: Optional[ProgressCallback] = None, poll_s: float = 0.5) -> Job:
        """Queues a tuning job (or joins an identical one) and, with `wait`, polls it until it
        ends, calling `progress` on every change. Raises TimeoutError after `timeout_s`."""
        body = _fields(fusion)
        body.update(budget=budget, strategy=strategy, seed=seed,
                    free_layouts=list(free_layouts))
        if target:
            body["target"] = target
        job = Job(self.request("POST", "/v1/tune", body)[1]["job"])
        if not wait:
            return job
        if progress is not None:
            progress(job)
        return self.wait(job.id, timeout_s=timeout_s, progress=progress, poll_s=poll_s,
                         last=job)

    def job(self, job_id: str) -> Job:
        """`GET /v1/jobs/{id}`."""
        return Job(self.request("GET", "/v1/jobs/" + urllib.parse.quote(job_id, safe=""))[1])

    def jobs(self, job_ids: Iterable[str]) -> List[Job]:
        """Several jobs, in order."""
        return [self.job(job_id) for job_id in job_ids]

    def cancel(self, job_id: str) -> Job:
        """`DELETE /v1/jobs/{id}`: a queued job is cancelled at once, a running one within about
        a second. A job that already ended raises a 409 `TilesmithError`."""
        path = "/v1/jobs/" + urllib.parse.quote(job_id, safe="")
        return Job(self.request("DELETE", path)[1])

    def wait(self, job_id: str, timeout_s: float = 600.0,
             progress: Optional[ProgressCallback] = None, poll_s: float = 0.5,
             last: Optional[Job] = None) -> Job:
        """Polls a job until it is done, failed or cancelled; returns it."""
        deadline = time.monotonic() + timeout_s
        while True:
            job = self.job(job_id)
            if progress is not None and (last is None or _changed(last, job)):
                progress(job)
            last = job
            if job.finished:
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job.state} after {timeout_s:g} s")
            time.sleep(poll_s)

    def wait_all(self, job_ids: Iterable[str], timeout_s: float = 600.0,
                 progress: Optional[ProgressCallback] = None, poll_s: float = 0.5) -> List[Job]:
        """Waits for every job (one deadline for all), in order."""
        deadline = time.monotonic() + timeout_s
        return [self.wait(job_id, max(0.0, deadline - time.monotonic()), progress, poll_s)
                for job_id in job_ids]

    def kernels(self, target: Optional[str] = None) -> List[Kernel]:
        """Every kernel in the database; with a target, those measured on its device."""
        path = "/v1/kernels"
        if target:
            path += "?" + urllib.parse.urlencode({"target": target})
        return [Kernel.from_json(item) for item in self.request("GET", path)[1]["kernels"]]

    def kernel(self, fingerprint: str) -> JSONObject:
        """One kernel with every measurement (a unique prefix of 6+ hex digits will do)."""
        return dict(self.request("GET", "/v1/kernels/" + urllib.parse.quote(fingerprint))[1])


def _options(target: Optional[str], tune_if_missing: Union[bool, Mapping[str, Any]],
             predict: bool) -> JSONObject:
    options: JSONObject = {}
    if target:
        options["target"] = target
    if tune_if_missing:
        options["tune_if_missing"] = (dict(tune_if_missing)
                                      if isinstance(tune_if_missing, Mapping) else True)
    if predict:
        options["predict"] = True
    return options


def _changed(before: Job, after: Job) -> bool:
    return before.state != after.state or before.progress != after.progress
