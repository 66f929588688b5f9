#!/usr/bin/env python3
"""The Python client (clients/python) against a real `tilesmith serve` on loopback.

    tests/python/client_test.py --tilesmith build/bin/tilesmith [--source REPO]

Makes a virtual environment in a temporary folder, installs the package into it with pip
(offline when the environment has setuptools, as Python 3.11's does), and runs the cases
below with that environment's Python against a server on a free port and a fresh SQLite file:
query, query_batch, tune (waiting, with progress), jobs, kernels, errors as exceptions with
the status and message, and the `tilesmith-client` console command. Exits 77 (ctest's skip)
with the reason when no virtual environment or pip can be had; 0 when every case passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import List, Optional

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# A second fusion, tiny, for tune_if_missing.
ADD_HLO = """HloModule add_small

add {
  a = f32[32,64] parameter(0)
  b = f32[32,64] parameter(1)
  ROOT sum = f32[32,64] add(a, b)
}

ENTRY main {
  a = f32[32,64] parameter(0)
  b = f32[32,64] parameter(1)
  ROOT f = f32[32,64] fusion(a, b), kind=kLoop, calls=add
}
"""

BAD_HLO = ("HloModule bad\n\nENTRY main {\n  p = f32[4] parameter(0)\n"
           "  ROOT t = f32[4] tanhh(p)\n}\n")


def run(command: List[str], **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          **kwargs)  # type: ignore[call-overload]


def install(work: str, source: str) -> str:
    """A virtual environment with the client installed; returns its Python. Exits 77 when
    neither a virtual environment nor pip is available."""
    venv = os.path.join(work, "venv")
    made = run([sys.executable, "-m", "venv", venv])
    python = os.path.join(venv, "bin", "python")
    if made.returncode != 0 or not os.path.exists(python):
        print(f"SKIP: python3 -m venv failed (is python3-venv installed?):\n{made.stdout}")
        sys.exit(SKIP)
    if run([python, "-m", "pip", "--version"]).returncode != 0:
        print("SKIP: the virtual environment has no pip")
        sys.exit(SKIP)
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    package = os.path.join(source, "clients", "python")
    # Copied, so that the build's egg-info and build/ folders never land in the checkout.
    copy = os.path.join(work, "client-src")
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                 "__pycache__"))
    attempts = []
    if run([python, "-c", "import setuptools"]).returncode == 0:
        attempts.append([python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                         copy])
    attempts.append([python, "-m", "pip", "install", copy])  # fetches setuptools
    last = ""
    for attempt in attempts:
        result = run(attempt, env=env, cwd=work)
        if result.returncode == 0:
            return python
        last = result.stdout
    print(f"SKIP: pip could not install clients/python (offline, without setuptools?):\n{last}")
    sys.exit(SKIP)


class ServerCase(unittest.TestCase):
    """One server for every case: a fresh database, short measurements."""

    tilesmith = ""
    work = ""
    url = ""
    server: Optional[subprocess.Popen] = None

    @classmethod
    def setUpClass(cls) -> None:
        database = os.path.join(cls.work, "data", "t.db")
        cls.server = subprocess.Popen(
            [cls.tilesmith, "serve", "--port", "0", "--db", database, "--targets", "host",
             "--workers", "2", "--warmup-ms", "1", "--rep-ms", "5"],
            stdout=subprocess.PIPE, text=True)
        assert cls.server.stdout is not None
        line = cls.server.stdout.readline()
        if "http://" not in line:
            cls.server.kill()
            raise RuntimeError(f"tilesmith serve did not start: {line!r}")
        cls.url = line.split("serving on ", 1)[1].split()[0]

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.server is not None:
            cls.server.terminate()
            cls.server.wait(timeout=60)
            assert cls.server.stdout is not None
            cls.server.stdout.close()


class ClientTest(ServerCase):
    """The library, imported from the virtual environment's site-packages."""

    def setUp(self) -> None:
        import tilesmith_client

        self.assertIn(os.path.join("venv", "lib"), tilesmith_client.__file__,
                      "the client must come from the installed package")
        self.api = tilesmith_client
        self.client = tilesmith_client.Client(self.url, timeout_s=60)
        self.gelu = tilesmith_client.Fusion.from_file(
            os.path.join(ROOT, "tests", "data", "tuner", "gelu_f32.hlo"))

    def test_1_devices_and_health(self) -> None:
        self.assertTrue(self.client.healthy())
        devices = self.client.devices()
        self.assertEqual([d["target"] for d in devices], ["host"])

    def test_2_query_before_tuning_is_not_found(self) -> None:
        answer = self.client.query(self.gelu, target="host")
        self.assertFalse(answer.found)
        self.assertEqual(answer.status, 404)
        self.assertEqual(len(answer.fingerprint or ""), 64)
        self.assertIsNone(answer.config)

    def test_3_tune_waits_with_progress_then_query_answers(self) -> None:
        seen = []
        job = self.client.tune(self.gelu, target="host", budget=3, strategy="exhaustive",
                               timeout_s=300, progress=seen.append, poll_s=0.2)
        self.assertEqual(job.state, "done", job.body)
        self.assertTrue(job.finished)
        self.assertGreaterEqual(len(seen), 1)
        self.assertEqual(seen[-1].state, "done")
        self.assertEqual(job.progress["measured"], 3)
        self.assertIn("best", job.result or {})

        answer = self.client.query(self.gelu, target="host")
        self.assertTrue(answer.found, answer.body)
        self.assertEqual(answer.source, "measured")
        self.assertEqual(answer.emitter, "loop")
        self.assertIsInstance(answer.config, dict)
        self.assertGreater(answer.median_us or 0, 0)
        self.assertGreater(answer.default_median_us or 0, 0)

        [again] = self.client.jobs([job.id])
        self.assertEqual(again.id, job.id)
        self.assertEqual(again.state, "done")
        with self.assertRaises(self.api.TilesmithError) as caught:
            self.client.cancel(job.id)
        self.assertEqual(caught.exception.status, 409)

        kernels = self.client.kernels()
        names = {kernel.fingerprint: kernel for kernel in kernels}
        self.assertIn(answer.fingerprint, names)
        self.assertEqual(names[answer.fingerprint].ok, 3)
        self.assertGreater(names[answer.fingerprint].best_median_us or 0, 0)
        detail = self.client.kernel((answer.fingerprint or "")[:12])
        self.assertEqual(len(detail["measurements"]), 3)

    def test_4_batch_with_tune_if_missing(self) -> None:
        answers = self.client.query_batch([self.gelu, ADD_HLO, BAD_HLO], target="host",
                                          tune_if_missing={"budget": 2,
                                                           "strategy": "exhaustive"})
        self.assertEqual([a.status for a in answers], [200, 404, 400])
        self.assertEqual(answers[0].source, "measured")
        self.assertIn("tanhh", answers[2].error or "")
        job_id = answers[1].job_id
        self.assertTrue(job_id, answers[1].body)
        progress = []
        [job] = self.client.wait_all([job_id or ""], timeout_s=300, progress=progress.append,
                                     poll_s=0.2)
        self.assertEqual(job.state, "done", job.body)
        self.assertTrue(progress)
        self.assertTrue(self.client.query(ADD_HLO, target="host").found)

    def test_5_errors_are_exceptions_with_status_and_message(self) -> None:
        with self.assertRaises(self.api.TilesmithError) as caught:
            self.client.query(BAD_HLO, target="host")
        self.assertEqual(caught.exception.status, 400)
        self.assertIn("unknown opcode 'tanhh'", caught.exception.message)
        self.assertIn(":5:", caught.exception.message)  # the line of the bad op

        with self.assertRaises(self.api.TilesmithError) as caught:
            self.client.query(self.gelu, target="cuda:sm_00")
        self.assertEqual(caught.exception.status, 400)

        with self.assertRaises(self.api.TilesmithError) as caught:
            self.client.job("0123456789abcdef0123456789abcdef")
        self.assertEqual(caught.exception.status, 404)

        with self.assertRaises(self.api.TilesmithError) as caught:
            self.client.tune(self.gelu, target="host", strategy="no-such-strategy")
        self.assertEqual(caught.exception.status, 400)
        self.assertTrue(caught.exception.message)

        unreachable = self.api.Client("http://127.0.0.1:9", timeout_s=5)
        with self.assertRaises(self.api.TilesmithError) as caught:
            unreachable.devices()
        self.assertEqual(caught.exception.status, 0)
        self.assertFalse(unreachable.healthy())


class CommandTest(ServerCase):
    """The `tilesmith-client` console command the package installs."""

    def command(self, *args: str) -> subprocess.CompletedProcess:
        binary = os.path.join(os.path.dirname(sys.executable), "tilesmith-client")
        self.assertTrue(os.path.exists(binary), "pip installed no tilesmith-client")
        return subprocess.run([binary, "--url", self.url, *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=300)

    def test_commands(self) -> None:
        gelu = os.path.join(ROOT, "tests", "data", "tuner", "gelu_f32.hlo")
        missing = self.command("query", gelu, "--target", "host")
        self.assertEqual(missing.returncode, 1, missing.stderr)
        self.assertEqual(len(json.loads(missing.stdout)["fingerprint"]), 64)

        tuned = self.command("tune", gelu, "--budget", "2", "--strategy", "exhaustive",
                             "--wait", "300")
        self.assertEqual(tuned.returncode, 0, tuned.stderr)
        self.assertEqual(json.loads(tuned.stdout)["state"], "done")
        self.assertIn("done: measured 2/2", tuned.stderr)  # the progress lines
        job_id = json.loads(tuned.stdout)["id"]

        found = self.command("query", gelu)
        self.assertEqual(found.returncode, 0, found.stderr)
        self.assertEqual(json.loads(found.stdout)["source"], "measured")

        batch = self.command("batch", gelu, gelu)
        self.assertEqual(batch.returncode, 0, batch.stderr)
        self.assertEqual(json.loads(batch.stdout)["found"], 2)

        jobs = self.command("jobs", job_id)
        self.assertEqual(jobs.returncode, 0, jobs.stderr)
        self.assertEqual(json.loads(jobs.stdout)[0]["state"], "done")

        kernels = self.command("kernels", "--target", "host")
        self.assertEqual(kernels.returncode, 0, kernels.stderr)
        self.assertEqual(len(json.loads(kernels.stdout)), 1)

        bad = os.path.join(self.work, "bad.hlo")
        with open(bad, "w", encoding="utf-8") as file:
            file.write(BAD_HLO)
        error = self.command("query", bad)
        self.assertEqual(error.returncode, 1)
        self.assertIn("HTTP 400", error.stderr)
        self.assertIn("tanhh", error.stderr)
        self.assertEqual(self.command("no-such-command").returncode, 2)


def inner(tilesmith: str, work: str) -> int:
    """Runs the cases in this (the virtual environment's) interpreter."""
    ServerCase.tilesmith = tilesmith
    ServerCase.work = work
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for case in (ClientTest, CommandTest):
        case_work = os.path.join(work, case.__name__)
        os.makedirs(case_work, exist_ok=True)
        case.work = case_work
        suite.addTests(loader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    return 0 if result.wasSuccessful() else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilesmith", required=True, help="the tilesmith binary")
    parser.add_argument("--source", default=ROOT, help="the repository (for clients/python)")
    parser.add_argument("--inner", metavar="WORK", help=argparse.SUPPRESS)
    args = parser.parse_args()
    tilesmith = os.path.abspath(args.tilesmith)
    if args.inner:
        return inner(tilesmith, args.inner)
    with tempfile.TemporaryDirectory(prefix="tilesmith-client-test-") as work:
        python = install(work, os.path.abspath(args.source))
        print(f"installed clients/python into {os.path.dirname(os.path.dirname(python))}",
              flush=True)
        # -I: the cases import the installed package, never this checkout's sources.
        return subprocess.call([python, "-I", os.path.abspath(__file__), "--tilesmith",
                                tilesmith, "--inner", work], cwd=work)


if __name__ == "__main__":
    sys.exit(main())
