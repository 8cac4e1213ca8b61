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
    with pytest.raises(ReportInputError, match=f"{empty}: not an lmms-eval output"):
        write_multi_report([runs[0], empty], tmp_path / "out")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x_results.json").write_text("{not json")
    with pytest.raises(ReportInputError, match=f"{bad / 'x_results.json'}: not an lmms-eval results file"):
        write_multi_report([bad], tmp_path / "out")
    (bad / "x_results.json").write_text(json.dumps({"something": 1}))
    with pytest.raises(ReportInputError, match="no 'results' table"):
        write_multi_report([bad], tmp_path / "out")
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "report", str(runs[0]), str(empty)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (f"lmms-agentic report: error: {empty}: not an lmms-eval output "
                                                    "(no *_results.json in it; lmms-eval writes one into its "
                                                    "--output_path)")
