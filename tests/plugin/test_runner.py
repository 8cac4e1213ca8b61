"""`python -m lmms_agentic run`: a failed evaluation fails, with one line; a data error is raised once, not retried."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.harness import runner


def _results(folder: Path, tasks: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "20260101_000000_results.json").write_text(json.dumps({"results": {t: {} for t in tasks}}))


@pytest.mark.parametrize(("returncode", "log", "written", "tasks", "problem"), [
    (0, "ok", ["robovista"], ["robovista"], None),
    (2, "ok", ["robovista"], ["robovista"], "exited with status 2"),
    (0, "x | Error during evaluation: Could not load robovista: gone.", [], ["robovista"],
     "Error during evaluation: Could not load robovista: gone."),
    (0, "ok", [], ["robovista"], "wrote no *_results.json"),
    (0, "ok", ["robovista"], ["robovista", "agentvqa"], "has no results for agentvqa"),
    (0, "ok", ["robovista_cot"], ["robovista*"], None),
], ids=["ok", "exit-code", "error-line", "no-results", "missing-task", "wildcard"])
def test_check_names_the_first_problem(tmp_path: Path, returncode: int, log: str, written: list[str],
                                       tasks: list[str], problem: str | None) -> None:
    started = time.time() - 1
    if written:
        _results(tmp_path, written)
    if problem is None:
        assert runner.check(tmp_path, log, returncode, tasks, started).name.endswith("_results.json")
    else:
        with pytest.raises(runner.RunFailed, match=problem.replace("*", r"\*")):
            runner.check(tmp_path, log, returncode, tasks, started)


def test_an_old_results_file_does_not_count(tmp_path: Path) -> None:
    _results(tmp_path, ["robovista"])
    with pytest.raises(runner.RunFailed, match="wrote no"):
        runner.check(tmp_path, "ok", 0, ["robovista"], time.time() + 60)


@pytest.mark.e2e
def test_a_data_error_ends_the_run_once_with_the_fix(tmp_path: Path) -> None:
    """An unknown label in a local copy: lmms-eval does not retry our deterministic error (its loader retries five
    times, 2 s apart, otherwise), the run exits 1 through the wrapper, and the last line names the benchmark, the
    label and the fix."""
    mini = benchmarks.get("robovista").folder / "data" / "mini"
    raw = datasets.load_dataset("parquet", data_files=str(next(mini.rglob("*.parquet"))), split="train")
    copy = tmp_path / "data" / "robovista" / "data"
    copy.mkdir(parents=True)
    raw.map(lambda row: {"domain": "Field robotics" if row["domain"] == "agriculture" else row["domain"]}) \
        .to_parquet(str(copy / "train-00000-of-00001.parquet"))
    env = {**os.environ, "LMMS_AGENTIC_DATA": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "run", "--", "--model", "dummy", "--tasks",
                           "robovista_cot", "--output_path", str(tmp_path / "out")], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("lmms-agentic run: FAILED: Error during evaluation: robovista: unknown domain")
    assert "'Field robotics' (3 rows)" in last
    log = (tmp_path / "out" / "lmms_eval.log").read_text()
    assert log.count("Traceback (most recent call last)") == 1 and "RetryError" not in log  # raised once: no retry
