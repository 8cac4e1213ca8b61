"""End-to-end: permutation variants through the real CLI, and identical metrics with 1 and 2 processes."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import CliRun, run_lmms_eval

pytestmark = pytest.mark.e2e
TASKS = "robovista_circular,agentvqa_perm5"
ENV = {"LMMS_AGENTIC_DATA": "mini"}


def _metrics(run: CliRun) -> dict[str, Any]:
    results = run.results["results"]
    return {task: {k: v for k, v in row.items() if "," in k} for task, row in results.items()}


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    run = run_lmms_eval(["--model", "dummy", "--tasks", TASKS], tmp_path_factory.mktemp("p1"), env=ENV)
    run.assert_ok()
    return run


def test_dummy_has_zero_circular_accuracy_and_a_flagged_letter_a(one_process: CliRun) -> None:
    results = one_process.results["results"]
    for group in ("robovista_circular", "agentvqa_perm5"):
        assert results[group]["circular_acc,none"] == 0.0
        assert results[group]["consistency,none"] == 0.0
    for name in ("robovista_open_datasets_circular", "agentvqa_web_agents_perm5"):
        row = results[name]
        excess = {k: v for k, v in row.items() if k.startswith("excess_") and "stderr" not in k}
        assert max(excess, key=lambda k: excess[k]) == "excess_A,none" and row["excess_A,none"] > 0
        assert row["letter_bias_p,none"] < 0.05


def test_always_a_scores_the_mean_of_one_over_the_option_count_at_task_and_group_level(one_process: CliRun) -> None:
    """RoboVista mixes 5-option questions with one whose option slot is empty (4 shown): each question weighs the
    same, so "always A" under `circular` scores exactly mean(1 / shown options), per task and for the group; the
    group's other question-level metrics are the exact pooled values too."""
    import json

    from lmms_agentic.tasks.robovista import hooks

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        docs = hooks.all_docs()
    shown = {row["id"]: sum(bool(o) for o in row["options"]) for row in docs.select_columns(["id", "options"])}
    domain = dict(zip(docs["id"], docs["domain"], strict=True))
    assert len(set(shown.values())) > 1, "the mini split must mix option counts"
    results = one_process.results["results"]
    expected = 100 * sum(1 / n for n in shown.values()) / len(shown)
    assert results["robovista_circular"]["perm_mean_acc,none"] == pytest.approx(expected, abs=1e-9)
    for task in one_process.results["group_subtasks"]["robovista_circular"]:
        ids = [i for i in shown if f"robovista_{domain[i]}_circular" == task
               or (domain[i] == "unknown" and task == "robovista_unlabeled_circular")]
        assert results[task]["perm_mean_acc,none"] == pytest.approx(100 * sum(1 / shown[i] for i in ids) / len(ids))
    pooled = one_process.records("robovista_agriculture_circular")  # a subtask's records carry every field
    assert all("group_id" in r for r in pooled)
    gold_a = [r for t in one_process.results["group_subtasks"]["robovista_circular"] for r in one_process.records(t)
              if r["perm_index"] == 0]
    assert results["robovista_circular"]["orig_acc,none"] == pytest.approx(
        100 * sum(r["answer"] == "A" for r in gold_a) / len(gold_a), abs=1e-9)
    assert json.dumps(results["robovista_circular"])  # plain numbers


@pytest.fixture(scope="module")
def scripted_one_process(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    run = run_lmms_eval(["--model", "agentic_scripted", "--tasks", TASKS], tmp_path_factory.mktemp("s1"), env=ENV)
    run.assert_ok()
    return run


def test_two_processes_give_identical_metrics(scripted_one_process: CliRun, tmp_path: Path) -> None:
    """Rows of one question land on different ranks; every metric is computed after gathering.

    `agentic_scripted` shards like a GPU backend (lmms-eval's `dummy` does not: each process would evaluate
    everything) and answers from a hash of the prompt, so the metrics are not trivially constant.
    """
    command = [str(Path(sys.executable).parent / "torchrun"), "--nproc_per_node", "2", "-m", "lmms_eval",
               "--model", "agentic_scripted", "--tasks", TASKS, "--output_path", str(tmp_path), "--log_samples"]
    env = {**os.environ, **ENV, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, check=False)
    two = CliRun(done.returncode, done.stdout + done.stderr, tmp_path)
    two.assert_ok()
    assert "agentic_scripted rank 1/2: answered" in two.log, "the second process must have answered requests"
    a, b = _metrics(scripted_one_process), _metrics(two)
    assert a.keys() == b.keys() and a["robovista_circular"]["flip_rate,none"] > 0
    for task in a:
        for key, value in a[task].items():
            other = b[task][key]
            nan = isinstance(value, float) and math.isnan(value)
            assert (nan and math.isnan(other)) if nan else value == other, f"{task} {key}: {value} vs {other}"
    for task in ("agentvqa_web_agents_perm5", "robovista_cot_circular"):
        if list(tmp_path.rglob(f"*_samples_{task}.jsonl")):
            ids = [r["id"] for r in two.records(task)]
            assert ids == [r["id"] for r in scripted_one_process.records(task)]
