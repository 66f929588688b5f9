#!/usr/bin/env python3
"""`model_bench --generated` end to end, small: three generated fusions of one seed judged,
three of another trained on, every model scored beside the run-to-run agreement and the
trees fitted within each fusion, and a training seed equal to the judged one refused. The
two runs saved with --save-timings replay (--timings) to the same scores without timing, and
--dump-rows writes the rows the models saw; a seed the file lacks is timed and added (its
models trained on two replayed seeds), a replay under another --max-bytes is refused, and a
file it cannot write ends the run with the reason."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def check_rows(path, saved, scores):
    """--dump-rows: the judged configs with the saved runs' times, and the training rows."""
    with open(path) as f:
        rows = json.load(f)
    width = len(rows["feature_names"])
    assert width > 50, rows["feature_names"]
    judged = rows["judged"]
    assert sorted({r["fusion"] for r in judged}) == ["gen_5_0", "gen_5_1", "gen_5_2"], judged
    assert len(judged) == sum(f["configs"] for f in scores["fusions"]), len(judged)
    saved_runs = {(name, c["a"], c["b"]) for name, fusion in saved["generated"]["fusions"].items()
                  for c in fusion["configs"]}
    for row in judged:
        assert (row["fusion"], row["run_a_us"], row["run_b_us"]) in saved_runs, row
        assert row["analytic_us"] > 0 and len(row["features"]) == width, row
    train = rows["train"]
    # The corpus fusion and the three of the training seed, every config of each.
    assert len({r["fusion"] for r in train}) == 4, {r["fusion"] for r in train}
    for row in train:
        assert row["measured_us"] > 0 and row["analytic_us"] > 0 and row["compiled"], row
        assert len(row["features"]) == width, row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-bench", required=True)
    args = parser.parse_args()
    small = ["--generated", "3", "--seed", "5", "--train-count", "3", "--configs", "16",
             "--rounds", "2", "--repetitions", "1", "--seeds", "1", "--only", "tuner/gelu_f32",
             "--max-bytes", "64K"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "generated.json")
        timings = os.path.join(tmp, "timings.json")
        run = subprocess.run([args.model_bench, *small, "--json", out, "--save-timings", timings],
                             capture_output=True, text=True, timeout=280)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "[eval 3/3] gen_5_2" in run.stderr, run.stderr
        assert "[train 3/3] gen_6_2" in run.stderr, run.stderr
        assert "(replayed)" not in run.stderr, run.stderr
        assert "timings written to " + timings in run.stderr, run.stderr
        with open(out) as f:
            result = json.load(f)
        with open(timings) as f:
            saved = json.load(f)
        assert sorted(saved["generated"]["fusions"]) == [
            "gen_5_0", "gen_5_1", "gen_5_2", "gen_6_0", "gen_6_1", "gen_6_2"], saved["generated"]
        assert list(saved["fusions"]) == ["tuner/gelu_f32.hlo"], list(saved["fusions"])
        entry = saved["generated"]["fusions"]["gen_5_0"]["configs"][0]
        assert entry["a"] > 0 and entry["b"] > 0, entry

        replay_out = os.path.join(tmp, "replayed.json")
        rows_out = os.path.join(tmp, "rows.json")
        replay = subprocess.run([args.model_bench, *small, "--json", replay_out, "--timings",
                                 timings, "--dump-rows", rows_out], capture_output=True,
                                text=True, timeout=280)
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert replay.stderr.count("(replayed)") == 6, replay.stderr
        with open(replay_out) as f:
            replayed = json.load(f)
        assert replayed["models"] == result["models"], (replayed["models"], result["models"])
        assert replayed["fusions"] == result["fusions"]
        check_rows(rows_out, saved, replayed)

        grown = os.path.join(tmp, "grown.json")
        grown_out = os.path.join(tmp, "grown_scores.json")
        more = subprocess.run([args.model_bench, *small, "--seed", "7", "--train-seed", "5,6",
                               "--timings", timings, "--save-timings", grown, "--json",
                               grown_out], capture_output=True, text=True, timeout=280)
        assert more.returncode == 0, more.stdout + more.stderr
        assert more.stderr.count("(replayed)") == 6, more.stderr
        with open(grown) as f:
            assert len(json.load(f)["generated"]["fusions"]) == 9
        with open(grown_out) as f:
            two_seeds = json.load(f)
        assert two_seeds["train_seeds"] == [5, 6], two_seeds["train_seeds"]
        assert two_seeds["train"]["generated_fusions"] == 6, two_seeds["train"]

        other_cap = subprocess.run([args.model_bench, *small[:-1], "128K", "--timings", timings],
                                   capture_output=True, text=True, timeout=280)
        assert other_cap.returncode != 0 and "--max-bytes" in other_cap.stderr, other_cap.stderr

        # A file it cannot write ends the run with the reason, not "written to".
        unwritable = os.path.join(tmp, "no such folder", "timings.json")
        lost = subprocess.run([args.model_bench, *small, "--timings", timings, "--save-timings",
                               unwritable], capture_output=True, text=True, timeout=280)
        assert lost.returncode != 0 and "cannot write the timings" in lost.stderr, lost.stderr
        assert "written to " + unwritable not in lost.stderr, lost.stderr
    assert result["seed"] == 5 and result["train_seeds"] == [6], result
    assert result["skipped"] == [] and result["train_skipped"] == [], result
    assert [f["fusion"] for f in result["fusions"]] == ["gen_5_0", "gen_5_1", "gen_5_2"]
    assert result["train"]["corpus_fusions"] == 1, result["train"]
    assert result["train"]["generated_fusions"] == 3, result["train"]
    for fusion in result["fusions"]:
        assert fusion["bytes"] <= 64 << 10 and fusion["configs"] >= 2, fusion
        assert -1 <= fusion["agreement_spearman"] <= 1, fusion
    models = {m["model"]: m for m in result["models"]}
    assert list(models) == ["run-to-run agreement", "analytic-host", "learned log-time",
                            "learned log-time (selected)", "learned pairwise",
                            "learned pairwise (selected)",
                            "fitted within each fusion"], list(models)
    # Four training fusions cannot fill five folds of a selection: it says so, and the
    # selected rows rank as the learned model does everywhere.
    assert len(result["selections"]) == 2, result["selections"]
    for fusion in result["fusions"]:
        assert set(fusion["spearman"]) == set(models), fusion
        assert fusion["emitter"], fusion
    for name, model in models.items():
        scores = model["all"]
        assert scores["fusions"] == 3, (name, scores)
        assert -1 <= scores["spearman"] <= 1, (name, scores)
        assert 0 < scores["top5_score"] <= 1, (name, scores)
        assert scores["top1_regret"] >= scores["top5_regret"] >= 0, (name, scores)
        assert 0 < scores["median_model_strategy_share"] <= 1, (name, scores)
    # The ceiling: trees fitted to each fusion's own other configs, scored like a model.
    assert "fitted within each fusion" in run.stdout and " within" in run.stdout, run.stdout
    # The agreement ranks run A by run B: a config's two times are never both missing.
    assert models["run-to-run agreement"]["all"]["spearman"] > 0, models

    same = subprocess.run([args.model_bench, *small, "--train-seed", "5"], capture_output=True,
                          text=True, timeout=280)
    assert same.returncode != 0 and "must differ" in same.stderr, same.stderr
    among = subprocess.run([args.model_bench, *small, "--train-seed", "6,5"],
                           capture_output=True, text=True, timeout=280)
    assert among.returncode != 0 and "must differ" in among.stderr, among.stderr
    missing = subprocess.run([args.model_bench, "--generated", "3"], capture_output=True,
                             text=True, timeout=60)
    assert missing.returncode != 0 and "needs --seed" in missing.stderr, missing.stderr
    print("model_bench --generated: ok")


if __name__ == "__main__":
    sys.exit(main())
