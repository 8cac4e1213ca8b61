"""Multi-model report: per-domain tables with intervals and paper numbers, ranking, rank correlations with
bootstrap intervals, CSV and PNG files; inputs that are not lmms-eval outputs are named in one clear error."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic.report import ReportInputError, write_multi_report
from lmms_agentic.report.ranking import correlate, ranks
from tests.reproduce.conftest import write_run

MODELS = {  # preset weights -> share of items answered right (same order on both benchmarks)
    "Qwen/Qwen2.5-VL-7B-Instruct": 0.75,
    "Qwen/Qwen3-VL-8B-Instruct": 0.5,
    "Qwen/Qwen2.5-VL-3B-Instruct": 0.25,
}


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    folders = []
    for k, (weights, share) in enumerate(MODELS.items()):
        folder = tmp_path / f"run{k}"
        write_run(folder, lambda b, d, i, s=share: (i % 4) < round(4 * s), model_args=f"model={weights}", items=8)
        folders.append(folder)
    return folders


def test_report_files_tables_and_correlations(runs: list[Path], tmp_path: Path) -> None:
    path, text = write_multi_report(runs, tmp_path / "out", n_boot=200)
    assert path == tmp_path / "out" / "report.md" and path.read_text() == text
    for name in ("scores.csv", "correlations.csv", "robovista_domains.png", "agentvqa_domains.png"):
        assert (tmp_path / "out" / name).stat().st_size > 100, name
    # per-domain table: value, Wilson interval, n and the paper's Table I number for that model
    assert "| qwen2_5_vl_7b | 75.0 [" in text and "(paper 43.7)" in text and "n=24" in text
    assert "| qwen2_5_vl_7b | 75.0 (1) | 75.0 (1) | 1.00 |" in text  # ranking: agentvqa, robovista, mean rank
    assert "| qwen2_5_vl_3b | 25.0 (3) | 25.0 (3) | 3.00 |" in text
    assert "| agentvqa | robovista | 3 | 1.00 [1.00, 1.00] | 1.00 [1.00, 1.00] |" in text  # same ranking everywhere
    rows = list(csv.DictReader((tmp_path / "out" / "scores.csv").open()))
    domestic = next(r for r in rows if r["model"] == "qwen2_5_vl_3b" and r["key"] == "domain:domestic")
    assert float(domestic["value"]) == 25.0 and domestic["paper"] == "43.4" and int(domestic["n"]) == 8
    assert float(domestic["ci_low"]) < 25.0 < float(domestic["ci_high"])
    correlations = list(csv.DictReader((tmp_path / "out" / "correlations.csv").open()))
    assert {r["kind"] for r in correlations} == {"benchmarks", "domains"}
    assert "No run evaluated a permutation variant" in text


def test_rank_correlation_and_its_interval() -> None:
    scores = {f"i{k}": {"a": 100.0 * (k % 4 < 3), "b": 100.0 * (k % 4 < 2), "c": 100.0 * (k % 4 < 1)}
              for k in range(40)}
    reversed_ = {f"j{k}": {"a": 100.0 * (k % 4 < 1), "b": 100.0 * (k % 4 < 2), "c": 100.0 * (k % 4 < 3)}
                 for k in range(40)}
    (same,) = correlate({"x": scores, "y": scores}, n_boot=100)
    assert same.spearman == 1.0 and same.kendall == pytest.approx(1.0)
    (opposite,) = correlate({"x": scores, "y": reversed_}, n_boot=100)
    assert opposite.spearman == -1.0 and opposite.spearman_ci[1] <= 0
    (two,) = correlate({"x": {"i": {"a": 1.0, "b": 0.0}}, "y": {"i": {"a": 1.0, "b": 0.0}}})
    assert math.isnan(two.spearman)  # two models: no rank correlation
    assert ranks({"a": 50.0, "b": 70.0, "c": 50.0, "d": math.nan}) == {"a": 2.5, "b": 1.0, "c": 2.5}


def test_inputs_that_are_not_lmms_eval_outputs(tmp_path: Path, runs: list[Path]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ReportInputError, match=f"{empty}: not an lmms-eval or lm-eval output"):
        write_multi_report([runs[0], empty], tmp_path / "out")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x_results.json").write_text("{not json}")
    with pytest.raises(ReportInputError, match=f"{bad / 'x_results.json'}: not a valid results file, JSON error at "
                       "line 1 column 2; rerun"):
        write_multi_report([bad], tmp_path / "out")
    (bad / "x_results.json").write_text(json.dumps({"something": 1}))
    with pytest.raises(ReportInputError, match="no 'results' table"):
        write_multi_report([bad], tmp_path / "out")
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "report", str(runs[0]), str(empty)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"lmms-agentic report: error: {empty}: not an lmms-eval or lm-eval output (no *_results.json or "
        "results_*.json in it; the harness writes one into its --output_path)")


# ---------------------------------------------------------------- judged metrics, empty outputs, charts
def test_judged_values_carry_their_n_and_coverage(tmp_path: Path) -> None:
    """5 of 8 items judged (62.5%): every judged number shows n=5 and 5/8 with a caveat; the record-carrying metric
    (`ground_s`) gets its n and interval from the records (it had n=0 and no interval)."""
    from tests.reproduce.agentx_runs import write_agentx_run

    scores = [1.0, 0.0, 1.0, 0.5, 1.0, None, None, None]
    write_agentx_run(tmp_path / "a", scores)
    write_agentx_run(tmp_path / "b", scores, model_args="model=Qwen/Qwen3-VL-8B-Instruct")
    _, text = write_multi_report([tmp_path / "a", tmp_path / "b"], tmp_path / "out", n_boot=50)
    assert "0.70 n=5, 5/8 judged ⚠" in text
    assert "Low judge coverage" in text and "ground_s 62%" in text
    rows = {r["key"]: r for r in csv.DictReader((tmp_path / "out" / "scores.csv").open()) if r["model"] ==
            "qwen2_5_vl_7b"}
    ground = rows["metric:ground_s"]
    assert int(ground["n"]) == 5 and (ground["judged"], ground["eligible"]) == ("5", "8")
    assert float(ground["coverage"]) == 0.625 and float(ground["ci_low"]) < 0.7 < float(ground["ci_high"])
    assert rows["metric:exact_match_acc"]["judged"] == ""  # deterministic: no coverage
    assert (tmp_path / "out" / "agentx_profile.png").is_file()


def test_no_judge_gives_a_note_not_an_empty_chart_and_keeps_the_deterministic_metrics(tmp_path: Path) -> None:
    from tests.reproduce.agentx_runs import write_agentx_run

    write_agentx_run(tmp_path / "a", [None] * 4)
    _, text = write_multi_report([tmp_path / "a"], tmp_path / "out", n_boot=50)
    assert not (tmp_path / "out" / "agentx_profile.png").exists()
    assert "No Agent-X profile chart: no metric of the profile has a value" in text
    assert "no item judged (0% on every judged metric)" in text
    assert "metrics computed without a judge" in text and "| qwen2_5_vl_7b | 0.50 |" in text


def test_two_models_write_no_empty_correlations_file(runs: list[Path], tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "correlations.csv").write_text("stale\n")
    _, text = write_multi_report(runs[:2], tmp_path / "out", n_boot=50)
    assert not (tmp_path / "out" / "correlations.csv").exists()
    assert "No `correlations.csv`: rank correlations need at least 3 models" in text
    assert (tmp_path / "out" / "scores.csv").stat().st_size > 100


def test_a_zero_bar_is_drawn_and_differs_from_a_missing_one(tmp_path: Path) -> None:
    from lmms_agentic.report.figures import Series, grouped_bars

    def chart(value: float, name: str) -> bytes:
        series = [Series("m", {"a": (value, value, value), "b": (50.0, 40.0, 60.0)}, {})]
        return grouped_bars(["a", "b"], series, tmp_path / name, "t", "y", (0.0, 100.0)).read_bytes()

    zero, missing, small = chart(0.0, "zero.png"), chart(math.nan, "nan.png"), chart(0.0, "zero2.png")
    assert zero == small and zero != missing


def test_a_limit_run_and_combined_runs_are_marked(tmp_path: Path) -> None:
    from tests.reproduce.agentx_runs import write_agentx_run

    write_run(tmp_path / "a", lambda b, d, i: i % 2 == 0, model_args="model=Qwen/Qwen2.5-VL-7B-Instruct", items=4,
              extra={"config": {"model": "vllm", "model_args": "model=Qwen/Qwen2.5-VL-7B-Instruct", "limit": 4}})
    write_agentx_run(tmp_path / "a", [1.0, 0.0], stamp="20260106_000000", limit=4)
    _, text = write_multi_report([tmp_path / "a"], tmp_path / "out", n_boot=50)
    assert "**PARTIAL RUN**: --limit 4" in text
    assert "combined 2 runs of this model" in text
    assert "### RoboVista" in text and "Agent-X metric profile" in text
