#!/usr/bin/env python3
"""Fleet faults, run as a user would: `tilesmith sweep --distribute` and real `tilesmith
agent` processes on one machine.

- An agent killed with SIGKILL in the middle of a unit (SQLite shared by two agents): its
  lease expires, the other agent takes the unit over, and the database ends with every unit
  done, no measurement twice and none lost.
- Two `tilesmith tune`s of one fusion at once on one SQLite file: each config measured once.
- A sweep split into batches of configs (`--unit-configs`) run by two agents at once: every
  planned config measured once, by whichever agent took its batch, and each pair concluded
  (its winner confirmed) by one more unit once every batch was finished.
- PostgreSQL stopped for 10 s in the middle of a sweep and started again (a private server
  from scripts/private-postgres): the agents and the sweep wait it out and carry on, and
  nothing is lost or doubled. Skipped (exit 77) only where PostgreSQL is not installed.

  fleet_faults_test.py --tilesmith BIN --source REPO --corpus CORPUS [--only sqlite|postgres]
"""
import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

SKIPPED = 77


class Fleet:
    def __init__(self, args, work, db):
        self.args, self.work, self.db = args, work, db
        self.processes = {}

    def sweep_file(self, count, budget, strategy="best-first"):
        files = sorted(
            os.path.join(root, name)
            for root, _, names in os.walk(os.path.join(self.args.corpus, "xla", "loop"))
            for name in names if name.endswith(".hlo"))
        # Small fusions that run on any host: the corpus's huge broadcast is left out.
        files = [f for f in files if "block_dim_limit" not in f][:count]
        path = os.path.join(self.work, "sweep.json")
        with open(path, "w") as out:
            json.dump({"name": "faults", "targets": ["host"], "strategy": strategy,
                       "budget": budget, "warmup_ms": 1, "rep_ms": 3, "timeout_ms": 20000,
                       "fusions": files}, out)
        return path

    def start(self, name, *arguments):
        log = open(os.path.join(self.work, name + ".log"), "w")
        out = open(os.path.join(self.work, name + ".out"), "w")
        self.processes[name] = subprocess.Popen([self.args.tilesmith, *arguments], stdout=out,
                                                stderr=log, start_new_session=True)
        return self.processes[name]

    def agent(self, name, lease_s):
        return self.start(name, "agent", "--db", self.db, "--targets", "host", "--name", name,
                          "--lease-s", str(lease_s), "--poll-s", "0.1", "--workers", "1")

    def kill(self, name, sig=signal.SIGKILL):
        process = self.processes[name]
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        process.wait()

    def stop_all(self):
        for name in list(self.processes):
            self.kill(name, signal.SIGTERM if self.processes[name].poll() is None else 0)

    def log(self, name):
        with open(os.path.join(self.work, name + ".log")) as f:
            return f.read()

    def sweep_result(self, timeout_s):
        process = self.processes["sweep"]
        process.wait(timeout=timeout_s)
        with open(os.path.join(self.work, "sweep.out")) as f:
            return process.returncode, json.load(f)


def wait_until(condition, timeout_s, what):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


COUNTS = """SELECT
  (SELECT count(*) FROM work_units WHERE job_id = '{job}'),
  (SELECT count(*) FROM work_units WHERE job_id = '{job}' AND state = 'done'),
  (SELECT count(*) FROM measurements WHERE job_id = '{job}'),
  (SELECT count(*) FROM (SELECT DISTINCT fingerprint, config_hash, device_key
                           FROM measurements WHERE job_id = '{job}') AS d),
  (SELECT coalesce(sum(reclaims), 0) FROM work_units WHERE job_id = '{job}')"""


def check_counts(counts, units, what):
    total, done, measurements, distinct, reclaims = counts
    check(total == units, f"{what}: {total} units, expected {units}")
    check(done == units, f"{what}: {done} of {units} units done (lost units)")
    check(measurements > 0, f"{what}: nothing was measured")
    check(measurements == distinct,
          f"{what}: {measurements} measurements for {distinct} (fusion, config, device)")
    return reclaims


def killed_agent_on_sqlite(args):
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "fleet.db")
        fleet = Fleet(args, work, db)
        try:
            sweep = fleet.sweep_file(6, 3)
            fleet.start("sweep", "sweep", sweep, "--db", db, "--distribute", "--json")
            wait_until(lambda: os.path.exists(db), 20, "the sweep to create the database")
            fleet.agent("victim", 2)

            def held():
                try:
                    with sqlite3.connect(db, timeout=5) as conn:
                        row = conn.execute("SELECT id FROM work_units WHERE owner = 'victim' "
                                           "AND state = 'leased'").fetchone()
                        return row[0] if row else None
                except sqlite3.OperationalError:
                    return None

            unit = wait_until(held, 60, "the victim to claim a unit")
            time.sleep(0.3)
            fleet.kill("victim")
            fleet.agent("survivor", 2)
            status, table = fleet.sweep_result(180)
            check(status == 0, f"sweep exited {status}: {fleet.log('sweep')}")
            with sqlite3.connect(db) as conn:
                counts = conn.execute(COUNTS.format(job=table["job"])).fetchone()
                owner, attempt = conn.execute(
                    "SELECT owner, attempt FROM work_units WHERE id = ?", (unit,)).fetchone()
            reclaims = check_counts(counts, 6, "sqlite")
            check(reclaims >= 1, "the killed agent's lease was never taken over")
            check(owner == "survivor" and attempt >= 2,
                  f"unit {unit} ended with {owner}, attempt {attempt}")
            check("taken over" in fleet.log("survivor"), fleet.log("survivor"))
            # The same sweep again (another host would do the same) follows the same units.
            again = subprocess.run([args.tilesmith, "sweep", sweep, "--db", db, "--distribute",
                                    "--resume", "--json"], capture_output=True, text=True,
                                   timeout=60)
            check(again.returncode == 0, again.stderr)
            resumed = json.loads(again.stdout)
            check(resumed["job"] == table["job"], "a rerun made a new job")
            check("0 new, 6 already queued" in again.stderr, again.stderr)
            check(resumed["units"]["done"] == 6, resumed["units"])
        finally:
            fleet.stop_all()
    print("ok: a SIGKILLed agent's unit was taken over; nothing lost or doubled (SQLite)")


def split_sweep_on_sqlite(args):
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "split.db")
        fleet = Fleet(args, work, db)
        try:
            sweep = fleet.sweep_file(2, 10, strategy="exhaustive")
            fleet.start("sweep", "sweep", sweep, "--db", db, "--distribute", "--unit-configs",
                        "3", "--json")
            wait_until(lambda: os.path.exists(db), 20, "the sweep to create the database")
            fleet.agent("first", 20)
            fleet.agent("second", 20)
            status, table = fleet.sweep_result(240)
            check(status == 0, f"sweep exited {status}: {fleet.log('sweep')}")
            check("2 more conclude the split pairs" in fleet.log("sweep"), fleet.log("sweep"))
            with sqlite3.connect(db) as conn:
                counts = conn.execute(COUNTS.format(job=table["job"])).fetchone()
                owners = {row[0] for row in conn.execute(
                    "SELECT owner FROM work_units WHERE job_id = ? AND sequence >= 2",
                    (table["job"],))}
                per_fusion = conn.execute(
                    "SELECT count(*) FROM measurements WHERE job_id = ? GROUP BY fingerprint",
                    (table["job"],)).fetchall()
            # Per pair: 10 planned configs in batches of 3 (4 units), and one that concludes.
            check_counts(counts, 10, "split sweep")
            check(sorted(n for (n,) in per_fusion) == [10, 10],
                  f"measurements per fusion: {per_fusion} (expected every planned config once)")
            check(owners == {"first", "second"}, f"batches ran on {owners}, not on both agents")
            check([row["status"] for row in table["rows"]] == ["done", "done"], table["rows"])
            for row in table["rows"]:
                check(row.get("measured") == 10, f"a concluded pair reports {row}")
        finally:
            fleet.stop_all()
    print("ok: a sweep split into config batches ran on two agents; each config measured once")


def two_tunes_on_sqlite(args):
    """Two `tilesmith tune`s of one fusion on one database at once measure each config once:
    the second waits for the first and measures only what it did not commit."""
    fusion = os.path.join(args.corpus, "xla", "loop", "cosh_f64.hlo")
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "two.db")
        command = [args.tilesmith, "tune", fusion, "--target", "host", "--db", db, "--budget",
                   "5", "--confirm-top", "0", "--json"]
        tunes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        outputs = [tune.communicate(timeout=240) for tune in tunes]
        for tune, (out, err) in zip(tunes, outputs):
            check(tune.returncode == 0, f"tune exited {tune.returncode}: {err}")
        with sqlite3.connect(db) as conn:
            rows, configs = conn.execute(
                "SELECT count(*), count(DISTINCT config_hash) FROM measurements").fetchone()
        check(rows == configs == 5, f"{rows} measurements of {configs} configs (expected 5 of 5)")
        new = sorted(json.loads(out)["measured_now"] for out, _ in outputs)
        check(new == [0, 5], f"measured by each tune: {new}")
        check(any("waiting for it" in err for _, err in outputs), "no tune said it waited")
    print("ok: two tunes of one fusion on one SQLite file measured each config once")


def restart_on_postgres(args):
    script = os.path.join(args.source, "scripts", "private-postgres")
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o755)
        state = os.path.join(work, "pg")
        started = subprocess.run([script, "start", state], capture_output=True, text=True)
        url_file = os.path.join(state, "url")
        if started.returncode != 0 or not os.path.exists(url_file):
            print("skipped: no PostgreSQL here:", started.stderr.strip())
            return SKIPPED
        url = open(url_file).read().strip()

        def psql(sql, check=True):
            return subprocess.run(["psql", url, "-X", "-A", "-t", "-q", "-F", "|", "-c", sql],
                                  capture_output=True, text=True, check=check).stdout.strip()

        fleet = Fleet(args, work, url)
        try:
            sweep = fleet.sweep_file(8, 3)
            fleet.start("sweep", "sweep", sweep, "--db", url, "--distribute", "--json")
            for name in ("agent-a", "agent-b"):
                fleet.agent(name, 30)
            # Until the sweep has made the tables, psql fails and prints nothing.
            wait_until(lambda: int(psql("SELECT count(*) FROM work_units WHERE state = 'done'",
                                        check=False) or 0) >= 1, 90, "a first unit to be done")
            subprocess.run([script, "pause", state, "10"], check=True, capture_output=True)
            status, table = fleet.sweep_result(240)
            check(status == 0, f"sweep exited {status}: {fleet.log('sweep')}")
            counts = [int(v) for v in psql(COUNTS.format(job=table["job"])).split("|")]
            check_counts(counts, 8, "postgres")
            for name in ("agent-a", "agent-b"):
                check(fleet.processes[name].poll() is None,
                      f"{name} did not survive the restart: {fleet.log(name)}")
            waited = "waiting for the database" in fleet.log("sweep") or any(
                "unreachable" in fleet.log(name) for name in ("agent-a", "agent-b"))
            check(waited, "nobody noticed the database was down")
        finally:
            fleet.stop_all()
            subprocess.run([script, "stop", state], capture_output=True)
    print("ok: PostgreSQL stopped for 10 s; the agents and the sweep carried on; "
          "nothing lost or doubled")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilesmith", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    args = parser.parse_args()
    status = 0
    if args.only in (None, "sqlite"):
        killed_agent_on_sqlite(args)
        split_sweep_on_sqlite(args)
        two_tunes_on_sqlite(args)
    if args.only in (None, "postgres"):
        status = restart_on_postgres(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
