"""End-to-end: the real `lmms-eval` CLI on the RoboVista mini split (dummy model and tiny Qwen2.5-VL).

lmms-eval exits 0 even when an evaluation fails, so every run is checked through its results JSON,
its sample files and its log (see CliRun.assert_ok).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets
import pytest

import lmms_agentic
from lmms_agentic.report import write_report

from ..conftest import CliRun, run_lmms_eval

pytestmark = pytest.mark.e2e

MINI_PARQUET = next((Path(lmms_agentic.tasks_dir()) / "robovista" / "data" / "mini").rglob("*.parquet"))
ALL_VARIANTS = "robovista,robovista_cot,robovista_confidence,robovista_icl,robovista_icl_reasoning"
MINI = {"LMMS_AGENTIC_DATA": "mini"}


def _gold_a_share() -> float:
    answers = datasets.load_dataset("parquet", data_files=str(MINI_PARQUET), split="train")["correct_answer"]
    return 100.0 * answers.count("A") / len(answers)


@pytest.fixture(scope="module")
def dummy_run(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """Every RoboVista variant with `dummy`, no --include_path: the entry point must find the tasks."""
    run = run_lmms_eval(["--model", "dummy", "--tasks", ALL_VARIANTS], tmp_path_factory.mktemp("dummy"), env=MINI)
    run.assert_ok()
    return run


def test_dummy_accuracy_equals_the_share_of_gold_a(dummy_run: CliRun) -> None:
    results: dict[str, Any] = dummy_run.results["results"]
    share = _gold_a_share()
    assert 0 < share < 100
    for name in ("robovista", "robovista_cot", "robovista_confidence", "robovista_icl", "robovista_icl_reasoning"):
        assert results[name]["parity_acc,none"] == pytest.approx(share, abs=1e-9), name
        assert results[name]["strict_acc,none"] == pytest.approx(share, abs=1e-9), name
        assert results[name]["no_answer_rate,none"] == 0.0


def test_group_counts_every_row_including_unlabeled(dummy_run: CliRun) -> None:
    subtasks = dummy_run.results["group_subtasks"]["robovista"]
    assert "robovista_unlabeled" in subtasks and len(subtasks) == 7
    assert sum(len(dummy_run.samples(task)) for task in subtasks) == 21
    assert len(dummy_run.samples("robovista_cot")) == 21


def test_samples_log_prompts_and_payloads(dummy_run: CliRun) -> None:
    (record,) = [s for s in dummy_run.samples("robovista_icl_seed0") if s["parity_acc"]["id"] == "q_mini_01"]
    payload = record["parity_acc"]
    assert payload["icl_example_id"] == "q_mini_00" and payload["pred_parity"] == "A"
    assert payload["rule_parity"] == "c_bare" and (payload["pred"], payload["rule"]) == ("A", "bare_label")
    assert "=== EXAMPLE ===" in record["input"]
    assert dummy_run.results["versions"]["robovista_cot"] == 2.0


def test_report_writes_markdown_and_a_chart_per_benchmark(dummy_run: CliRun) -> None:
    path, text = write_report(dummy_run.output)
    assert path.exists() and "| robovista | 21 | 33.3 | 33.3 [" in text and "A 100%" in text
    assert list(path.parent.glob("*_robovista_domains.png"))


def test_eval_subcommand_with_limit(tmp_path: Path) -> None:
    run = run_lmms_eval(["--model", "dummy", "--tasks", "robovista", "--limit", "5"], tmp_path, env=MINI,
                        subcommand=["eval"])
    run.assert_ok()
    for task in run.results["group_subtasks"]["robovista"]:
        assert 1 <= len(run.samples(task)) <= 5


def test_include_path_works_with_the_hook_disabled(tmp_path: Path) -> None:
    run = run_lmms_eval(["--model", "dummy", "--tasks", "robovista_cot", "--limit", "2",
                         "--include_path", lmms_agentic.tasks_dir()],
                        tmp_path, env={**MINI, "LMMS_AGENTIC_AUTO_REGISTER": "0"})
    run.assert_ok()
    assert len(run.samples("robovista_cot")) == 2


def test_unreachable_hub_stops_with_a_clear_error(tmp_path: Path) -> None:
    env = {key: "" for key in ("LMMS_AGENTIC_DATA", "LMMS_AGENTIC_DATA_ROBOVISTA")}
    run = run_lmms_eval(["--model", "dummy", "--tasks", "robovista_cot", "--limit", "2"], tmp_path, env=env)
    assert run.results_file is None, "must not score anything without data"
    assert "Could not load robovista" in run.log and "hub data at sy-xie/robovista" in run.log
    assert "LMMS_AGENTIC_DATA=mini" in run.log


def test_tiny_vlm_runs_through_the_qwen2_5_vl_chat_backend(tmp_path: Path) -> None:
    from lmms_agentic.devtools.tiny_vlm import build_tiny_qwen2_5_vl, model_args

    checkpoint = build_tiny_qwen2_5_vl(tmp_path / "tiny")
    run = run_lmms_eval(["--model", "qwen2_5_vl", "--model_args", model_args(checkpoint),
                         "--tasks", "robovista,robovista_icl_seed0", "--limit", "3",
                         "--gen_kwargs", "max_new_tokens=6", "--batch_size", "1"], tmp_path / "out", env=MINI)
    run.assert_ok()
    samples = run.samples("robovista_icl_seed0")
    assert len(samples) == 3
    for sample in samples:
        assert sample["token_counts"][0]["output_tokens"] == 6, "the model generated the requested tokens"
        payload = sample["parity_acc"]
        # random text: either no answer (with a reason) or a letter from the rule that fired
        assert (payload["pred"] is None) == (payload["no_answer_reason"] is not None)
        assert payload["pred"] is None or payload["rule"] != "none"
    results = run.results["results"]
    assert 0.0 <= results["robovista"]["parity_acc,none"] <= 100.0
    assert "qwen2_5_vl" in run.results["config"]["model"]
