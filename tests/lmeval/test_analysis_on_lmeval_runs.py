"""End-to-end: the analysis commands read an lm-eval output folder and give the numbers they give for an lmms-eval run
of the same replies.

Both harnesses run the same tasks (an MCQ group, a permutation group and Agent-X with its judged metrics) against
one loopback model and judge (`conftest._run`, with `--log_samples`); then `report`, `report A B` (multi-model),
`compare`, `reproduce --from`, `errors --dry-run` and `rescore` run on each folder, and their outputs must agree
line for line, apart from the lines that name the harness, the model backend and the files.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from . import loopback
from .conftest import HarnessRun, _env, _run, lmeval_tasks_dir

pytestmark = pytest.mark.e2e
pytest.importorskip("lm_eval", reason="pip install -e '.[lmeval]'")
TASKS = ["robovista", "agentvqa_perm5", "agentx"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, book: loopback.ReplyBook, judge: Any) -> dict[str, HarnessRun]:
    root = tmp_path_factory.mktemp("analysis")
    env = _env(judge.base_url, LMMS_AGENTIC_DATA="mini")
    done = {"lmms-eval": _run("lmms-eval", book, root / "lmms-eval", env, TASKS, None, isolated=False),
            "lm-eval": _run("lm-eval", book, root / "lm-eval", env, TASKS, lmeval_tasks_dir(), isolated=False)}
    for run in done.values():
        run.assert_ok(TASKS)
    return done


@pytest.fixture(scope="module")
def env(judge: Any) -> dict[str, str]:
    return _env(judge.base_url, LMMS_AGENTIC_DATA="mini")


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", *args], env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _tables(text: str) -> list[str]:
    """The table rows of a command's output (every line that starts with `|`)."""
    return [line for line in text.splitlines() if line.startswith("|")]


def test_report_gives_the_same_tables(runs: dict[str, HarnessRun], env: dict[str, str]) -> None:
    lmms, lm = (_cli(env, "report", str(runs[h].output)) for h in ("lmms-eval", "lm-eval"))
    assert "harness: lm-eval 0.4" in lm and "harness: lmms-eval" in lmms
    assert _tables(lmms) == _tables(lm) and len(_tables(lm)) > 10
    assert "| agentx | unit |" in lm and "judged, 100%" in lm
    for text in (lmms, lm):  # lm-eval's results carry the data record too, so its mini run is bannered alike
        assert "SMOKE DATA — mini split of agentx (10 of 828 rows): not a result" in text


def test_multi_model_report_gives_the_same_scores(runs: dict[str, HarnessRun], env: dict[str, str],
                                                  tmp_path: Path) -> None:
    _cli(env, "report", str(runs["lmms-eval"].output), str(runs["lm-eval"].output), "--output", str(tmp_path))
    rows = list(csv.DictReader((tmp_path / "scores.csv").open(encoding="utf-8")))
    by_run: dict[str, dict[tuple[str, str], dict[str, str]]] = {}
    for row in rows:
        by_run.setdefault(row["run"], {})[(row["task"], row["key"])] = {
            k: v for k, v in row.items() if k not in ("model", "run")}
    lmms, lm = (by_run[str(runs[h].output)] for h in ("lmms-eval", "lm-eval"))
    assert lmms == lm and ("agentx", "metric:ground_s") in lm and len(lm) > 20
    assert lm[("agentx", "metric:ground_s")]["judged"] == lm[("agentx", "metric:ground_s")]["eligible"] == "10"


def test_compare_finds_no_difference(runs: dict[str, HarnessRun], env: dict[str, str]) -> None:
    text = _cli(env, "compare", str(runs["lmms-eval"].output), str(runs["lm-eval"].output))
    rows = [row for row in _tables(text) if not row.startswith(("| variant", "| task", "|---"))]
    assert len(rows) > 10 and {"| robovista |", "| agentvqa_perm5 |", "| agentx |"} <= {
        "| " + row.split("|")[1].strip() + " |" for row in rows}
    for row in rows:
        assert "+0.0" in row or "no per-item values" in row, row


def test_reproduce_from_gives_the_same_comparison(runs: dict[str, HarnessRun], env: dict[str, str]) -> None:
    lmms, lm = (_cli(env, "reproduce", "--from", str(runs[h].output), "--preset", "gpt_4o")
                for h in ("lmms-eval", "lm-eval"))
    assert _tables(lmms) == _tables(lm) and len(_tables(lm)) > 10


def test_errors_dry_run_builds_the_same_judge_requests(runs: dict[str, HarnessRun], env: dict[str, str],
                                                       tmp_path: Path) -> None:
    found = {}
    for harness in ("lmms-eval", "lm-eval"):
        _cli(env, "errors", str(runs[harness].output), "--dry-run", "--quiet", "--output", str(tmp_path / harness))
        found[harness] = (tmp_path / harness / "requests.jsonl").read_text(encoding="utf-8")
    assert found["lmms-eval"] == found["lm-eval"] and found["lm-eval"].count("\n") > 10


def _metrics(results_file: Path) -> dict[tuple[str, str], Any]:
    results = json.loads(results_file.read_text(encoding="utf-8"))["results"]
    return {(task, key): value for task, row in results.items() for key, value in row.items()
            if key.endswith(",none") and "_stderr" not in key}


def test_rescore_gives_the_same_results(runs: dict[str, HarnessRun], env: dict[str, str], tmp_path: Path) -> None:
    rescored = {}
    for harness in ("lmms-eval", "lm-eval"):
        out = tmp_path / harness
        _cli(env, "rescore", str(runs[harness].output), "--output", str(out))
        rescored[harness] = _metrics(sorted(out.rglob("*_results.json"))[-1])
    lmms, lm = rescored["lmms-eval"], rescored["lm-eval"]
    assert set(lmms) == set(lm) and len(lm) > 50
    for key, value in lmms.items():
        assert value == lm[key] or (math.isnan(value) and math.isnan(lm[key])), key
    original = _metrics(runs["lm-eval"].results_file)
    assert all(lm[key] == value for key, value in original.items() if key in lm), "rescoring reproduces the run"
