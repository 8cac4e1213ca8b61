"""Determinism: the same configuration gives byte-identical metric values -- across repeated runs, and with 1 or 2
processes (whose gathered samples arrive in a different order: rank 0's documents, then rank 1's).

Fast tests feed every aggregation the same samples in the 1-process and the 2-process order and compare the values
bit for bit (``repr``); the slow ones (marker ``reliability_slow``) run the real CLI twice, and once with 2
processes (``torchrun``), and compare the results files."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters.core import scores
from lmms_agentic.judges import JudgeResult, coverage_summary, judged_mean
from lmms_agentic.tasks.agentx import aggregations as agentx_metrics

from ..conftest import CliRun, run_lmms_eval


def two_rank_order(items: Sequence[Any]) -> list[Any]:
    """How lmms-eval gathers samples from 2 processes: rank 0's documents (0, 2, 4, ...), then rank 1's."""
    return [*items[0::2], *items[1::2]]


def orders(items: Sequence[Any]) -> list[list[Any]]:
    shuffled = list(items)
    random.Random(7).shuffle(shuffled)
    return [list(items), two_rank_order(items), list(reversed(items)), shuffled]


def same_bits(function: Callable[[list[Any]], float], items: Sequence[Any]) -> None:
    values = [repr(function(order)) for order in orders(items)]
    assert len(set(values)) == 1, values


JUDGE_SCORES = [round(random.Random(i).choice([0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9, 1.0]), 1) for i in range(997)]


def test_judged_means_do_not_depend_on_sample_order() -> None:
    results = [JudgeResult(score=s, template_id="t", template_version="1") for s in JUDGE_SCORES]
    payloads = [r.as_dict() for r in results] + [{"unscored_reason": "judge_unavailable", "score": None}] * 3
    same_bits(lambda items: judged_mean("m", items), payloads)
    same_bits(lambda items: coverage_summary("m", items, warn=False)["m"], results)
    assert math.fsum(JUDGE_SCORES) / len(JUDGE_SCORES) == judged_mean("m", results)  # exactly rounded


def test_agentx_judged_aggregations_do_not_depend_on_sample_order() -> None:
    views = [{"score": s, "unscored_reason": None} for s in JUDGE_SCORES]
    for name in ("ground_s", "tool_p", "sem_acc", "goal_acc"):
        same_bits(getattr(agentx_metrics, name), views)


def test_agentx_deterministic_means_do_not_depend_on_sample_order() -> None:
    rng = random.Random(5)
    sizes = [(rng.randint(0, 4), rng.randint(1, 5), rng.randint(1, 5)) for _ in range(997)]  # (hits, pred, gold)
    f1 = [{"score": 2 * min(h, p, g) / (p + g)} for h, p, g in sizes]  # set F1 of tool names: 2/3, 4/7, ...
    same_bits(agentx_metrics.toolset_f1_prog, f1)


def test_mcq_accuracies_do_not_depend_on_sample_order() -> None:
    payloads = [{"score": float(i % 3 == 0)} for i in range(997)]
    same_bits(scores.mean_score, payloads)
    same_bits(lambda items: scores.accuracy(items, "score"), payloads)


def test_calibration_error_does_not_depend_on_sample_order() -> None:
    rng = random.Random(3)
    pairs = [(rng.choice([0.7, 0.8, 0.9, 0.95]), rng.random() < 0.6) for _ in range(474)]

    def ce(items: list[tuple[float, bool]]) -> float:
        return scores.calibration_error([c for c, _ in items], [k for _, k in items])

    same_bits(ce, pairs)


# ------------------------------------------------------------------ slow: the real CLI

TASKS = "robovista_confidence,agentvqa,agentx"


def _judge_reply(call: Any) -> Any:
    import hashlib

    from lmms_agentic.judges.testing import ScriptedReply

    digest = hashlib.sha256(call.prompt.encode()).digest()
    return ScriptedReply(f"{{'Score': {digest[0] % 11 / 10}}}")


def _results(run: CliRun) -> dict[str, Any]:
    results: dict[str, Any] = run.results["results"]
    return results


def _canonical(results: dict[str, Any]) -> str:
    return json.dumps(results, sort_keys=True, allow_nan=True)


def _env(server_url: str, cache: Path) -> dict[str, str]:
    return {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": server_url,
            "LMMS_AGENTIC_JUDGE_MODEL": "judge-det-2025-01-01", "LMMS_AGENTIC_JUDGE_CACHE": str(cache)}


@pytest.mark.reliability_slow
@pytest.mark.e2e
def test_repeated_runs_are_byte_identical(tmp_path: Path) -> None:
    """Two runs of one configuration (fresh judge caches: every judge answer is asked for again) write the same
    results, to the last bit, and the same per-sample metric values."""
    from lmms_agentic.judges.testing import ScriptedJudgeServer

    runs = []
    with ScriptedJudgeServer(_judge_reply) as server:
        for name in ("a", "b"):
            run = run_lmms_eval(["--model", "agentic_scripted", "--tasks", TASKS, "--seed", "0"], tmp_path / name,
                                env=_env(server.base_url, tmp_path / f"cache-{name}"))
            run.assert_ok()
            runs.append(run)
    a, b = (_results(r) for r in runs)
    assert _canonical(a) == _canonical(b)
    assert a["agentx"]["ground_s,none"] == a["agentx"]["ground_s,none"]  # scored (not NaN)
    for task in ("robovista_confidence", "agentvqa_games", "agentx_text_answer"):
        lines = [[json.dumps(_without_transport({k: v for k, v in s.items()
                                                 if k not in ("arguments", "resps", "filtered_resps")}),
                             sort_keys=True) for s in run.samples(task)] for run in runs]
        assert lines[0] == lines[1], task


TRANSPORT = ("attempts", "cached")
"""How a judge answer was obtained, not what it is: a retried request (a loaded machine) is attempt 2."""


def _without_transport(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_transport(v) for k, v in value.items() if k not in TRANSPORT}
    if isinstance(value, list):
        return [_without_transport(v) for v in value]
    return value


TEARDOWN_ABORT = "terminate called without an active exception"
"""What a rank prints when the C++ runtime aborts it (a native thread left running); not a result of this project."""


@pytest.mark.reliability_slow
@pytest.mark.e2e
def test_one_and_two_processes_give_identical_judged_and_calibration_metrics(tmp_path: Path) -> None:
    """Agent-X judged metrics and RoboVista calibration with 1 and 2 processes (`agentic_scripted` shards like a
    GPU backend; the loopback judge answers from a hash of the prompt)."""
    from lmms_agentic.judges.testing import ScriptedJudgeServer

    tasks = "robovista_confidence,agentx"
    with ScriptedJudgeServer(_judge_reply) as server:
        one = run_lmms_eval(["--model", "agentic_scripted", "--tasks", tasks], tmp_path / "one",
                            env=_env(server.base_url, tmp_path / "cache1"))
        one.assert_ok()
        command = [str(Path(sys.executable).parent / "torchrun"), "--nproc_per_node", "2", "-m", "lmms_eval",
                   "--model", "agentic_scripted", "--tasks", tasks, "--output_path", str(tmp_path / "two"),
                   "--log_samples"]
        env = {**os.environ, **_env(server.base_url, tmp_path / "cache2"), "HF_HUB_OFFLINE": "1",
               "HF_DATASETS_OFFLINE": "1"}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0 and TEARDOWN_ABORT in done.stderr:
            # a rank aborted in the C++ runtime (seen once on a loaded 2-core CI machine): run again, once
            print(f"2-process run aborted ({TEARDOWN_ABORT!r}); running it again once")
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, check=False)
    two = CliRun(done.returncode, done.stdout + done.stderr, tmp_path / "two")
    two.assert_ok()
    assert "agentic_scripted rank 1/2: answered" in two.log
    a, b = _results(one), _results(two)
    for task in a:
        metrics_a = {k: v for k, v in a[task].items() if "," in k and "stderr" not in k}
        metrics_b = {k: v for k, v in b[task].items() if "," in k and "stderr" not in k}
        assert json.dumps(metrics_a, sort_keys=True) == json.dumps(metrics_b, sort_keys=True), task
